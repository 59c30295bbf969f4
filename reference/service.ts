// The reference ingest service: node:http + pg, no framework (it is measured at thousands of requests
// per second on two cores, beside the database). Routing, error mapping and lifecycle live here; each
// endpoint's work is in its own file.
import http from 'node:http';
import pg from 'pg';
import { pgConfig } from '../lib/pg/connection';
import {
  AGGREGATE_PATH,
  CUSTOMERS_PATH,
  HEALTH_PATH,
  INGEST_PATH,
  INVOICES_PATH,
  MAX_BODY_BYTES,
} from '../lib/protocol/hardcount-api';
import { aggregate, parseAggregateQuery } from './aggregate';
import { resolveConfig, type ResolvedConfig, type ServiceConfig } from './config';
import { health } from './health';
import { HttpError, readBody, sendJson } from './http-util';
import { ingestRequest } from './ingest';
import { bearerKey, hashApiKey } from './keys';
import { listCustomers, listInvoices, parseLimit } from './lists';
import { RequestPath } from './request-tx';
import { CpuWork } from './cpu-work';
import { PreciseWait } from './precise-wait';
import { SlowRecovery } from './slow-recovery';
import { dropLateEvents } from './drop-late';
import { parseIngestBody } from './validate';

export interface RunningService {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  config: Omit<ResolvedConfig, 'databaseUrl'>;
  /** Stop accepting, drop open connections, end the pool. Idempotent. */
  close(): Promise<void>;
}

/** The application_name of the service's connections (visible in pg_stat_activity). */
export const APPLICATION_NAME = 'hardcount-reference';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, params: URLSearchParams) => Promise<void>;

/** Start the service: connect the pool (fails fast on a bad URL or password), then listen. */
export async function startService(config: ServiceConfig): Promise<RunningService> {
  const cfg = resolveConfig(config);
  // TLS as the URL says (sslmode=verify-full on RDS and the local target's RDS-fidelity mode).
  const pool = new pg.Pool(
    pgConfig(cfg.databaseUrl, {
      max: cfg.poolSize,
      application_name: APPLICATION_NAME,
      idleTimeoutMillis: 30_000,
    }),
  );
  // An idle connection that dies (server restart) must not crash the process; the pool replaces it.
  pool.on('error', (err) => console.error(`reference service: idle database connection lost: ${err.message}`));
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error(`reference service: cannot reach the database: ${(err as Error).message}`);
  }

  const path = new RequestPath(pool, cfg.lastUsed);
  const auth = (req: http.IncomingMessage): string => {
    const key = bearerKey(req.headers.authorization);
    if (!key) throw new HttpError(401, 'missing API key: send Authorization: Bearer <key>', 'authorization');
    return hashApiKey(key);
  };

  // The slowed build's switch (HC_ADDED_DELAY_MS): the wait comes before any work, so each request
  // takes exactly that much longer and holds no connection or lock meanwhile.
  // The slow-recovering build's (HC_SLOW_RECOVERY_S, slow-recovery.ts): a delay after a burst,
  // added the same way.
  // The finer slowed builds (issue 45), after it and before the work too: a wait of HC_ADDED_WAIT_US
  // on a helper thread (precise-wait.ts: no CPU, the event loop free), then HC_ADDED_CPU_US of CPU work
  // on the event loop (cpu-work.ts, calibrated here, at start-up).
  const recovery = cfg.slowRecoveryS > 0 ? new SlowRecovery({ burstRps: cfg.burstRps, recoveryS: cfg.slowRecoveryS, delayMs: cfg.slowRecoveryMs }) : null;
  const cpu = cfg.addedCpuUs > 0 ? new CpuWork(cfg.addedCpuUs) : null;
  const waiter = cfg.addedWaitUs > 0 ? new PreciseWait(cfg.addedWaitUs) : null;
  if (waiter) await waiter.warm();
  const delayed = (h: Handler): Handler =>
    cfg.addedDelayMs > 0 || recovery || cpu || waiter ? async (req, res, params) => {
      const wait = cfg.addedDelayMs + (recovery?.arrive() ?? 0);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (waiter) await waiter.wait();
      cpu?.run();
      await h(req, res, params);
    } : h;

  const routes: Record<string, Partial<Record<string, Handler>>> = {
    [INGEST_PATH]: {
      POST: delayed(async (req, res) => {
        const keyHash = auth(req);
        // Validation needs no database: a bad batch is refused before a connection is taken.
        const events = parseIngestBody(await readBody(req, MAX_BODY_BYTES));
        // The lossy build's test switch (HC_DROP_LATE_MS, drop-late.ts): late events answered, never written.
        const kept = cfg.dropLateMs > 0 ? dropLateEvents(events, Date.now(), cfg.dropLateMs) : events;
        const out = await ingestRequest(path, keyHash, kept, { insert: cfg.insert, rollup: cfg.aggregate === 'rollup', extraWalBytes: cfg.extraWalBytes });
        sendJson(res, 201, kept === events ? out : { ...out, accepted: events.length });
      }),
    },
    [AGGREGATE_PATH]: {
      GET: delayed(async (req, res, params) => {
        const keyHash = auth(req);
        const q = parseAggregateQuery(params);
        sendJson(res, 200, await path.run(keyHash, (client) => aggregate(client, q, cfg.aggregate)));
      }),
    },
    [CUSTOMERS_PATH]: {
      GET: delayed(async (req, res, params) => {
        const keyHash = auth(req);
        const limit = parseLimit(params);
        sendJson(res, 200, await path.run(keyHash, (client) => listCustomers(client, limit)));
      }),
    },
    [INVOICES_PATH]: {
      GET: delayed(async (req, res, params) => {
        const keyHash = auth(req);
        const limit = parseLimit(params);
        sendJson(res, 200, await path.run(keyHash, (client) => listInvoices(client, limit)));
      }),
    },
    [HEALTH_PATH]: {
      // A key is optional here: with one, the answer comes from inside that key's request transaction.
      GET: async (req, res) => {
        const key = bearerKey(req.headers.authorization);
        const out = key ? await path.run(hashApiKey(key), (client) => health(client)) : await health(pool);
        // The switches it runs with, so a rig that changes them (variants) can read them back; the
        // added delay, CPU, wait and WAL, the slow recovery and the build only when set (a default build's answer is as it always was).
        const settings = { lastUsed: cfg.lastUsed, insert: cfg.insert, aggregate: cfg.aggregate, ...(cfg.addedDelayMs > 0 ? { addedDelayMs: String(cfg.addedDelayMs) } : {}),
          ...(cfg.slowRecoveryS > 0 ? { slowRecoveryS: String(cfg.slowRecoveryS), burstRps: String(cfg.burstRps), slowRecoveryMs: String(cfg.slowRecoveryMs) } : {}),
          ...(cfg.dropLateMs > 0 ? { dropLateMs: String(cfg.dropLateMs) } : {}),
          ...(cfg.addedCpuUs > 0 ? { addedCpuUs: String(cfg.addedCpuUs) } : {}),
          ...(cfg.addedWaitUs > 0 ? { addedWaitUs: String(cfg.addedWaitUs) } : {}),
          ...(cfg.extraWalBytes > 0 ? { extraWalBytes: String(cfg.extraWalBytes) } : {}),
        };
        sendJson(res, 200, { ...out, settings, ...(cfg.build ? { build: cfg.build } : {}) });
      },
    },
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const pathname = q < 0 ? raw : raw.slice(0, q);
    const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
    const route = routes[pathname];
    try {
      if (!route) throw new HttpError(404, `no route ${pathname}`);
      const handler = route[req.method ?? 'GET'];
      if (!handler) {
        res.setHeader('allow', Object.keys(route).join(', '));
        throw new HttpError(405, `${req.method} not allowed on ${pathname}`);
      }
      await handler(req, res, params);
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof HttpError) {
        if (err.closeConnection) res.setHeader('connection', 'close');
        sendJson(res, err.status, err.body());
        return;
      }
      const code = (err as { code?: string }).code;
      if (code === '40P01' || code === '40001') {
        // a deadlock or serialization failure with a concurrent request (e.g. replays of the same keys in
        // different orders): nothing was written, and the client may retry
        sendJson(res, 503, { error: 'conflict with a concurrent request; nothing was written, retry' });
        return;
      }
      // The message is the database's or node's; neither carries the connection URL or the API key.
      console.error(`reference service: ${req.method} ${pathname}: ${(err as Error).message}`);
      sendJson(res, 500, { error: 'internal error' });
    }
  };

  const server = http.createServer((req, res) => void handle(req, res));
  // Load generators hold keep-alive connections for a whole repeat: do not close them between requests.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port, cfg.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (err: unknown) => {
    await waiter?.close();
    await pool.end().catch(() => undefined);
    throw err;
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : cfg.port;
  const hostPart = cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;

  let closing: Promise<void> | undefined;
  const { databaseUrl: _secret, ...visible } = cfg;
  return {
    url: `http://${hostPart}:${port}`,
    port,
    config: visible,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await waiter?.close();
        await pool.end();
      })();
      return closing;
    },
  };
}

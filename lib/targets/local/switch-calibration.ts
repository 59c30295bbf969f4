// The slowed builds' switches measured against truth (issue 45): the real reference service, as the
// rig starts it (reference/main.ts in a process of its own, configured by HC_* variables), against a
// real PostgreSQL database, with the switch off and on side by side.
//
// Service time: two services, one off and one on, each timed by one client in closed loop (a request,
// its answer, the next), in blocks that alternate off/on then on/off, after a warm-up of each; a new
// pair of services for every pair of blocks (a start moves latency: see calibrateSwitch). The
// round trip stands for the service time: the client, the loopback and the off side's own work are
// the same on both sides and cancel in the shift (lib/protocol/switch-calibration.ts).
// The WAL switch also: blocks of events written by a service started for the block and stopped after
// it, pg_stat_wal's wal_bytes read before and after (a backend publishes its WAL counters as it exits;
// a running one at most once a second), off and on alternating, after a CHECKPOINT and a block a side
// that is not measured (see calibrateWal).
// pg_stat_wal counts the whole cluster: nothing else may write meanwhile (another service on the
// database may stay open, idle), so a block's bytes are its events' (plus autovacuum's, when it runs:
// bench/switches.ts's own cluster runs without it).
//
// One request kind per calibration: the CPU and wait switches (and HC_ADDED_DELAY_MS) add their cost
// before any work, whatever the endpoint, so they are timed on the least noisy one, a one-row read
// (GET /v1/customers?limit=1: no commit to flush); the WAL switch on ingest of one event, the request
// whose WAL it adds to. Kept modest for a shared host: one client, a few thousand requests.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { pgConfig } from '../../pg/connection';
import { HEALTH_PATH } from '../../protocol/hardcount-api';
import { summarizeLatency, summarizeWal, type Block, type SlowedBuildSwitch, type SwitchCalibration, type WalBlock } from '../../protocol/switch-calibration';
import { projectRoot } from '../../tools/paths';
import { createFixtures } from '../bringup/fixtures';
import { APPLICATION_NAME } from '../../../reference/service';

export interface SwitchCalibrationDb {
  /** The app role's URL (the service's HC_DATABASE_URL). */
  appUrl: string;
  /** The owner's (fixtures). */
  ownerUrl: string;
  /** A role that may read pg_stat_wal and every session of pg_stat_activity, and run CHECKPOINT (the superuser, or one in pg_monitor and pg_checkpoint). */
  monitorUrl: string;
}

export interface SwitchCalibrationOptions {
  /** Blocks a side (default 10). */
  blocks?: number;
  /** Timed requests per block (default 150). */
  perBlock?: number;
  /** Untimed requests to each service first (default 50). */
  warmup?: number;
  /** The WAL switch: blocks a side (default 6) and events per block (default 200). */
  walBlocks?: number;
  walEventsPerBlock?: number;
  log?: (line: string) => void;
}

export interface ReferenceProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** reference/main.ts in its own process with `env` over HC_DATABASE_URL and a free port; resolves once it listens. */
export async function spawnReference(databaseUrl: string, env: Record<string, string>): Promise<ReferenceProcess> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT' && !/^HC_/.test(k)));
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'reference', 'main.ts')], {
    cwd: projectRoot,
    env: { ...inherited, ...env, HC_DATABASE_URL: databaseUrl, HC_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (l) => resolve(l));
    void exited.then((code) => reject(new Error(`the reference service exited ${code} before listening: ${stderr.trim()}`)));
  });
  const { listening, pid } = JSON.parse(line) as { listening: string; pid: number };
  return {
    url: listening,
    pid,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** One client, closed loop: a keep-alive connection of its own. */
class Client {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private n = 0;

  constructor(
    private readonly base: string,
    private readonly apiKey: string,
    private readonly customer: string,
    private readonly kind: 'read' | 'ingest',
    private readonly tag: string,
  ) {}

  /** One request; resolves with its round trip (µs) and, for ingest, the events it created. */
  once(): Promise<{ us: number; created: number }> {
    const ingest = this.kind === 'ingest';
    const body = ingest ? JSON.stringify({ events: [{ customer_id: this.customer, meter: 'api_calls', quantity: 1, idempotency_key: `${this.tag}-${this.n++}` }] }) : undefined;
    const url = new URL(ingest ? '/v1/usage-events' : '/v1/customers?limit=1', this.base);
    return new Promise((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      const req = http.request(
        url,
        {
          method: ingest ? 'POST' : 'GET',
          agent: this.agent,
          headers: { authorization: `Bearer ${this.apiKey}`, ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const us = Number(process.hrtime.bigint() - t0) / 1e3;
            const text = Buffer.concat(chunks).toString();
            if (res.statusCode !== (ingest ? 201 : 200)) return reject(new Error(`${req.method} ${url.pathname} answered ${res.statusCode}: ${text.slice(0, 300)}`));
            resolve({ us, created: ingest ? (JSON.parse(text) as { created: number }).created : 0 });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  async run(n: number): Promise<{ times: number[]; created: number }> {
    const times: number[] = [];
    let created = 0;
    for (let i = 0; i < n; i++) {
      const r = await this.once();
      times.push(r.us);
      created += r.created;
    }
    return { times, created };
  }

  close(): void {
    this.agent.destroy();
  }
}

async function reportedSettings(url: string): Promise<Record<string, string>> {
  const res = await fetch(new URL(HEALTH_PATH, url));
  const body = (await res.json()) as { settings?: Record<string, string> };
  return body.settings ?? {};
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The backend pids of the reference service's sessions open now. */
async function serviceSessions(monitor: pg.Client): Promise<Set<number>> {
  const r = await monitor.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [APPLICATION_NAME]);
  return new Set(r.rows.map((x) => x.pid));
}

/**
 * The sessions a stopped service opened (any not in `before`) are gone, and have published their WAL
 * counters as they exited. Sessions of another reference service on the database (a rig's own) are
 * left alone: they idle while the calibration writes.
 */
async function sessionsGone(monitor: pg.Client, before: ReadonlySet<number>): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const left = [...(await serviceSessions(monitor))].filter((pid) => !before.has(pid));
    if (left.length === 0) break;
    if (Date.now() > deadline) throw new Error(`backends ${left.join(', ')} of the stopped reference service still open 10 s after it stopped`);
    await sleep(50);
  }
}

/**
 * pg_stat_wal's wal_bytes once it has settled: a backend leaves pg_stat_activity before its exit hook
 * publishes its counters, so read until two readings 200 ms apart agree (at most 5 s).
 */
async function settledWalBytes(monitor: pg.Client): Promise<number> {
  let last = await walBytes(monitor);
  for (const deadline = Date.now() + 5000; Date.now() < deadline; ) {
    await sleep(200);
    const now = await walBytes(monitor);
    if (now === last) break;
    last = now;
  }
  return last;
}

async function walBytes(monitor: pg.Client): Promise<number> {
  return Number((await monitor.query<{ b: string }>('SELECT wal_bytes::text AS b FROM pg_stat_wal')).rows[0].b);
}

/**
 * Measures one switch at one setting (see the header). The database is the migrated reference schema;
 * a tenant of its own ("switch-calibration") is made or reused, its events keep piling up.
 */
export async function calibrateSwitch(db: SwitchCalibrationDb, sw: SlowedBuildSwitch, setting: number, o: SwitchCalibrationOptions = {}): Promise<SwitchCalibration> {
  const blocks = o.blocks ?? 10;
  const perBlock = o.perBlock ?? 150;
  const warmup = o.warmup ?? 50;
  const log = o.log ?? (() => undefined);
  const fx = await createFixtures(db.ownerUrl, { tenantName: 'switch-calibration', customers: 1 });
  const apiKey = fx.apiKey.reveal();
  const kind = sw === 'HC_EXTRA_WAL_BYTES' ? 'ingest' : 'read';
  const request = kind === 'ingest' ? 'POST /v1/usage-events (1 event)' : 'GET /v1/customers?limit=1';
  const tag = `swcal-${sw}-${setting}-${Date.now().toString(36)}`;
  const onEnv = { [sw]: String(setting) };

  log(`${sw}=${setting}: ${blocks} blocks a side of ${perBlock} ${request}, off and on alternating, each pair of blocks on services started for it`);
  const offBlocks: Block[] = [];
  const onBlocks: Block[] = [];
  let reported: Record<string, string> = {};
  // A fresh pair of services for every pair of blocks. A service's own start moves its latency: on a
  // quiet host, repeats of one service process spread ~4 % in p50 and repeats each after a restart ~11 %
  // (issue 45's one-process run beside its A/A study). With one process a side, that start would be a
  // single draw folded into the switch's effect, and the blocks' interval would not show it; a start per
  // block makes it noise the blocks average and the interval covers.
  for (let b = 0; b < blocks; b++) {
    const [off, on] = await Promise.all([spawnReference(db.appUrl, {}), spawnReference(db.appUrl, onEnv)]);
    try {
      if (b === 0) reported = await reportedSettings(on.url);
      // Keys of equal length on both sides ("f" and "n"): a byte more per key is a byte more of heap and
      // index WAL per event, and a different index tuple alignment now and then.
      const offClient = new Client(off.url, apiKey, fx.customers[0], kind, `${tag}-${b}-f`);
      const onClient = new Client(on.url, apiKey, fx.customers[0], kind, `${tag}-${b}-n`);
      try {
        await offClient.run(warmup);
        await onClient.run(warmup);
        const order: Array<[Client, Block[]]> = b % 2 === 0 ? [[offClient, offBlocks], [onClient, onBlocks]] : [[onClient, onBlocks], [offClient, offBlocks]];
        for (const [client, into] of order) into.push((await client.run(perBlock)).times);
      } finally {
        offClient.close();
        onClient.close();
      }
    } finally {
      await Promise.all([off.stop(), on.stop()]);
    }
  }
  const out = summarizeLatency(sw, setting, request, offBlocks, onBlocks, reported);
  if (sw === 'HC_EXTRA_WAL_BYTES') out.wal = await calibrateWal(db, onEnv, apiKey, fx.customers[0], `${tag}-wal`, o);
  return out;
}

async function calibrateWal(db: SwitchCalibrationDb, onEnv: Record<string, string>, apiKey: string, customer: string, tag: string, o: SwitchCalibrationOptions): Promise<ReturnType<typeof summarizeWal>> {
  const blocks = o.walBlocks ?? 6;
  const events = o.walEventsPerBlock ?? 200;
  o.log?.(`${Object.keys(onEnv)[0]}: ${blocks} WAL blocks a side of ${events} events, each by a service started for it`);
  const monitor = new pg.Client(pgConfig(db.monitorUrl, { application_name: 'rig-switch-calibration' }));
  await monitor.connect();
  const offBlocks: WalBlock[] = [];
  const onBlocks: WalBlock[] = [];
  try {
    // Full-page images are the noise of WAL per event: the first change of a page after a checkpoint
    // logs the whole page. Measured with pg_walinspect, a CHECKPOINT before every block left 1-140 B
    // of them per event varying block to block (which leaf pages a block's keys reached first), more
    // than the effects to be measured. So one CHECKPOINT, then a block a side unmeasured, which pays
    // them for the pages the measured blocks go on touching; a checkpoint that falls in a measured
    // block later (checkpoint_timeout) is one block's outlier, which the rank interval tolerates.
    await monitor.query('CHECKPOINT');
    const unmeasured: WalBlock[] = [];
    for (let b = -1; b < blocks; b++) {
      const order: Array<['off' | 'on', WalBlock[]]> = b < 0 ? [['off', unmeasured], ['on', unmeasured]] : b % 2 === 0 ? [['off', offBlocks], ['on', onBlocks]] : [['on', onBlocks], ['off', offBlocks]];
      for (const [side, into] of order) {
        const others = await serviceSessions(monitor);
        const before = await walBytes(monitor);
        const svc = await spawnReference(db.appUrl, side === 'on' ? onEnv : {});
        const client = new Client(svc.url, apiKey, customer, 'ingest', `${tag}-${side === 'on' ? 'n' : 'f'}-${b}`);
        let created = 0;
        try {
          created = (await client.run(events)).created;
        } finally {
          client.close();
          await svc.stop();
        }
        await sessionsGone(monitor, others);
        into.push({ walBytes: (await settledWalBytes(monitor)) - before, events: created });
      }
    }
  } finally {
    await monitor.end();
  }
  return summarizeWal(offBlocks, onBlocks);
}

/** Each setting in turn (never two at once: the host is shared, and they would time each other). */
export async function calibrateSwitches(db: SwitchCalibrationDb, settings: ReadonlyArray<{ switch: SlowedBuildSwitch; setting: number }>, o: SwitchCalibrationOptions = {}): Promise<SwitchCalibration[]> {
  const out: SwitchCalibration[] = [];
  for (const s of settings) out.push(await calibrateSwitch(db, s.switch, s.setting, o));
  return out;
}

// Lock wait, provoked: a session of the rig holds the API key's row (the row every request updates in
// every-request mode) while a batch of request sessions run the request path's own UPDATE of it, and
// as many sessions of another role wait on the same row (the rig's own sessions and anyone else's,
// which a correct sampler leaves out of the requests' waits). Each request session times its own
// blocked seconds: that sum is the truth. The rig's figure is the DB sampler's snapshots read through
// the page's summarizeDb: the requests' Lock:transactionid / Lock:tuple backend-samples per snapshot,
// times the sampler's span.
import path from 'node:path';
import pg from 'pg';
import { summarizeDb } from '../../evidence/report/db-summary';
import { isSampleError } from '../../evidence/records';
import { pgConfig } from '../../pg/connection';
import { judgeLock, type DbCaseResult } from '../../protocol/db-calibration';
import type { ScratchDb } from './scratch-db';
import { sampleDuring, type ProvokedRegressions } from './sampling';

export interface LockCaseOptions {
  /** Request sessions blocked (default 4) and other sessions blocked beside them (default 4). */
  requests?: number;
  others?: number;
  /** Seconds the row is held once every waiter is blocked (default 3). */
  holdSeconds?: number;
  dir: string;
  regressions?: ProvokedRegressions;
}

const TOUCH = 'UPDATE api_keys SET last_used_at = now() WHERE id = $1';

async function connect(url: string, name: string): Promise<pg.Client> {
  const c = new pg.Client(pgConfig(url, { application_name: name }));
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

export async function lockCase(db: ScratchDb, opts: LockCaseOptions): Promise<DbCaseResult> {
  const nRequests = opts.requests ?? 4;
  const nOthers = opts.others ?? 4;
  const hold = opts.holdSeconds ?? 3;
  const clients: pg.Client[] = [];
  try {
    const locker = await connect(db.url, 'rig-dbcal-locker');
    clients.push(locker);
    const requests = await Promise.all(Array.from({ length: nRequests }, () => connect(db.requestUrl, 'hardcount-dbcal')));
    clients.push(...requests);
    // Another role's sessions, not named rig-*: 'other client' to the sampler, never a request.
    const others = await Promise.all(Array.from({ length: nOthers }, () => connect(db.url, 'dbcal-other')));
    clients.push(...others);
    for (const r of requests) await r.query("SELECT set_config('app.tenant_id', $1, false), set_config('app.livemode', 'false', false)", [String(db.tenantId)]);
    const watcher = await connect(db.url, 'rig-dbcal-watch');
    clients.push(watcher);

    const sampler = await sampleDuring(db.url, db.requestRole, hold + 1, path.join(opts.dir, 'lock-db-samples.jsonl'), opts.regressions);
    await locker.query('BEGIN');
    await locker.query(TOUCH, [db.apiKeyId]);
    const blocked = requests.map(async (c) => {
      const t0 = performance.now();
      await c.query(TOUCH, [db.apiKeyId]);
      return (performance.now() - t0) / 1000;
    });
    const othersDone = others.map((c) => c.query(TOUCH, [db.apiKeyId]));
    // Every waiter blocked (seen by PostgreSQL's lock table, not by the sampler), then the known hold.
    const want = nRequests + nOthers;
    for (let i = 0; i < 200; i++) {
      const n = Number((await watcher.query<{ n: string }>("SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n);
      if (n >= want) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, hold * 1000));
    await locker.query('COMMIT');
    const seconds = await Promise.all(blocked);
    await Promise.all(othersDone);
    const rows = await sampler.stop();

    const snaps = rows.filter((r) => !isSampleError(r)).map((r) => Date.parse(r.t)).sort((a, b) => a - b);
    const gap = snaps.length > 1 ? (snaps[snaps.length - 1] - snaps[0]) / (snaps.length - 1) : 0;
    const spanSeconds = snaps.length ? (snaps[snaps.length - 1] - snaps[0] + gap) / 1000 : 0;
    const summary = summarizeDb(rows, null, null);
    const lockSamples = summary.waits.filter((w) => w.event === 'Lock:transactionid' || w.event === 'Lock:tuple').reduce((s, w) => s + w.count, 0);
    return judgeLock({
      knownSeconds: seconds.reduce((a, b) => a + b, 0),
      sessions: nRequests,
      lockSamples,
      backendSamples: summary.backend_samples,
      snapshots: summary.rows,
      spanSeconds,
      topEvent: summary.waits[0]?.event ?? null,
    });
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}

// The service's three switches, each measured against its other side on a real database:
// HC_LAST_USED (#818's hot row and its fix), HC_INSERT (per-event statements vs one multi-row INSERT,
// #823) and HC_AGGREGATE (the linear scan vs the daily rollup, #819). And the slowed build
// (HC_ADDED_DELAY_MS, issue 36): every data request takes at least its delay, and /healthz says so.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import pg from 'pg';
import type { AggregateResponse, IngestResponse } from '../../lib/protocol/hardcount-api';
import { createFixtures, type Fixtures } from '../../lib/targets/bringup/fixtures';
import { rebuildRollup } from '../../reference/rollup';
import { startService, type RunningService } from '../../reference/service';
import type { ServiceConfig } from '../../reference/config';
import { hardcountDb, type HardcountDb } from '../harness/hardcount';
import { api, ev } from './api-client';
import { rollupMismatches } from './rollup-recount';

// pg_stat_statements counts the INSERT statements each insert mode issues.
const dbReady = hardcountDb({ parameters: { shared_preload_libraries: 'pg_stat_statements' } });
let db: HardcountDb;
let owner: pg.Client;

before(async () => {
  db = await dbReady;
  owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  db.defer(() => owner.end());
});

async function service(config: Omit<ServiceConfig, 'databaseUrl'>): Promise<RunningService> {
  const svc = await startService({ databaseUrl: db.appUrl, ...config });
  db.defer(() => svc.close());
  return svc;
}

async function lastUsed(keyId: string): Promise<Date | null> {
  const r = await owner.query<{ t: Date | null }>('SELECT last_used_at AS t FROM api_keys WHERE id = $1', [keyId]);
  return r.rows[0].t;
}

test('HC_LAST_USED=every-request writes last_used_at on every request', async () => {
  const fx = await createFixtures(db.ownerUrl, { tenantName: 'lu-every', customers: 1 });
  const svc = await service({ lastUsed: 'every-request' });
  const c = api(svc.url, fx.apiKey.reveal());
  const seen: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await c.post('/v1/usage-events', { events: [ev('cus_0001', 1, `lu-every-${i}`)] });
    assert.equal(res.status, 201);
    seen.push((await lastUsed(fx.apiKeyId))!.getTime());
  }
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `request ${i} moved last_used_at: ${seen}`);
  // reads count too
  await c.get('/v1/customers');
  assert.ok((await lastUsed(fx.apiKeyId))!.getTime() > seen[seen.length - 1]);
});

test('HC_LAST_USED=per-minute (default) writes it once, then not again within the minute', async () => {
  const fx = await createFixtures(db.ownerUrl, { tenantName: 'lu-minute', customers: 1 });
  assert.equal(await lastUsed(fx.apiKeyId), null);
  const svc = await service({});
  assert.equal(svc.config.lastUsed, 'per-minute');
  const c = api(svc.url, fx.apiKey.reveal());
  await c.post('/v1/usage-events', { events: [ev('cus_0001', 1, 'lu-minute-0')] });
  const first = await lastUsed(fx.apiKeyId);
  assert.ok(first, 'the first request wrote it');
  for (let i = 1; i < 4; i++) await c.post('/v1/usage-events', { events: [ev('cus_0001', 1, `lu-minute-${i}`)] });
  assert.equal((await lastUsed(fx.apiKeyId))!.getTime(), first!.getTime());
  // over a minute old in the database: a process that has not written it this minute writes it again
  await owner.query(`UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE id = $1`, [fx.apiKeyId]);
  const aged = await lastUsed(fx.apiKeyId);
  await c.get('/v1/customers');
  assert.equal((await lastUsed(fx.apiKeyId))!.getTime(), aged!.getTime(), 'this process wrote it under a minute ago');
  const other = await service({});
  await api(other.url, fx.apiKey.reveal()).get('/v1/customers');
  assert.ok((await lastUsed(fx.apiKeyId))!.getTime() > aged!.getTime());
});

test('the hot row: every-request waits on a lock held on the key row, per-minute does not', async () => {
  const fx = await createFixtures(db.ownerUrl, { tenantName: 'lu-hot', customers: 1 });
  const every = await service({ lastUsed: 'every-request' });
  const minute = await service({ lastUsed: 'per-minute' });
  // a first request so the per-minute service has a fresh last_used_at
  await api(minute.url, fx.apiKey.reveal()).post('/v1/usage-events', { events: [ev('cus_0001', 1, 'hot-0')] });
  const locker = new pg.Client({ connectionString: db.ownerUrl });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [fx.apiKeyId]);
    let everyDone = false;
    const blocked = api(every.url, fx.apiKey.reveal())
      .post('/v1/usage-events', { events: [ev('cus_0001', 1, 'hot-1')] })
      .then((r) => {
        everyDone = true;
        return r;
      });
    const free = await api(minute.url, fx.apiKey.reveal()).post('/v1/usage-events', { events: [ev('cus_0001', 1, 'hot-2')] });
    assert.equal(free.status, 201, 'per-minute does not touch the locked row');
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(everyDone, false, 'every-request waits for the row lock');
    // (as the superuser: other roles' wait events and query texts are hidden from the owner)
    const sup = new pg.Client({ connectionString: db.superUrl });
    await sup.connect();
    const waiting = await sup.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE api_keys%'`,
    );
    await sup.end();
    assert.equal(waiting.rows[0].n, '1');
    await locker.query('COMMIT');
    assert.equal((await blocked).status, 201);
  } finally {
    await locker.end();
  }
});

async function insertCalls(): Promise<Map<string, number>> {
  // as the superuser: pg_stat_statements hides other roles' statement texts
  const sup = new pg.Client({ connectionString: db.superUrl });
  await sup.connect();
  const r = await sup.query<{ query: string; calls: string }>(
    `SELECT query, calls::text AS calls FROM pg_stat_statements WHERE query LIKE '%INSERT INTO usage_events%'`,
  );
  await sup.end();
  const out = new Map<string, number>();
  for (const row of r.rows) {
    const kind = row.query.includes('ON CONFLICT') ? 'speculative' : row.query.includes('jsonb_to_recordset') ? 'multi-row' : 'per-event';
    out.set(kind, (out.get(kind) ?? 0) + Number(row.calls));
  }
  return out;
}

test('HC_INSERT=multi-row writes exactly the rows per-event writes, with one INSERT per batch instead of one per event', async () => {
  const sup = new pg.Client({ connectionString: db.superUrl });
  await sup.connect();
  await sup.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await sup.query('SELECT pg_stat_statements_reset()');
  await sup.end();

  const t1 = await createFixtures(db.ownerUrl, { tenantName: 'ins-per-event', customers: 7, unitCost: '0.0003' });
  const t2 = await createFixtures(db.ownerUrl, { tenantName: 'ins-multi-row', customers: 7, unitCost: '0.0003' });
  const perEvent = api((await service({ insert: 'per-event' })).url, t1.apiKey.reveal());
  const multiRow = api((await service({ insert: 'multi-row' })).url, t2.apiKey.reveal());
  const batch1 = Array.from({ length: 50 }, (_, i) =>
    ev(`cus_000${1 + ((i * 3) % 7)}`, i * 13, `k-${i}`, i % 5 === 0 ? { rig_run: 'ins', n: i, tags: ['a', `b${i}`] } : undefined),
  );
  batch1.push(ev('cus_0002', 999, 'k-7')); // a key repeated inside the batch
  const batch2 = [...batch1.slice(40), ev('cus_0007', 5, 'k-new')]; // mostly replays
  const answers: Array<[IngestResponse, IngestResponse]> = [];
  for (const b of [batch1, batch2]) {
    const x = await perEvent.post<IngestResponse>('/v1/usage-events', { events: b });
    const y = await multiRow.post<IngestResponse>('/v1/usage-events', { events: b });
    assert.equal(x.status, 201);
    assert.equal(y.status, 201);
    answers.push([x.body, y.body]);
  }
  assert.deepEqual(answers[0][0], { accepted: 51, created: 50, duplicates: 1 });
  assert.deepEqual(answers[1][0], { accepted: 12, created: 1, duplicates: 11 });
  for (const [x, y] of answers) assert.deepEqual(y, x);

  const rows = async (tenant: string) =>
    (
      await owner.query(
        `SELECT c.external_id, m.key AS meter, e.quantity::text, e.idempotency_key, e.properties, e.livemode, e.cost::text
           FROM usage_events e JOIN customers c ON c.id = e.customer_id JOIN meters m ON m.id = e.meter_id
          WHERE e.tenant_id = $1::bigint ORDER BY e.idempotency_key`,
        [tenant],
      )
    ).rows;
  const r1 = await rows(t1.tenantId);
  assert.equal(r1.length, 51);
  assert.deepEqual(await rows(t2.tenantId), r1);
  assert.ok(r1.every((r) => r.livemode === true));

  const calls = await insertCalls();
  // Replays and repeats inside a batch are found by the request's key lookup and not inserted at all.
  assert.equal(calls.get('per-event'), 51, 'one INSERT statement per new event (50 + 1)');
  assert.equal(calls.get('multi-row'), 2, 'one INSERT statement per batch');
  assert.equal(calls.get('speculative'), undefined, 'no INSERT ... ON CONFLICT: no speculative insertion');
});

// --- HC_AGGREGATE ---

let rollupFx: Fixtures;
let scanApi: ReturnType<typeof api>;
let rollupApi: ReturnType<typeof api>;
const CUSTOMERS = ['cus_0001', 'cus_0002', 'cus_0003', 'cus_0004'];

async function bothAnswers(query: string): Promise<[AggregateResponse, AggregateResponse]> {
  const s = await scanApi.get<AggregateResponse>('/v1/usage-events/aggregate?' + query);
  const r = await rollupApi.get<AggregateResponse>('/v1/usage-events/aggregate?' + query);
  assert.equal(s.status, 200, JSON.stringify(s.body));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return [s.body, r.body];
}

test('HC_AGGREGATE=rollup: the ingest path maintains usage_daily_rollup, and the rollup answer equals the scan', async () => {
  rollupFx = await createFixtures(db.ownerUrl, { tenantName: 'agg', customers: 4 });
  const key = rollupFx.apiKey.reveal();
  scanApi = api((await service({ aggregate: 'scan' })).url, key);
  rollupApi = api((await service({ aggregate: 'rollup' })).url, key);
  const rollupMulti = api((await service({ aggregate: 'rollup', insert: 'multi-row' })).url, key);
  // concurrent batches over overlapping customers, in different orders, through both insert modes
  const posts = Array.from({ length: 24 }, (_, r) => {
    const events = Array.from({ length: 10 }, (_, i) => ev(CUSTOMERS[(r + i * (r % 2 ? 1 : 3)) % 4], r * 10 + i, `agg-${r}-${i}`));
    events.push(ev(CUSTOMERS[r % 4], 1, `agg-${r}-0`)); // a duplicate, not counted
    return (r % 2 ? rollupApi : rollupMulti).post<IngestResponse>('/v1/usage-events', { events });
  });
  const answers = await Promise.all(posts);
  assert.ok(answers.every((a) => a.status === 201 && a.body.created === 10), JSON.stringify(answers.map((a) => a.body)));

  for (const c of CUSTOMERS) {
    const [s, r] = await bothAnswers(`customer_id=${c}`);
    assert.deepEqual(r, s);
    assert.equal(s.meters[0].count, 60);
  }
  assert.deepEqual(await rollupMismatches(owner, rollupFx.tenantId), [], 'the rollup matches a recount of usage_events');
});

test('HC_AGGREGATE=rollup over seeded history: equal to the scan for every window, edges included', async () => {
  // History written like a seeder does it (as the owner, app.livemode set), then the rollup rebuilt.
  await owner.query('BEGIN');
  await owner.query(`SET LOCAL app.livemode = 'true'`);
  await owner.query(
    `INSERT INTO usage_events (tenant_id, customer_id, meter_id, quantity, idempotency_key, occurred_at)
     SELECT $1::bigint, c.id, m.id, (g % 17) + 1, 'hist-' || c.external_id || '-' || g,
            timestamptz '2026-08-10T00:00:00Z' + g * interval '37 minutes'
       FROM customers c, meters m, generate_series(0, 999) g
      WHERE c.tenant_id = $1::bigint AND m.tenant_id = $1::bigint AND c.livemode AND m.livemode`,
    [rollupFx.tenantId],
  );
  await owner.query('COMMIT');
  assert.ok((await rebuildRollup(db.ownerUrl, rollupFx.tenantId)) > 0);

  const windows = [
    '',
    '&from=2026-08-11T00:00:00Z',
    '&to=2026-08-13T00:00:00Z',
    '&from=2026-08-11T06:15:00Z&to=2026-08-13T18:40:00Z',
    '&from=2026-08-12T01:00:00Z&to=2026-08-12T20:00:00Z',
    '&from=2026-08-11T23:59:59.999Z&to=2026-08-12T00:00:00.001Z',
    '&from=2026-08-10T12:00:00Z',
    '&to=2026-08-14T05:00:00Z',
    '&from=2026-08-12T10:00:00Z&to=2026-08-12T10:00:00Z',
    '&from=2026-08-10T00:00:00Z&to=2026-08-11T00:00:00Z',
    '&from=2026-08-10T23:00:00%2B05:30&to=2026-08-13T01:00:00-02:00',
  ];
  for (const c of CUSTOMERS) {
    for (const w of windows) {
      const [s, r] = await bothAnswers(`customer_id=${c}${w}`);
      assert.deepEqual(r, s, `${c}${w}`);
    }
  }
  const [s] = await bothAnswers('customer_id=cus_0001&from=2026-08-11T06:15:00Z&to=2026-08-13T18:40:00Z');
  assert.ok(s.meters[0].count > 90, 'the window has history in it');

  // and the rollup answer really comes from the rollup: skew one whole day, only the rollup answer moves
  await owner.query(
    `UPDATE usage_daily_rollup SET quantity_sum = quantity_sum + 1000
      WHERE tenant_id = $1::bigint AND day = '2026-08-12' AND customer_id = (SELECT id FROM customers WHERE tenant_id = $1::bigint AND livemode AND external_id = 'cus_0001')`,
    [rollupFx.tenantId],
  );
  const [s2, r2] = await bothAnswers('customer_id=cus_0001&from=2026-08-11T06:15:00Z&to=2026-08-13T18:40:00Z');
  assert.equal(r2.meters[0].sum, s2.meters[0].sum + 1000);
  // a window with no whole day inside is scanned only
  const [s3, r3] = await bothAnswers('customer_id=cus_0001&from=2026-08-12T01:00:00Z&to=2026-08-12T20:00:00Z');
  assert.deepEqual(r3, s3);
  await rebuildRollup(db.ownerUrl, rollupFx.tenantId);
  const [s4, r4] = await bothAnswers('customer_id=cus_0001');
  assert.deepEqual(r4, s4);
});

test('HC_ADDED_DELAY_MS: every data request waits the delay before its work; /healthz reports it and the build', async () => {
  const fx = await createFixtures(db.ownerUrl, { tenantName: 'slowed', customers: 1 });
  const DELAY = 120;
  const svc = await service({ addedDelayMs: DELAY, build: 'slowed-build-1' });
  const c = api(svc.url, fx.apiKey.reveal());
  const health = await c.get<{ settings: Record<string, string>; build: string }>('/healthz');
  assert.equal(health.status, 200);
  assert.deepEqual([health.body.settings.addedDelayMs, health.body.build], [String(DELAY), 'slowed-build-1']);
  // A lower bound only: a sleep never ends early, whatever the host's load (an upper bound would be timing).
  const timed = async (f: () => Promise<{ status: number }>, status: number) => {
    const t0 = performance.now();
    const res = await f();
    assert.equal(res.status, status);
    return performance.now() - t0;
  };
  const took = [
    await timed(() => c.post('/v1/usage-events', { events: [ev('cus_0001', 1, 'slowed-0')] }), 201),
    await timed(() => c.get('/v1/customers'), 200),
    await timed(() => c.get('/v1/invoices'), 200),
    await timed(() => c.get('/v1/usage-events/aggregate?customer_id=cus_0001'), 200),
  ];
  for (const ms of took) assert.ok(ms >= DELAY - 1, `a request took ${ms.toFixed(1)} ms, under the added ${DELAY} ms: ${took.map((t) => t.toFixed(1)).join(', ')}`);
  // The default build says nothing of either (its answer is as before the switch existed).
  const plain = await service({});
  const h = await api(plain.url).get<{ settings: Record<string, string>; build?: string }>('/healthz');
  assert.deepEqual([h.body.settings.addedDelayMs, h.body.build], [undefined, undefined]);
});

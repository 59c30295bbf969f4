// Client timestamps in the reference service (issue 35; the service contract in docs/your-service.md),
// on a real database through both insert modes: an event's `timestamp` is its occurred_at, late (days
// back) and out of order alike, one without keeps now(); idempotency ignores it; a malformed one, or a
// day that does not exist, refuses the batch naming events[i].timestamp; the daily rollup counts each
// row in its own UTC day and still equals a recount; and the lossy build's test switch
// (HC_DROP_LATE_MS) answers late events as accepted and writes only the others.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import pg from 'pg';
import type { IngestResponse } from '../../lib/protocol/hardcount-api';
import { createFixtures } from '../../lib/targets/bringup/fixtures';
import type { ServiceConfig } from '../../reference/config';
import { startService } from '../../reference/service';
import { hardcountDb, type HardcountDb } from '../harness/hardcount';
import { api, ev } from './api-client';
import { rollupMismatches } from './rollup-recount';

const dbReady = hardcountDb();
let db: HardcountDb;
let owner: pg.Client;

before(async () => {
  db = await dbReady;
  owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  db.defer(() => owner.end());
});

async function client(tenantName: string, config: Omit<ServiceConfig, 'databaseUrl'> = {}): Promise<{ c: ReturnType<typeof api>; tenantId: string; url: string }> {
  const fx = await createFixtures(db.ownerUrl, { tenantName, customers: 3 });
  const svc = await startService({ databaseUrl: db.appUrl, ...config });
  db.defer(() => svc.close());
  return { c: api(svc.url, fx.apiKey.reveal()), tenantId: fx.tenantId, url: svc.url };
}

/** occurred_at (ms) and created_at (ms) of each key of a tenant. */
async function stored(tenantId: string): Promise<Map<string, { at: number; created: number }>> {
  const r = await owner.query<{ k: string; at: string; created: string }>(
    `SELECT idempotency_key AS k, (extract(epoch FROM occurred_at) * 1000)::bigint::text AS at, (extract(epoch FROM created_at) * 1000)::bigint::text AS created
       FROM usage_events WHERE tenant_id = $1::bigint`,
    [tenantId],
  );
  return new Map(r.rows.map((x) => [x.k, { at: Number(x.at), created: Number(x.created) }]));
}

const stamped = (customer: string, q: number, key: string, timestamp: string) => ({ ...ev(customer, q, key), timestamp });

for (const insert of ['per-event', 'multi-row'] as const) {
  test(`${insert}: late, out-of-order and unstamped events are stored with their own time; a replay with another time is a duplicate`, async () => {
    const { c, tenantId } = await client(`ts-${insert}`, { insert });
    const now = Date.now();
    const late = new Date(now - 3 * 86_400_000).toISOString();
    const early = new Date(now - 400).toISOString();
    const res = await c.post<IngestResponse>('/v1/usage-events', {
      events: [stamped('cus_0001', 1, 'on-time', new Date(now).toISOString()), stamped('cus_0002', 2, 'late', late), stamped('cus_0001', 3, 'out-of-order', early), ev('cus_0003', 4, 'unstamped'), stamped('cus_0002', 5, 'offset', '2026-12-05T18:30:00.123456+05:30')],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body, { accepted: 5, created: 5, duplicates: 0 });
    const rows = await stored(tenantId);
    assert.equal(rows.get('on-time')?.at, now);
    assert.equal(rows.get('late')?.at, Date.parse(late), 'three days late, stored as given');
    assert.equal(rows.get('out-of-order')?.at, Date.parse(early));
    assert.equal(rows.get('offset')?.at, Date.parse('2026-12-05T13:00:00.123Z'));
    const u = rows.get('unstamped')!;
    assert.equal(u.at, u.created, 'no timestamp: the service\'s own time, as before');
    // The same key with another time: a duplicate, the first time kept.
    const again = await c.post<IngestResponse>('/v1/usage-events', { events: [stamped('cus_0002', 2, 'late', new Date(now).toISOString())] });
    assert.deepEqual(again.body, { accepted: 1, created: 0, duplicates: 1 });
    assert.equal((await stored(tenantId)).get('late')?.at, Date.parse(late));
  });
}

test('a malformed timestamp, or one that names no real day or time, refuses the batch naming events[i].timestamp', async () => {
  const { c, tenantId } = await client('ts-bad');
  for (const bad of ['yesterday', '2026-12-05T10:00:00', '2026-12-05 10:00:00Z', '2026-02-29T10:00:00Z', '2026-04-31T00:00:00Z', '2026-12-05T24:00:00Z', '2026-12-05T10:00:60Z', '2026-12-05T10:00:00.1234567Z', 1733400000]) {
    const res = await c.post<{ error: string; field: string }>('/v1/usage-events', { events: [ev('cus_0001', 1, 'fine'), { ...ev('cus_0001', 1, 'bad'), timestamp: bad }] });
    assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.field, 'events[1].timestamp');
    assert.match(res.body.error, /must be an RFC 3339 date-time with a zone/);
  }
  assert.equal((await stored(tenantId)).size, 0, 'all or nothing: the good event of each batch was not written');
  const leap = await c.post('/v1/usage-events', { events: [stamped('cus_0001', 1, 'leap', '2024-02-29T23:59:59.999999z')] });
  assert.equal(leap.status, 201, 'a leap day, a lower-case z and six fraction digits are fine');
});

test('HC_AGGREGATE=rollup: each row counted in its occurred_at\'s UTC day, late ones in theirs; the rollup equals a recount', async () => {
  const fx = await createFixtures(db.ownerUrl, { tenantName: 'ts-rollup', customers: 3 });
  const key = fx.apiKey.reveal();
  const per = await startService({ databaseUrl: db.appUrl, aggregate: 'rollup' });
  db.defer(() => per.close());
  const multi = await startService({ databaseUrl: db.appUrl, aggregate: 'rollup', insert: 'multi-row' });
  db.defer(() => multi.close());
  const day = 86_400_000;
  const now = Date.now();
  const posts = Array.from({ length: 12 }, (_, r) => {
    // Each batch: events today, yesterday, a week back, some unstamped, two of one day in one batch.
    const events = Array.from({ length: 8 }, (_, i) => {
      const e = ev(`cus_000${(r + i) % 3 + 1}`, r * 8 + i + 1, `roll-${r}-${i}`);
      return i % 4 === 3 ? e : { ...e, timestamp: new Date(now - [0, day, 7 * day][i % 3] - i).toISOString() };
    });
    return api((r % 2 ? per : multi).url, key).post<IngestResponse>('/v1/usage-events', { events });
  });
  const answers = await Promise.all(posts);
  assert.ok(answers.every((a) => a.status === 201 && a.body.created === 8), JSON.stringify(answers.map((a) => a.body)));
  assert.deepEqual(await rollupMismatches(owner, fx.tenantId), [], 'the rollup matches a recount of usage_events, day by day');
  const days = await owner.query<{ n: string }>('SELECT count(DISTINCT day)::text AS n FROM usage_daily_rollup WHERE tenant_id = $1::bigint', [fx.tenantId]);
  assert.ok(Number(days.rows[0].n) >= 3, `${days.rows[0].n} days in the rollup: today, yesterday, a week back`);
});

test('HC_DROP_LATE_MS (a test switch): late events are answered as accepted and never written; the others are; /healthz says so', async () => {
  const { c, tenantId, url } = await client('ts-lossy', { dropLateMs: 60_000 });
  const now = Date.now();
  const res = await c.post<IngestResponse>('/v1/usage-events', {
    events: [stamped('cus_0001', 1, 'kept', new Date(now - 500).toISOString()), stamped('cus_0002', 2, 'lost', new Date(now - 3_600_000).toISOString()), ev('cus_0003', 3, 'plain')],
  });
  assert.equal(res.status, 201);
  assert.deepEqual(res.body, { accepted: 3, created: 2, duplicates: 0 });
  assert.deepEqual([...(await stored(tenantId)).keys()].sort(), ['kept', 'plain']);
  const health = await api(url).get<{ settings: Record<string, string> }>('/healthz');
  assert.equal(health.body.settings.dropLateMs, '60000');
});

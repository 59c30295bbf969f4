// The reference service over real HTTP, default configuration (per-event inserts, per-minute
// last_used_at, scan aggregate): the happy path, idempotent replay, every bad input with the field it
// names, all-or-nothing batches, authentication, reads and the health answer.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import pg from 'pg';
import { MAX_BATCH, MAX_BODY_BYTES, type AggregateResponse, type IngestResponse } from '../../lib/protocol/hardcount-api';
import { createFixtures, type Fixtures } from '../../lib/targets/bringup/fixtures';
import { APPLICATION_NAME, startService, type RunningService } from '../../reference/service';
import { hardcountDb, type HardcountDb } from '../harness/hardcount';
import { api, ev, type ApiAnswer } from './api-client';
import { parseWaldumpStats } from '../../lib/evidence/wal-breakdown';

let db: HardcountDb;
let fx: Fixtures;
let svc: RunningService;
let owner: pg.Client;
let client: ReturnType<typeof api>;
/** The same tenant through a second service with HC_INSERT=multi-row. */
let multiClient: ReturnType<typeof api>;

// One cluster for the file (made at the top level: see test/harness/hardcount.ts).
const dbReady = hardcountDb();

before(async () => {
  db = await dbReady;
  fx = await createFixtures(db.ownerUrl, { customers: 10, unitCost: '0.0025' });
  svc = await startService({ databaseUrl: db.appUrl });
  db.defer(() => svc.close());
  client = api(svc.url, fx.apiKey.reveal());
  const multiSvc = await startService({ databaseUrl: db.appUrl, insert: 'multi-row' });
  db.defer(() => multiSvc.close());
  multiClient = api(multiSvc.url, fx.apiKey.reveal());
  owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  db.defer(() => owner.end());
});

async function rowsTagged(tag: string) {
  const r = await owner.query<{
    customer: string;
    meter: string;
    quantity: string;
    idempotency_key: string;
    properties: Record<string, unknown>;
    livemode: boolean;
    cost: string | null;
    tenant_id: string;
  }>(
    `SELECT c.external_id AS customer, m.key AS meter, e.quantity::text AS quantity, e.idempotency_key, e.properties,
            e.livemode, e.cost::text AS cost, e.tenant_id::text AS tenant_id
       FROM usage_events e JOIN customers c ON c.id = e.customer_id JOIN meters m ON m.id = e.meter_id
      WHERE e.properties ->> 'rig_run' = $1 ORDER BY e.id`,
    [tag],
  );
  return r.rows;
}

test('a batch is written, priced and tagged: 201 {accepted, created, duplicates}', async () => {
  const tag = 'happy';
  const res = await client.post<IngestResponse>('/v1/usage-events', {
    events: [
      ev('cus_0001', 3, 'happy-1', { rig_run: tag, region: 'ap-south-1' }),
      ev('cus_0002', 0, 'happy-2', { rig_run: tag }),
      ev('cus_0010', 400, 'happy-3', { rig_run: tag, nested: { a: [1, 2] } }),
    ],
  });
  assert.equal(res.status, 201);
  assert.deepEqual(res.body, { accepted: 3, created: 3, duplicates: 0 });
  const rows = await rowsTagged(tag);
  assert.deepEqual(
    rows.map((r) => [r.customer, r.meter, r.quantity, r.idempotency_key, r.livemode, r.cost, r.tenant_id]),
    [
      ['cus_0001', 'api_calls', '3', 'happy-1', true, '0.0075000000', fx.tenantId],
      ['cus_0002', 'api_calls', '0', 'happy-2', true, '0.0000000000', fx.tenantId],
      ['cus_0010', 'api_calls', '400', 'happy-3', true, '1.0000000000', fx.tenantId],
    ],
  );
  assert.deepEqual(rows[2].properties, { rig_run: tag, nested: { a: [1, 2] } });
  // an event without properties stores {}
  const bare = await client.post<IngestResponse>('/v1/usage-events', { events: [ev('cus_0003', 1, 'happy-bare')] });
  assert.equal(bare.status, 201);
  const p = await owner.query(`SELECT properties FROM usage_events WHERE idempotency_key = 'happy-bare'`);
  assert.deepEqual(p.rows[0].properties, {});
});

test('a replayed idempotency key writes nothing, keeps the first row, and is counted as a duplicate', async () => {
  const tag = 'replay';
  const batch = { events: [ev('cus_0001', 5, 'rp-1', { rig_run: tag }), ev('cus_0002', 6, 'rp-2', { rig_run: tag })] };
  assert.deepEqual((await client.post('/v1/usage-events', batch)).body, { accepted: 2, created: 2, duplicates: 0 });
  const again = await client.post('/v1/usage-events', batch);
  assert.equal(again.status, 201);
  assert.deepEqual(again.body, { accepted: 2, created: 0, duplicates: 2 });
  // same key, other content: still the first row
  const changed = await client.post('/v1/usage-events', {
    events: [ev('cus_0003', 999, 'rp-1', { rig_run: tag }), ev('cus_0004', 7, 'rp-3', { rig_run: tag })],
  });
  assert.deepEqual(changed.body, { accepted: 2, created: 1, duplicates: 1 });
  // a key twice in one batch: the first occurrence wins
  const inBatch = await client.post('/v1/usage-events', {
    events: [ev('cus_0005', 1, 'rp-4', { rig_run: tag }), ev('cus_0006', 2, 'rp-4', { rig_run: tag })],
  });
  assert.deepEqual(inBatch.body, { accepted: 2, created: 1, duplicates: 1 });
  const rows = await rowsTagged(tag);
  assert.deepEqual(
    rows.map((r) => [r.idempotency_key, r.customer, r.quantity]),
    [
      ['rp-1', 'cus_0001', '5'],
      ['rp-2', 'cus_0002', '6'],
      ['rp-3', 'cus_0004', '7'],
      ['rp-4', 'cus_0005', '1'],
    ],
  );
});

const good = (i: number, tag: string) => ev('cus_0001', 1, `${tag}-${i}`, { rig_run: tag });

const BAD_INPUTS: Array<{ name: string; body: unknown; status: number; field: string }> = [
  { name: 'malformed JSON', body: '{"events": [', status: 400, field: 'body' },
  { name: 'a JSON array instead of an object', body: '[]', status: 400, field: 'body' },
  { name: 'no events', body: {}, status: 400, field: 'events' },
  { name: 'events not an array', body: { events: { a: 1 } }, status: 400, field: 'events' },
  { name: 'an empty batch', body: { events: [] }, status: 400, field: 'events' },
  {
    name: 'a batch over MAX_BATCH',
    body: { events: Array.from({ length: MAX_BATCH + 1 }, (_, i) => good(i, 'big')) },
    status: 400,
    field: 'events',
  },
  { name: 'an event that is not an object', body: { events: [good(0, 'b'), 7] }, status: 400, field: 'events[1]' },
  {
    name: 'a negative quantity',
    body: { events: [good(0, 'b'), good(1, 'b'), good(2, 'b'), { ...good(3, 'b'), quantity: -1 }] },
    status: 400,
    field: 'events[3].quantity',
  },
  { name: 'a fractional quantity', body: { events: [{ ...good(0, 'b'), quantity: 1.5 }] }, status: 400, field: 'events[0].quantity' },
  { name: 'a quantity as a string', body: { events: [{ ...good(0, 'b'), quantity: '5' }] }, status: 400, field: 'events[0].quantity' },
  { name: 'a missing quantity', body: { events: [{ ...good(0, 'b'), quantity: undefined }] }, status: 400, field: 'events[0].quantity' },
  { name: 'an unsafe integer quantity', body: { events: [{ ...good(0, 'b'), quantity: 2 ** 60 }] }, status: 400, field: 'events[0].quantity' },
  { name: 'a missing customer_id', body: { events: [good(0, 'b'), { ...good(1, 'b'), customer_id: undefined }] }, status: 400, field: 'events[1].customer_id' },
  { name: 'a meter that is a number', body: { events: [{ ...good(0, 'b'), meter: 5 }] }, status: 400, field: 'events[0].meter' },
  { name: 'an empty idempotency_key', body: { events: [{ ...good(0, 'b'), idempotency_key: '' }] }, status: 400, field: 'events[0].idempotency_key' },
  { name: 'an idempotency_key over 255 characters', body: { events: [{ ...good(0, 'b'), idempotency_key: 'k'.repeat(256) }] }, status: 400, field: 'events[0].idempotency_key' },
  { name: 'properties that are an array', body: { events: [{ ...good(0, 'b'), properties: [1] }] }, status: 400, field: 'events[0].properties' },
  { name: 'properties with U+0000', body: { events: [{ ...good(0, 'b'), properties: { a: 'x\u0000y' } }] }, status: 400, field: 'events[0].properties' },
  { name: 'an unknown customer', body: { events: [good(0, 'b'), good(1, 'b'), ev('cus_9999', 1, 'b-x')] }, status: 422, field: 'events[2].customer_id' },
  { name: 'an unknown meter', body: { events: [good(0, 'b'), { ...good(1, 'b'), meter: 'nope' }] }, status: 422, field: 'events[1].meter' },
];

for (const c of BAD_INPUTS) {
  test(`bad input: ${c.name} -> ${c.status} naming ${c.field}, nothing written`, async () => {
    const before = await owner.query<{ n: string }>('SELECT count(*)::text AS n FROM usage_events');
    const res = await client.post<{ error: string; field: string }>('/v1/usage-events', c.body);
    assert.equal(res.status, c.status, JSON.stringify(res.body));
    assert.equal(res.body.field, c.field);
    assert.equal(typeof res.body.error, 'string');
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    const afterN = await owner.query<{ n: string }>('SELECT count(*)::text AS n FROM usage_events');
    assert.equal(afterN.rows[0].n, before.rows[0].n);
  });
}

test('a batch is all or nothing: a failure after earlier events were inserted rolls them back', async () => {
  // The third event's cost overflows numeric(20,10) only when it is inserted, after two rows went in.
  const tag = 'atomic';
  const res = await client.post('/v1/usage-events', {
    events: [good(0, tag), good(1, tag), { ...good(2, tag), quantity: Number.MAX_SAFE_INTEGER }],
  });
  assert.equal(res.status, 422);
  assert.equal(res.body.field, 'events[2].quantity');
  assert.deepEqual(await rowsTagged(tag), []);
  // the keys were not consumed: the same events without the bad one go in
  const ok = await client.post('/v1/usage-events', { events: [good(0, tag), good(1, tag)] });
  assert.deepEqual(ok.body, { accepted: 2, created: 2, duplicates: 0 });
});

test('a body over MAX_BODY_BYTES is refused with 413 naming the body', async () => {
  const filler = 'x'.repeat(MAX_BODY_BYTES);
  const res = await client.post('/v1/usage-events', { events: [{ ...good(0, 'huge'), properties: { filler } }] });
  assert.equal(res.status, 413);
  assert.equal(res.body.field, 'body');
  // far over the limit: answered at once and the connection closed, still a readable 413
  const huge = await fetch(svc.url + '/v1/usage-events', {
    method: 'POST',
    headers: { authorization: `Bearer ${fx.apiKey.reveal()}`, 'content-type': 'application/json' },
    body: 'y'.repeat(MAX_BODY_BYTES * 9),
  }).catch((err: Error) => err);
  if (huge instanceof Error) {
    // the server may close before the client finished sending; then the client sees the reset
    assert.match(String((huge as Error & { cause?: unknown }).cause ?? huge.message), /(reset|closed|EPIPE|socket)/i);
  } else {
    assert.equal(huge.status, 413);
  }
  assert.deepEqual(await rowsTagged('huge'), []);
  // the service still answers afterwards
  assert.equal((await client.get('/healthz')).status, 200);
});

test('401 for a missing, malformed or unknown key; nothing written', async () => {
  const body = { events: [good(0, 'unauth')] };
  const variants: Array<Record<string, string>> = [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, { authorization: 'Bearer hc_live_nope' }];
  for (const headers of variants) {
    const res = await fetch(svc.url + '/v1/usage-events', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 401, JSON.stringify(headers));
    const b = (await res.json()) as { field: string };
    assert.equal(b.field, 'authorization');
  }
  for (const path of ['/v1/usage-events/aggregate?customer_id=cus_0001', '/v1/customers', '/v1/invoices']) {
    assert.equal((await api(svc.url).get(path)).status, 401, path);
    assert.equal((await api(svc.url, 'hc_live_unknown').get(path)).status, 401, path);
  }
  assert.deepEqual(await rowsTagged('unauth'), []);
});

test('unknown routes answer 404 and wrong methods 405, as JSON', async () => {
  const nf = await client.get('/v1/nothing');
  assert.equal(nf.status, 404);
  assert.equal(typeof nf.body.error, 'string');
  const wm = await client.get('/v1/usage-events');
  assert.equal(wm.status, 405);
  assert.equal(wm.headers.get('allow'), 'POST');
});

test('aggregate: count and sum per meter over the customer rows, with from/to windows and named errors', async () => {
  const tag = 'agg';
  await client.post('/v1/usage-events', {
    events: [ev('cus_0007', 10, 'agg-1', { rig_run: tag }), ev('cus_0007', 32, 'agg-2', { rig_run: tag }), ev('cus_0008', 1, 'agg-3')],
  });
  const all = await client.get<AggregateResponse>('/v1/usage-events/aggregate?customer_id=cus_0007');
  assert.equal(all.status, 200);
  assert.deepEqual(all.body, { customer_id: 'cus_0007', meters: [{ meter: 'api_calls', count: 2, sum: 42 }] });
  const past = await client.get<AggregateResponse>('/v1/usage-events/aggregate?customer_id=cus_0007&to=2001-01-01T00:00:00Z');
  assert.deepEqual(past.body.meters, []);
  const window = await client.get<AggregateResponse>(
    `/v1/usage-events/aggregate?customer_id=cus_0007&from=2001-01-01&to=${encodeURIComponent(new Date(Date.now() + 3600e3).toISOString())}`,
  );
  assert.deepEqual(window.body.meters, [{ meter: 'api_calls', count: 2, sum: 42 }]);
  const none = await client.get<AggregateResponse>('/v1/usage-events/aggregate?customer_id=cus_0009');
  assert.deepEqual(none.body, { customer_id: 'cus_0009', meters: [] });

  const errors: Array<[string, number, string]> = [
    ['', 400, 'customer_id'],
    ['?from=2020-01-01', 400, 'customer_id'],
    ['?customer_id=cus_0007&from=yesterday', 400, 'from'],
    ['?customer_id=cus_0007&to=2020-13-45T99:00:00Z', 400, 'to'],
    ['?customer_id=cus_0007&from=2020-02-01&to=2020-01-01', 400, 'to'],
    ['?customer_id=cus_9999', 404, 'customer_id'],
  ];
  for (const [q, status, field] of errors) {
    const res = await client.get('/v1/usage-events/aggregate' + q);
    assert.equal(res.status, status, q);
    assert.equal(res.body.field, field, q);
  }
});

test('customers and invoices lists: pages limited by limit, has_more, and limit validated', async () => {
  const first = await client.get<{ data: Array<{ id: string; livemode: boolean }>; has_more: boolean }>('/v1/customers?limit=4');
  assert.equal(first.status, 200);
  assert.deepEqual(first.body.data.map((c) => c.id), ['cus_0001', 'cus_0002', 'cus_0003', 'cus_0004']);
  assert.equal(first.body.has_more, true);
  assert.ok(first.body.data.every((c) => c.livemode === true));
  const all = await client.get<{ data: unknown[]; has_more: boolean }>('/v1/customers');
  assert.equal(all.body.data.length, 10);
  assert.equal(all.body.has_more, false);
  for (const bad of ['0', '1001', 'abc', '-1']) {
    const res = await client.get(`/v1/customers?limit=${bad}`);
    assert.equal(res.status, 400);
    assert.equal(res.body.field, 'limit');
  }
  const empty = await client.get<{ data: unknown[] }>('/v1/invoices');
  assert.deepEqual(empty.body, { data: [], has_more: false });
  await owner.query(
    `INSERT INTO invoices (tenant_id, customer_id, livemode, period_start, period_end, total)
     SELECT $1::bigint, id, true, '2026-08-01Z', '2026-09-01Z', 12.5 FROM customers WHERE tenant_id = $1::bigint AND external_id = 'cus_0002'`,
    [fx.tenantId],
  );
  const inv = await client.get<{ data: Array<Record<string, unknown>> }>('/v1/invoices');
  assert.equal(inv.body.data.length, 1);
  assert.equal(inv.body.data[0].customer_id, 'cus_0002');
  assert.equal(inv.body.data[0].total, '12.5000000000');
  assert.equal(inv.body.data[0].period_start, '2026-08-01T00:00:00.000Z');
});

test('healthz: the request path runs as hardcount_app under RLS; with a key it reports the key mode', async () => {
  const anon = await api(svc.url).get('/healthz');
  assert.equal(anon.status, 200);
  assert.deepEqual(anon.body, { ok: true, db_role: 'hardcount_app', rls: true, livemode: false, settings: { lastUsed: 'per-minute', insert: 'per-event', aggregate: 'scan' } });
  const keyed = await client.get('/healthz');
  assert.deepEqual(keyed.body, { ok: true, db_role: 'hardcount_app', rls: true, livemode: true, settings: { lastUsed: 'per-minute', insert: 'per-event', aggregate: 'scan' } });
  assert.equal((await api(svc.url, 'hc_live_unknown').get('/healthz')).status, 401);
});

test('concurrent requests: 40 batches of 25 in flight at once are all written exactly once', async () => {
  const tag = 'conc';
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, r) =>
      client.post<IngestResponse>('/v1/usage-events', {
        events: Array.from({ length: 25 }, (_, i) => ev(`cus_000${1 + (i % 9)}`, r + i, `${tag}-${r}-${i}`, { rig_run: tag })),
      }),
    ),
  );
  assert.ok(answers.every((a) => a.status === 201 && a.body.created === 25));
  const sum = await owner.query<{ n: string; q: string }>(
    `SELECT count(*)::text AS n, sum(quantity)::text AS q FROM usage_events WHERE properties ->> 'rig_run' = $1`,
    [tag],
  );
  let expected = 0;
  for (let r = 0; r < 40; r++) for (let i = 0; i < 25; i++) expected += r + i;
  assert.deepEqual(sum.rows[0], { n: '1000', q: String(expected) });
});

// --- idempotency without speculative insertion, in both insert modes ---

const MODES = ['per-event', 'multi-row'] as const;
const modeClient = (mode: (typeof MODES)[number]) => (mode === 'per-event' ? client : multiClient);

for (const mode of MODES) {
  test(`${mode}: a key repeated inside a batch and across batches: the first occurrence wins, the rest are duplicates`, async () => {
    const c = modeClient(mode);
    const tag = `dup-${mode}`;
    const k = (s: string) => `${tag}-${s}`;
    const first = await c.post<IngestResponse>('/v1/usage-events', {
      events: [
        ev('cus_0001', 1, k('a'), { rig_run: tag }),
        ev('cus_0002', 2, k('b'), { rig_run: tag }),
        ev('cus_0003', 3, k('a'), { rig_run: tag }), // same batch, same key: a duplicate
        ev('cus_0004', 4, k('c'), { rig_run: tag }),
        ev('cus_0005', 5, k('b'), { rig_run: tag }),
      ],
    });
    assert.equal(first.status, 201);
    assert.deepEqual(first.body, { accepted: 5, created: 3, duplicates: 2 });
    // a replay (other content) beside a new key given twice
    const second = await c.post<IngestResponse>('/v1/usage-events', {
      events: [ev('cus_0006', 60, k('c'), { rig_run: tag }), ev('cus_0007', 7, k('d'), { rig_run: tag }), ev('cus_0008', 8, k('d'), { rig_run: tag })],
    });
    assert.deepEqual(second.body, { accepted: 3, created: 1, duplicates: 2 });
    // nothing new at all: 201, nothing written
    const replay = await c.post<IngestResponse>('/v1/usage-events', {
      events: [ev('cus_0009', 9, k('a'), { rig_run: tag }), ev('cus_0009', 9, k('d'), { rig_run: tag }), ev('cus_0009', 9, k('a'), { rig_run: tag })],
    });
    assert.equal(replay.status, 201);
    assert.deepEqual(replay.body, { accepted: 3, created: 0, duplicates: 3 });
    const rows = await rowsTagged(tag);
    assert.deepEqual(
      rows.map((r) => [r.idempotency_key, r.customer, r.quantity, r.cost]),
      [
        [k('a'), 'cus_0001', '1', '0.0025000000'],
        [k('b'), 'cus_0002', '2', '0.0050000000'],
        [k('c'), 'cus_0004', '4', '0.0100000000'],
        [k('d'), 'cus_0007', '7', '0.0175000000'],
      ],
    );
  });

  test(`${mode}: two concurrent requests with the same idempotency key write one row; both answer 201, one created, one duplicate`, async () => {
    const c = modeClient(mode);
    const tag = `race-${mode}`;
    const shared = `${tag}-shared`;
    // Hold both requests at their INSERT (SHARE blocks the INSERT's ROW EXCLUSIVE lock, not the SELECTs
    // before it), so that each has looked its keys up before either inserts: they really race.
    const locker = new pg.Client({ connectionString: db.ownerUrl });
    await locker.connect();
    const sup = new pg.Client({ connectionString: db.superUrl });
    await sup.connect();
    let posts: Array<Promise<ApiAnswer<IngestResponse>>>;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE usage_events IN SHARE MODE');
      posts = [
        c.post<IngestResponse>('/v1/usage-events', {
          events: [ev('cus_0001', 11, shared, { rig_run: tag }), ev('cus_0002', 12, `${tag}-one`, { rig_run: tag })],
        }),
        c.post<IngestResponse>('/v1/usage-events', {
          events: [ev('cus_0003', 13, `${tag}-two`, { rig_run: tag }), ev('cus_0004', 14, shared, { rig_run: tag })],
        }),
      ];
      const deadline = Date.now() + 15_000;
      for (;;) {
        const w = await sup.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
          [APPLICATION_NAME],
        );
        if (w.rows[0].n === 2) break;
        if (Date.now() > deadline) throw new Error(`the two requests did not both reach their INSERT (${w.rows[0].n} waiting)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await locker.query('COMMIT').catch(() => undefined);
      await locker.end();
      await sup.end();
    }
    const answers = await Promise.all(posts);
    assert.deepEqual(answers.map((a) => a.status), [201, 201], JSON.stringify(answers.map((a) => a.body)));
    const bodies = answers.map((a) => a.body).sort((x, y) => y.created - x.created);
    assert.deepEqual(bodies, [
      { accepted: 2, created: 2, duplicates: 0 },
      { accepted: 2, created: 1, duplicates: 1 },
    ]);
    const rows = await rowsTagged(tag);
    assert.equal(rows.length, 3);
    assert.equal(rows.filter((r) => r.idempotency_key === shared).length, 1, 'exactly one row for the shared key');
    const winner = answers.findIndex((a) => a.body.created === 2);
    const sharedRow = rows.find((r) => r.idempotency_key === shared)!;
    assert.deepEqual([sharedRow.customer, sharedRow.quantity], winner === 0 ? ['cus_0001', '11'] : ['cus_0004', '14']);
    assert.deepEqual(rows.map((r) => r.idempotency_key).filter((k) => k !== shared).sort(), [`${tag}-one`, `${tag}-two`]);
  });

  test(`${mode}: a duplicate whose cost would overflow still refuses the batch, as the INSERT ... ON CONFLICT did`, async () => {
    // ON CONFLICT DO NOTHING computed every row (its cost included) before finding the conflict, so a
    // replayed key carrying a quantity whose cost overflows numeric(20,10) refused the whole batch.
    const c = modeClient(mode);
    const tag = `dupover-${mode}`;
    const ok = await c.post<IngestResponse>('/v1/usage-events', { events: [ev('cus_0001', 1, `${tag}-a`, { rig_run: tag })] });
    assert.deepEqual(ok.body, { accepted: 1, created: 1, duplicates: 0 });
    const field = (i: number) => (mode === 'per-event' ? `events[${i}].quantity` : 'events');
    const replayed = await c.post<{ field: string }>('/v1/usage-events', {
      events: [ev('cus_0002', 2, `${tag}-b`, { rig_run: tag }), ev('cus_0001', Number.MAX_SAFE_INTEGER, `${tag}-a`, { rig_run: tag })],
    });
    assert.equal(replayed.status, 422);
    assert.equal(replayed.body.field, field(1));
    const inBatch = await c.post<{ field: string }>('/v1/usage-events', {
      events: [ev('cus_0002', 2, `${tag}-c`, { rig_run: tag }), ev('cus_0003', Number.MAX_SAFE_INTEGER, `${tag}-c`, { rig_run: tag })],
    });
    assert.equal(inBatch.status, 422);
    assert.equal(inBatch.body.field, field(1));
    // the first overflowing event is the one named, duplicate or not
    const both = await c.post<{ field: string }>('/v1/usage-events', {
      events: [
        ev('cus_0002', 2, `${tag}-d`, { rig_run: tag }),
        ev('cus_0001', Number.MAX_SAFE_INTEGER, `${tag}-a`, { rig_run: tag }),
        ev('cus_0003', Number.MAX_SAFE_INTEGER, `${tag}-e`, { rig_run: tag }),
      ],
    });
    assert.equal(both.status, 422);
    assert.equal(both.body.field, field(1));
    // a duplicate whose cost fits is just a duplicate
    const fits = await c.post<IngestResponse>('/v1/usage-events', {
      events: [ev('cus_0001', 4_000_000_000_000 - 1, `${tag}-a`, { rig_run: tag }), ev('cus_0002', 2, `${tag}-b`, { rig_run: tag })],
    });
    assert.deepEqual(fits.body, { accepted: 2, created: 1, duplicates: 1 });
    assert.deepEqual((await rowsTagged(tag)).map((r) => [r.idempotency_key, r.quantity]), [
      [`${tag}-a`, '1'],
      [`${tag}-b`, '2'],
    ]);
  });

  test(`${mode}: ingest writes no speculative insertion (no Heap/HEAP_CONFIRM in the WAL)`, async () => {
    // INSERT ... ON CONFLICT logs a HEAP_CONFIRM record per row on top of the heap insert (one WAL
    // record per event, ~14 % of the event's records); WAL per event is what every rate scales with.
    const c = modeClient(mode);
    const tag = `wal-${mode}`;
    const sup = new pg.Client({ connectionString: db.superUrl });
    await sup.connect();
    try {
      const lsn = async () => (await sup.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0].l;
      const start = await lsn();
      const res = await c.post<IngestResponse>('/v1/usage-events', {
        events: Array.from({ length: 40 }, (_, i) => ev(`cus_000${1 + (i % 9)}`, i, `${tag}-${i % 30}`, { rig_run: tag })),
      });
      assert.deepEqual(res.body, { accepted: 40, created: 30, duplicates: 10 });
      const end = await lsn();
      await sup.query('SELECT pg_switch_wal()'); // flushes everything up to `end` for pg_waldump
      const out = await db.cluster.exec('pg_waldump', ['--stats=record', '-p', `${db.cluster.dataDir}/pg_wal`, '-s', start, '-e', end]);
      const b = parseWaldumpStats(out.stdout, start, end);
      const count = (type: string) => b.records.find((r) => r.type === type)?.count ?? 0;
      assert.equal(count('Heap/HEAP_CONFIRM'), 0, JSON.stringify(b.records));
      assert.equal(count('Heap/INSERT') + count('Heap/INSERT+INIT'), 30, JSON.stringify(b.records));
    } finally {
      await sup.end();
    }
  });
}

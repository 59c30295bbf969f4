// Isolation through the HTTP API with real keys: a key of one tenant never sees another tenant's rows,
// and a live key never sees test-mode rows (nor a test key live ones). Row-level security does it, on
// the request path's role; the service adds no tenant filter of its own to the reads.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import pg from 'pg';
import type { AggregateResponse, IngestResponse } from '../../lib/protocol/hardcount-api';
import { createFixtures, type Fixtures } from '../../lib/targets/bringup/fixtures';
import { startService } from '../../reference/service';
import { hardcountDb } from '../harness/hardcount';
import { api, ev } from './api-client';

const dbReady = hardcountDb();
let owner: pg.Client;
let aLive: Fixtures;
let aTest: Fixtures;
let bLive: Fixtures;
let A: ReturnType<typeof api>;
let AT: ReturnType<typeof api>;
let B: ReturnType<typeof api>;
/** A's test key through a second service with HC_INSERT=multi-row. */
let ATmulti: ReturnType<typeof api>;

type Page = { data: Array<{ id: string; livemode: boolean; customer_id?: string }>; has_more: boolean };

before(async () => {
  const db = await dbReady;
  aLive = await createFixtures(db.ownerUrl, { tenantName: 'tenant-a', customers: 5, livemode: true });
  aTest = await createFixtures(db.ownerUrl, { tenantName: 'tenant-a', customers: 2, livemode: false });
  bLive = await createFixtures(db.ownerUrl, { tenantName: 'tenant-b', customers: 3, livemode: true });
  assert.equal(aLive.tenantId, aTest.tenantId);
  assert.notEqual(aLive.tenantId, bLive.tenantId);
  const svc = await startService({ databaseUrl: db.appUrl });
  db.defer(() => svc.close());
  A = api(svc.url, aLive.apiKey.reveal());
  AT = api(svc.url, aTest.apiKey.reveal());
  B = api(svc.url, bLive.apiKey.reveal());
  const multi = await startService({ databaseUrl: db.appUrl, insert: 'multi-row' });
  db.defer(() => multi.close());
  ATmulti = api(multi.url, aTest.apiKey.reveal());
  owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  db.defer(() => owner.end());
});

test('tenant isolation: B sees none of A rows, customers or invoices, and cannot write to A customers', async () => {
  const a = await A.post<IngestResponse>('/v1/usage-events', {
    events: [ev('cus_0001', 10, 'shared-key-1'), ev('cus_0005', 20, 'a-only-1')],
  });
  assert.deepEqual(a.body, { accepted: 2, created: 2, duplicates: 0 });

  // B has its own cus_0001 (same external id, other row): it has no events
  const bAgg = await B.get<AggregateResponse>('/v1/usage-events/aggregate?customer_id=cus_0001');
  assert.deepEqual(bAgg.body, { customer_id: 'cus_0001', meters: [] });
  const aAgg = await A.get<AggregateResponse>('/v1/usage-events/aggregate?customer_id=cus_0001');
  assert.deepEqual(aAgg.body.meters, [{ meter: 'api_calls', count: 1, sum: 10 }]);
  // B has no cus_0005: unknown to it, for reading and for writing
  assert.equal((await B.get('/v1/usage-events/aggregate?customer_id=cus_0005')).status, 404);
  const bWrite = await B.post<{ field: string }>('/v1/usage-events', { events: [ev('cus_0005', 1, 'b-1')] });
  assert.equal(bWrite.status, 422);
  assert.equal(bWrite.body.field, 'events[0].customer_id');

  // idempotency keys are per tenant: B's use of A's key is a new event, not a duplicate
  const bSame = await B.post<IngestResponse>('/v1/usage-events', { events: [ev('cus_0001', 7, 'shared-key-1')] });
  assert.deepEqual(bSame.body, { accepted: 1, created: 1, duplicates: 0 });
  const rows = await owner.query<{ tenant_id: string; quantity: string }>(
    `SELECT tenant_id::text AS tenant_id, quantity::text AS quantity FROM usage_events WHERE idempotency_key = 'shared-key-1' ORDER BY id`,
  );
  assert.deepEqual(rows.rows, [
    { tenant_id: aLive.tenantId, quantity: '10' },
    { tenant_id: bLive.tenantId, quantity: '7' },
  ]);
  // and A's aggregate did not move
  assert.deepEqual((await A.get<AggregateResponse>('/v1/usage-events/aggregate?customer_id=cus_0001')).body.meters, [
    { meter: 'api_calls', count: 1, sum: 10 },
  ]);

  const bCustomers = await B.get<Page>('/v1/customers?limit=1000');
  assert.deepEqual(bCustomers.body.data.map((c) => c.id), ['cus_0001', 'cus_0002', 'cus_0003']);
  const aCustomers = await A.get<Page>('/v1/customers?limit=1000');
  assert.equal(aCustomers.body.data.length, 5);

  await owner.query(
    `INSERT INTO invoices (tenant_id, customer_id, livemode, total)
     SELECT tenant_id, id, true, 1 FROM customers WHERE tenant_id = $1::bigint AND livemode AND external_id = 'cus_0002'`,
    [aLive.tenantId],
  );
  assert.equal((await A.get<Page>('/v1/invoices')).body.data.length, 1);
  assert.equal((await B.get<Page>('/v1/invoices')).body.data.length, 0);
});

test('livemode isolation: a live key never sees test-mode rows, and a test key never sees live ones', async () => {
  // A's test-mode partition has its own cus_0001 and cus_0002
  const live = await A.post<IngestResponse>('/v1/usage-events', { events: [ev('cus_0002', 100, 'mode-live-1')] });
  assert.equal(live.status, 201);
  const testAgg = await AT.get<AggregateResponse>('/v1/usage-events/aggregate?customer_id=cus_0002');
  assert.deepEqual(testAgg.body.meters, [], 'the test key sees no live events');

  // the INSERT names no livemode; the trigger takes it from the key's mode
  const t = await AT.post<IngestResponse>('/v1/usage-events', { events: [ev('cus_0002', 3, 'mode-test-1')] });
  assert.deepEqual(t.body, { accepted: 1, created: 1, duplicates: 0 });
  const modes = await owner.query<{ idempotency_key: string; livemode: boolean }>(
    `SELECT idempotency_key, livemode FROM usage_events WHERE idempotency_key LIKE 'mode-%' ORDER BY 1`,
  );
  assert.deepEqual(modes.rows, [
    { idempotency_key: 'mode-live-1', livemode: true },
    { idempotency_key: 'mode-test-1', livemode: false },
  ]);
  assert.deepEqual((await AT.get<AggregateResponse>('/v1/usage-events/aggregate?customer_id=cus_0002')).body.meters, [
    { meter: 'api_calls', count: 1, sum: 3 },
  ]);
  assert.deepEqual((await A.get<AggregateResponse>('/v1/usage-events/aggregate?customer_id=cus_0002')).body.meters, [
    { meter: 'api_calls', count: 1, sum: 100 },
  ]);

  // the live key's cus_0005 does not exist in test mode
  const missing = await AT.post<{ field: string }>('/v1/usage-events', { events: [ev('cus_0005', 1, 'mode-test-2')] });
  assert.equal(missing.status, 422);
  assert.equal(missing.body.field, 'events[0].customer_id');

  const testCustomers = await AT.get<Page>('/v1/customers');
  assert.deepEqual(
    testCustomers.body.data.map((c) => [c.id, c.livemode]),
    [
      ['cus_0001', false],
      ['cus_0002', false],
    ],
  );
  const liveCustomers = await A.get<Page>('/v1/customers');
  assert.ok(liveCustomers.body.data.every((c) => c.livemode === true));

  // invoices: the live invoice of the first test is invisible to the test key; a test-mode one is visible only to it
  await owner.query(
    `INSERT INTO invoices (tenant_id, customer_id, livemode, total)
     SELECT tenant_id, id, false, 2 FROM customers WHERE tenant_id = $1::bigint AND NOT livemode AND external_id = 'cus_0001'`,
    [aTest.tenantId],
  );
  const testInv = await AT.get<Page>('/v1/invoices');
  assert.deepEqual(testInv.body.data.map((i) => [i.customer_id, i.livemode]), [['cus_0001', false]]);
  const liveInv = await A.get<Page>('/v1/invoices');
  assert.ok(liveInv.body.data.every((i) => i.livemode === true));

  assert.equal((await AT.get<{ livemode: boolean }>('/healthz')).body.livemode, false);
  assert.equal((await A.get<{ livemode: boolean }>('/healthz')).body.livemode, true);
});

test('idempotency keys are per tenant, not per mode: a live key replayed by the test key is a duplicate, in both insert modes', async () => {
  // The unique constraint is (tenant_id, idempotency_key), and row-level security hides the other mode's
  // rows from the request path: the replay must still be found, not answered 500 or written twice.
  const live = await A.post<IngestResponse>('/v1/usage-events', {
    events: [ev('cus_0001', 5, 'xmode-1'), ev('cus_0002', 6, 'xmode-2')],
  });
  assert.deepEqual(live.body, { accepted: 2, created: 2, duplicates: 0 });
  for (const [name, c] of [
    ['per-event', AT],
    ['multi-row', ATmulti],
  ] as const) {
    const replay = await c.post<IngestResponse>('/v1/usage-events', {
      events: [ev('cus_0001', 1, 'xmode-1'), ev('cus_0002', 2, `xmode-new-${name}`), ev('cus_0001', 3, 'xmode-2')],
    });
    assert.equal(replay.status, 201, `${name}: ${JSON.stringify(replay.body)}`);
    assert.deepEqual(replay.body, { accepted: 3, created: 1, duplicates: 2 }, name);
  }
  const rows = await owner.query<{ idempotency_key: string; livemode: boolean; quantity: string }>(
    `SELECT idempotency_key, livemode, quantity::text AS quantity FROM usage_events WHERE idempotency_key LIKE 'xmode-%' ORDER BY 1`,
  );
  assert.deepEqual(rows.rows, [
    { idempotency_key: 'xmode-1', livemode: true, quantity: '5' },
    { idempotency_key: 'xmode-2', livemode: true, quantity: '6' },
    { idempotency_key: 'xmode-new-multi-row', livemode: false, quantity: '2' },
    { idempotency_key: 'xmode-new-per-event', livemode: false, quantity: '2' },
  ]);
});

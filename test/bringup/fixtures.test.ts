// Fixtures: the measurement's tenant, 200 live customers, one priced meter and one live API key, made
// through the livemode trigger the way every other writer makes rows; the key handled as a secret.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import { inspect } from 'node:util';
import pg from 'pg';
import { createFixtures, customerIds } from '../../lib/targets/bringup/fixtures';
import { BringupRefusal } from '../../lib/targets/bringup/refusal';
import { readSecretFile, Secret, writeSecretFile } from '../../lib/targets/bringup/secret';
import { startService, type RunningService } from '../../reference/service';
import { hashApiKey } from '../../reference/keys';
import { hardcountDb, type HardcountDb } from '../harness/hardcount';
import { api } from '../reference/api-client';

const dbReady = hardcountDb();
let db: HardcountDb;
let owner: pg.Client;
let svc: RunningService;

before(async () => {
  db = await dbReady;
  owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  db.defer(() => owner.end());
  svc = await startService({ databaseUrl: db.appUrl });
  db.defer(() => svc.close());
});

test('one tenant, cus_0001..cus_0200 in live mode, api_calls with a cost rate, one live key stored hashed', async () => {
  const fx = await createFixtures(db.ownerUrl);
  assert.equal(fx.livemode, true);
  assert.equal(fx.meter, 'api_calls');
  assert.equal(fx.customers.length, 200);
  assert.equal(fx.customers[0], 'cus_0001');
  assert.equal(fx.customers[199], 'cus_0200');
  assert.deepEqual(fx.customers, customerIds(200));

  const tenants = await owner.query<{ id: string; name: string }>(`SELECT id::text AS id, name FROM tenants`);
  assert.deepEqual(tenants.rows, [{ id: fx.tenantId, name: 'rig-bench' }]);
  const customers = await owner.query<{ n: string; live: boolean }>(
    `SELECT count(*)::text AS n, bool_and(livemode) AS live FROM customers WHERE tenant_id = $1::bigint`,
    [fx.tenantId],
  );
  assert.deepEqual(customers.rows[0], { n: '200', live: true });
  const meter = await owner.query<{ key: string; livemode: boolean; unit_cost: string }>(
    `SELECT m.key, m.livemode, r.unit_cost::text AS unit_cost FROM meters m JOIN provider_cost_rates r ON r.meter_id = m.id`,
  );
  assert.deepEqual(meter.rows, [{ key: 'api_calls', livemode: true, unit_cost: '0.0001000000' }]);
  const keys = await owner.query<{ id: string; key_hash: string; livemode: boolean }>(
    `SELECT id::text AS id, key_hash, livemode FROM api_keys`,
  );
  assert.deepEqual(keys.rows, [{ id: fx.apiKeyId, key_hash: hashApiKey(fx.apiKey.reveal()), livemode: true }]);
  assert.ok(!keys.rows[0].key_hash.includes(fx.apiKey.reveal()));
  assert.match(fx.apiKey.reveal(), /^hc_live_/);

  // the key works on the API, in live mode
  const h = await api(svc.url, fx.apiKey.reveal()).get<{ livemode: boolean }>('/healthz');
  assert.equal(h.body.livemode, true);
});

test('the key never prints: inspect, String, template, JSON all show [redacted]', async () => {
  const fx = await createFixtures(db.ownerUrl, { tenantName: 'print-check', customers: 1 });
  const raw = fx.apiKey.reveal();
  for (const shown of [inspect(fx), inspect(fx.apiKey), String(fx.apiKey), `${fx.apiKey}`, JSON.stringify(fx), JSON.stringify({ k: fx.apiKey })]) {
    assert.ok(!shown.includes(raw), shown);
    assert.match(shown, /redacted/);
  }
});

test('re-running reuses the tenant and rows, and replaces the key (the old one stops working)', async () => {
  const first = await createFixtures(db.ownerUrl, { tenantName: 'rerun', customers: 5 });
  const second = await createFixtures(db.ownerUrl, { tenantName: 'rerun', customers: 5 });
  assert.equal(second.tenantId, first.tenantId);
  assert.notEqual(second.apiKey.reveal(), first.apiKey.reveal());
  const n = await owner.query<{ c: string; m: string; r: string; k: string }>(
    `SELECT (SELECT count(*) FROM customers WHERE tenant_id = $1::bigint)::text AS c,
            (SELECT count(*) FROM meters WHERE tenant_id = $1::bigint)::text AS m,
            (SELECT count(*) FROM provider_cost_rates WHERE tenant_id = $1::bigint)::text AS r,
            (SELECT count(*) FROM api_keys WHERE tenant_id = $1::bigint)::text AS k`,
    [first.tenantId],
  );
  assert.deepEqual(n.rows[0], { c: '5', m: '1', r: '1', k: '1' });
  assert.equal((await api(svc.url, first.apiKey.reveal()).get('/healthz')).status, 401);
  assert.equal((await api(svc.url, second.apiKey.reveal()).get('/healthz')).status, 200);
  // a test-mode set for the same tenant is a separate partition, and leaves the live key alone
  const testMode = await createFixtures(db.ownerUrl, { tenantName: 'rerun', customers: 2, livemode: false });
  assert.match(testMode.apiKey.reveal(), /^hc_test_/);
  assert.equal((await api(svc.url, second.apiKey.reveal()).get('/healthz')).status, 200);
  assert.equal((await api(svc.url, testMode.apiKey.reveal()).get<{ livemode: boolean }>('/healthz')).body.livemode, false);
});

test('fixtures that would land in the wrong partition are refused (set_livemode trigger missing)', async () => {
  await owner.query('ALTER TABLE customers DISABLE TRIGGER set_livemode');
  try {
    await assert.rejects(createFixtures(db.ownerUrl, { tenantName: 'no-trigger', customers: 3 }), (err: unknown) => {
      assert.ok(err instanceof BringupRefusal);
      assert.equal(err.check, 'fixtures');
      assert.match(err.reason, /did not land in livemode=true/);
      return true;
    });
    const left = await owner.query(`SELECT 1 FROM tenants WHERE name = 'no-trigger'`);
    assert.equal(left.rowCount, 0, 'nothing was kept');
  } finally {
    await owner.query('ALTER TABLE customers ENABLE TRIGGER set_livemode');
  }
});

test('writeSecretFile writes 0600 (also over a wider existing file); readSecretFile refuses a readable one', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-secret-'));
  try {
    const file = path.join(dir, 'sub', 'api-key');
    writeSecretFile(file, new Secret('hc_live_abc'));
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(readSecretFile(file).reveal(), 'hc_live_abc');
    fs.chmodSync(file, 0o644);
    assert.throws(() => readSecretFile(file), /must be 0600/);
    writeSecretFile(file, new Secret('hc_live_def'));
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(readSecretFile(file).reveal(), 'hc_live_def');
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['api-key'], 'no temporary file left');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

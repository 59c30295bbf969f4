// Bring-up against a real cluster and the real reference service: it passes on a clean rig, and each
// failure the spec says used to be silent is provoked for real and refused with its check and reason.
import assert from 'node:assert/strict';
import http from 'node:http';
import { before, test } from 'node:test';
import pg from 'pg';
import { bringUp, verifyBringup, type BringupResult } from '../../lib/targets/bringup/bringup';
import { referenceSchema } from '../../lib/targets/bringup/checks';
import { BringupRefusal, type BringupCheck } from '../../lib/targets/bringup/refusal';
import { REFERENCE_TABLES } from '../../reference/schema';
import { startService, type RunningService } from '../../reference/service';
import { hardcountDb, TEST_APP_PASSWORD, TEST_OWNER_PASSWORD, type HardcountDb } from '../harness/hardcount';

const dbReady = hardcountDb();
let db: HardcountDb;
let owner: pg.Client;
let su: pg.Client;
let svc: RunningService;
let first: BringupResult;

before(async () => {
  db = await dbReady;
  owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  db.defer(() => owner.end());
  su = new pg.Client({ connectionString: db.superUrl });
  await su.connect();
  db.defer(() => su.end());
  svc = await startService({ databaseUrl: db.appUrl });
  db.defer(() => svc.close());
});

async function service(databaseUrl: string): Promise<RunningService> {
  const s = await startService({ databaseUrl });
  db.defer(() => s.close());
  return s;
}

let tagN = 0;
/** verifyBringup against the first bring-up's fixtures, with a fresh run tag. */
function verify(over: Partial<Parameters<typeof verifyBringup>[0]> = {}) {
  return verifyBringup({
    ownerUrl: db.ownerUrl,
    serviceUrl: svc.url,
    fixtures: first.fixtures,
    runTag: `verify-${++tagN}`,
    ...over,
  });
}

async function refused(p: Promise<unknown>, check: BringupCheck, reason: RegExp): Promise<BringupRefusal> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof BringupRefusal, `expected a BringupRefusal, got ${(err as Error).stack}`);
    assert.equal(err.check, check, err.message);
    assert.match(err.reason, reason);
    assert.equal(err.message, `bring-up refused (${check}): ${err.reason}`);
    return err;
  }
  assert.fail(`bring-up passed; expected a refusal (${check})`);
}

test('a clean rig passes: fixtures made, every check ok, the probe row written; nothing secret in the log', async () => {
  const lines: string[] = [];
  first = await bringUp({
    ownerUrl: db.ownerUrl,
    serviceUrl: svc.url,
    availabilityZones: { app: 'ap-south-1a', database: 'ap-south-1a' },
    runTag: 'bringup-first',
    log: (l) => lines.push(l),
  });
  assert.deepEqual(
    first.checks.map((c) => c.check),
    ['availability-zone', 'schema', 'app-privileges', 'fixtures', 'service-role', 'probe-write'],
  );
  assert.equal(first.fixtures.customers.length, 200);
  assert.equal(first.fixtures.livemode, true);
  assert.equal(first.runTag, 'bringup-first');
  const probe = await owner.query<{ livemode: boolean; quantity: string }>(
    `SELECT livemode, quantity::text AS quantity FROM usage_events WHERE properties ->> 'rig_run' = 'bringup-first'`,
  );
  assert.deepEqual(probe.rows, [{ livemode: true, quantity: '1' }]);
  assert.ok(lines.length >= 6);
  const all = lines.join('\n') + JSON.stringify(first);
  for (const secret of [first.fixtures.apiKey.reveal(), TEST_APP_PASSWORD, TEST_OWNER_PASSWORD]) {
    assert.ok(!all.includes(secret), 'a secret reached the log or the result');
  }
  // verifying again (a re-check before a series) passes too, without the AZ input on the local rig
  const again = await verify();
  assert.deepEqual(again.map((c) => c.check), ['schema', 'app-privileges', 'service-role', 'probe-write']);
});

test('refused: the database in another availability zone than the app (before anything is written)', async () => {
  const tenantsBefore = await owner.query('SELECT id FROM tenants');
  await refused(
    bringUp({ ownerUrl: db.ownerUrl, serviceUrl: svc.url, availabilityZones: { app: 'ap-south-1a', database: 'ap-south-1b' } }),
    'availability-zone',
    /database is in ap-south-1b and the app in ap-south-1a/,
  );
  await refused(verify({ availabilityZones: { app: 'ap-south-1a', database: '' } }), 'availability-zone', /could not tell/);
  assert.deepEqual((await owner.query('SELECT id FROM tenants')).rows, tenantsBefore.rows);
  // the fixtures were not re-made: the first key still works
  await verify();
});

test('refused: a dirty schema (an unexpected table, an unexpected migration version, a missing table)', async () => {
  await owner.query('CREATE TABLE leftover_from_last_run (id int)');
  try {
    await refused(verify(), 'schema', /unexpected table\(s\) in public: leftover_from_last_run/);
    await refused(bringUp({ ownerUrl: db.ownerUrl, serviceUrl: svc.url }), 'schema', /leftover_from_last_run/);
  } finally {
    await owner.query('DROP TABLE leftover_from_last_run');
  }
  await owner.query(`INSERT INTO schema_migrations (version, name) VALUES (7, 'not_ours')`);
  try {
    await refused(verify(), 'schema', /database has \[1, 2, 3, 4, 5, 6, 7\], this rig expects \[1, 2, 3, 4, 5, 6\]/);
  } finally {
    await owner.query('DELETE FROM schema_migrations WHERE version = 7');
  }
  await refused(
    verify({ expected: { ...referenceSchema(), tables: [...REFERENCE_TABLES, 'usage_monthly_rollup'] } }),
    'schema',
    /schema incomplete: missing table\(s\) usage_monthly_rollup/,
  );
  await verify();
});

test('refused: an app role that cannot SELECT a table the migration made', async () => {
  await owner.query('REVOKE SELECT ON invoices FROM hardcount_app');
  try {
    await refused(verify(), 'app-privileges', /hardcount_app cannot SELECT invoices/);
  } finally {
    await owner.query('GRANT SELECT ON invoices TO hardcount_app');
  }
  await refused(verify({ appRole: 'no_such_role' }), 'app-privileges', /no_such_role does not exist/);
  await verify();
});

test('refused: a service on the admin pool (owner URL, superuser URL)', async () => {
  const onOwner = await service(db.ownerUrl);
  await refused(
    verify({ serviceUrl: onOwner.url }),
    'service-role',
    /runs as database role hardcount_owner, not hardcount_app: it is on the admin pool/,
  );
  const onSuperuser = await service(db.superUrl);
  await refused(verify({ serviceUrl: onSuperuser.url }), 'service-role', /runs as database role postgres/);
});

test('refused: row-level security off on the request path (table RLS disabled, role BYPASSRLS)', async () => {
  await owner.query('ALTER TABLE usage_events DISABLE ROW LEVEL SECURITY');
  try {
    await refused(verify(), 'service-role', /row-level security does not apply to hardcount_app/);
  } finally {
    await owner.query('ALTER TABLE usage_events ENABLE ROW LEVEL SECURITY');
  }
  await su.query('ALTER ROLE hardcount_app BYPASSRLS');
  try {
    await refused(verify(), 'service-role', /row-level security does not apply/);
  } finally {
    await su.query('ALTER ROLE hardcount_app NOBYPASSRLS');
  }
  await verify();
});

/** A stand-in service: answers /healthz itself (or forwards it), and answers POSTs 201 without writing anything. */
async function lyingService(opts: { health?: unknown; forwardTo?: string }): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      void (async () => {
        if (req.method === 'POST') {
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ accepted: 1, created: 1, duplicates: 0 }));
          return;
        }
        if (opts.health) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(opts.health));
          return;
        }
        const up = await fetch(opts.forwardTo + (req.url ?? '/'), { headers: { authorization: req.headers.authorization ?? '' } });
        res.writeHead(up.status, { 'content-type': 'application/json' });
        res.end(await up.text());
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  db.defer(() => new Promise((resolve) => server.close(resolve)));
  const addr = server.address() as { port: number };
  return `http://127.0.0.1:${addr.port}`;
}

test('refused from the database side although /healthz looks right: no policy, no app session', async () => {
  // RLS enabled but the policy gone: row_security_active() is still true, the catalog says no policy applies
  await owner.query('DROP POLICY tenant_isolation ON invoices');
  try {
    await refused(verify(), 'service-role', /no row-level security policy applies to hardcount_app on invoices/);
  } finally {
    await owner.query(
      `CREATE POLICY tenant_isolation ON invoices USING (tenant_id = current_setting('app.tenant_id')::bigint and livemode = current_setting('app.livemode')::boolean)`,
    );
  }
  // a "service" whose /healthz claims the right answer but which is not connected to this database
  const fake = await lyingService({ health: { ok: true, db_role: 'hardcount_app', rls: true, livemode: true } });
  await su.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'hardcount_app'`);
  await refused(verify({ serviceUrl: fake }), 'service-role', /no hardcount_app session is connected to this database/);
  await verify();
});

test('refused: a probe POST whose 201 wrote no row (a trigger that deletes it; a service that only answers 201)', async () => {
  await owner.query(`CREATE FUNCTION discard_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN DELETE FROM usage_events WHERE id = NEW.id; RETURN NULL; END $$`);
  await owner.query('CREATE TRIGGER discard_event AFTER INSERT ON usage_events FOR EACH ROW EXECUTE FUNCTION discard_event()');
  try {
    // the service really answers 201 created=1 here: the row is gone after its own INSERT
    const r = await fetch(svc.url + '/v1/usage-events', {
      method: 'POST',
      headers: { authorization: `Bearer ${first.fixtures.apiKey.reveal()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events: [{ customer_id: 'cus_0001', meter: 'api_calls', quantity: 1, idempotency_key: 'gone-1' }] }),
    });
    assert.equal(r.status, 201);
    assert.deepEqual(await r.json(), { accepted: 1, created: 1, duplicates: 0 });
    await refused(verify({ runTag: 'probe-deleted' }), 'probe-write', /answered 201 \(created 1\), but no row .* probe-deleted/);
  } finally {
    await owner.query('DROP TRIGGER discard_event ON usage_events');
    await owner.query('DROP FUNCTION discard_event()');
  }
  // a front that forwards /healthz to the real service but swallows the writes
  const front = await lyingService({ forwardTo: svc.url });
  await refused(verify({ serviceUrl: front, runTag: 'probe-swallowed' }), 'probe-write', /no row with idempotency key probe-swallowed:probe/);
  // and a probe that is not 201 at all
  await owner.query('REVOKE INSERT ON usage_events FROM hardcount_app');
  try {
    await refused(verify({ runTag: 'probe-500' }), 'app-privileges', /cannot INSERT into usage_events/);
    // (with the privilege check pointed elsewhere, the probe itself catches it)
    await refused(
      verify({ runTag: 'probe-500', expected: { ...referenceSchema(), ingestTable: 'none' } }),
      'probe-write',
      /the probe POST answered 500/,
    );
  } finally {
    await owner.query('GRANT INSERT ON usage_events TO hardcount_app');
  }
  await verify();
});

test('refused: the key writes to another livemode partition than the fixtures are in', async () => {
  await refused(
    verify({ fixtures: { ...first.fixtures, livemode: false } }),
    'service-role',
    /requests run with livemode=true, but the fixtures are livemode=false/,
  );
});

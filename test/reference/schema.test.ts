// Roles, database, default privileges and migrations against a real PostgreSQL 15: the tables and
// indexes the other parts of the rig rely on, the livemode trigger trap (INSERT and COPY), row-level
// security, and the ordering trap (grants come from default privileges made before the first migration).
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { listMigrations, migrate } from '../../reference/migrate';
import { setupRoles } from '../../reference/roles';
import { REFERENCE_TABLES } from '../../reference/schema';
import { throwAwayCluster } from '../harness/pg';
import { hardcountDb } from '../harness/hardcount';

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const EXPECTED_COLUMNS: Record<string, string[]> = {
  // name:type:nullable
  tenants: ['id:bigint:NO', 'name:text:NO', 'created_at:timestamp with time zone:NO'],
  customers: [
    'id:bigint:NO',
    'tenant_id:bigint:NO',
    'external_id:text:NO',
    'name:text:NO',
    'livemode:boolean:NO',
    'created_at:timestamp with time zone:YES',
  ],
  meters: ['id:bigint:NO', 'tenant_id:bigint:NO', 'key:text:NO', 'name:text:YES', 'livemode:boolean:NO'],
  api_keys: [
    'id:bigint:NO',
    'tenant_id:bigint:NO',
    'key_hash:text:NO',
    'livemode:boolean:NO',
    'created_at:timestamp with time zone:NO',
    'last_used_at:timestamp with time zone:YES',
  ],
  provider_cost_rates: [
    'id:bigint:NO',
    'tenant_id:bigint:NO',
    'meter_id:bigint:NO',
    'unit_cost:numeric(20,10):NO',
    'valid_from:timestamp with time zone:NO',
  ],
  usage_events: [
    'id:bigint:NO',
    'tenant_id:bigint:NO',
    'customer_id:bigint:NO',
    'meter_id:bigint:NO',
    'quantity:bigint:NO',
    'idempotency_key:text:NO',
    'properties:jsonb:NO',
    'livemode:boolean:NO',
    'cost:numeric(20,10):YES',
    'occurred_at:timestamp with time zone:NO',
    'created_at:timestamp with time zone:NO',
  ],
  invoices: [
    'id:bigint:NO',
    'tenant_id:bigint:NO',
    'customer_id:bigint:NO',
    'livemode:boolean:NO',
    'period_start:timestamp with time zone:YES',
    'period_end:timestamp with time zone:YES',
    'total:numeric(20,10):YES',
    'created_at:timestamp with time zone:NO',
  ],
  usage_daily_rollup: [
    'tenant_id:bigint:NO',
    'customer_id:bigint:NO',
    'meter_id:bigint:NO',
    'livemode:boolean:NO',
    'day:date:NO',
    'event_count:bigint:NO',
    'quantity_sum:bigint:NO',
  ],
  schema_migrations: ['version:integer:NO', 'name:text:YES', 'applied_at:timestamp with time zone:YES'],
};

test('roles, database and migrations: every table with exactly its columns, versions recorded, re-run is a no-op', async () => {
  const db = await hardcountDb();
  const versions = listMigrations().map((m) => m.version);
  assert.deepEqual(versions, [1, 2, 3, 4, 5, 6]);
  await withClient(db.ownerUrl, async (c) => {
    const cols = await c.query<{ table_name: string; col: string }>(
      `SELECT table_name,
              column_name || ':' || CASE WHEN data_type = 'numeric' THEN format('numeric(%s,%s)', numeric_precision, numeric_scale)
                                        ELSE data_type END || ':' || is_nullable AS col
         FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
    );
    const got: Record<string, string[]> = {};
    for (const r of cols.rows) (got[r.table_name] ??= []).push(r.col);
    assert.deepEqual(got, EXPECTED_COLUMNS);
    assert.deepEqual(Object.keys(got).sort(), [...REFERENCE_TABLES].sort());

    const owners = await c.query<{ relname: string; owner: string }>(
      `SELECT c.relname, pg_get_userbyid(c.relowner) AS owner FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r'`,
    );
    assert.ok(owners.rows.every((r) => r.owner === 'hardcount_owner'), 'the owner role owns every table');

    const recorded = await c.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
    assert.deepEqual(recorded.rows.map((r) => r.version), versions);
    assert.equal(recorded.rows[0].name, 'tenants_customers_meters');
  });
  assert.deepEqual(await migrate(db.ownerUrl), { applied: [], current: 6 });
});

test('usage_events has exactly the five indexes of the spec, and the uniques the API relies on', async () => {
  const db = await hardcountDb();
  await withClient(db.ownerUrl, async (c) => {
    const idx = await c.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'usage_events' ORDER BY indexname`,
    );
    const defs = Object.fromEntries(idx.rows.map((r) => [r.indexname, r.indexdef.replace(/^.* USING /, '')]));
    assert.deepEqual(defs, {
      usage_events_customer_meter: 'btree (customer_id, meter_id, occurred_at)',
      usage_events_idempotency: 'btree (tenant_id, idempotency_key)',
      usage_events_pkey: 'btree (id)',
      usage_events_properties_gin: 'gin (properties)',
      usage_events_tenant_time: 'btree (tenant_id, occurred_at)',
    });
    const uniques = await c.query<{ def: string }>(
      `SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) AS def FROM pg_constraint
        WHERE contype IN ('u', 'p') AND connamespace = 'public'::regnamespace ORDER BY 1`,
    );
    const defsU = uniques.rows.map((r) => r.def);
    for (const want of [
      'usage_events UNIQUE (tenant_id, idempotency_key)',
      'customers UNIQUE (tenant_id, livemode, external_id)',
      'meters UNIQUE (tenant_id, livemode, key)',
      'api_keys UNIQUE (key_hash)',
      'usage_daily_rollup PRIMARY KEY (tenant_id, livemode, customer_id, meter_id, day)',
      'schema_migrations PRIMARY KEY (version)',
    ]) {
      assert.ok(defsU.includes(want), `missing ${want} in ${defsU.join('; ')}`);
    }
    const check = await c.query<{ def: string }>(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'usage_events'::regclass AND contype = 'c'`,
    );
    assert.deepEqual(check.rows.map((r) => r.def), ['CHECK ((quantity >= 0))']);
  });
});

test('roles: no superuser, no BYPASSRLS; the app role gets every table, sequence and the auth function by default privileges', async () => {
  const db = await hardcountDb();
  await withClient(db.superUrl, async (c) => {
    const roles = await c.query<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean; rolcanlogin: boolean; scram: boolean }>(
      `SELECT rolname, rolsuper, rolbypassrls, rolcanlogin, rolpassword LIKE 'SCRAM-SHA-256$%' AS scram
         FROM pg_authid WHERE rolname IN ('hardcount_owner', 'hardcount_app') ORDER BY rolname`,
    );
    assert.deepEqual(roles.rows, [
      { rolname: 'hardcount_app', rolsuper: false, rolbypassrls: false, rolcanlogin: true, scram: true },
      { rolname: 'hardcount_owner', rolsuper: false, rolbypassrls: false, rolcanlogin: true, scram: true },
    ]);
    const owner = await c.query<{ o: string }>(`SELECT pg_get_userbyid(datdba) AS o FROM pg_database WHERE datname = 'hardcount'`);
    assert.equal(owner.rows[0].o, 'hardcount_owner');
    const privs = await c.query<{ t: string; sel: boolean; ins: boolean }>(
      `SELECT t, has_table_privilege('hardcount_app', t, 'SELECT') AS sel, has_table_privilege('hardcount_app', t, 'INSERT') AS ins
         FROM unnest($1::text[]) AS t`,
      [REFERENCE_TABLES],
    );
    assert.ok(privs.rows.every((r) => r.sel && r.ins), JSON.stringify(privs.rows));
    // No GRANT statement in the migrations: these came from ALTER DEFAULT PRIVILEGES.
    const seq = await c.query<{ ok: boolean }>(`SELECT has_sequence_privilege('hardcount_app', 'usage_events_id_seq', 'USAGE') AS ok`);
    assert.equal(seq.rows[0].ok, true);
    await c.query('CREATE ROLE somebody_else');
    const fn = await c.query<{ app: boolean; other: boolean }>(
      `SELECT has_function_privilege('hardcount_app', 'auth_api_key(text)', 'EXECUTE') AS app,
              has_function_privilege('somebody_else', 'auth_api_key(text)', 'EXECUTE') AS other`,
    );
    assert.deepEqual(fn.rows[0], { app: true, other: false });
  });
});

test('migrate refuses to run as anyone but the database owner (objects it made would miss the default privileges)', async () => {
  const cluster = await throwAwayCluster();
  await setupRoles(cluster.url(), { ownerPassword: 'o', appPassword: 'a' });
  await assert.rejects(migrate(cluster.url('hardcount')), /must run as the database owner \(hardcount_owner\), not postgres/);
  await withClient(cluster.url('hardcount'), async (c) => {
    const t = await c.query(`SELECT 1 FROM pg_tables WHERE schemaname = 'public'`);
    assert.equal(t.rowCount, 0, 'nothing was created');
  });
});

test('migrate refuses a database that has a migration version this code does not know', async () => {
  const db = await hardcountDb();
  await withClient(db.ownerUrl, (c) => c.query(`INSERT INTO schema_migrations (version, name) VALUES (999, 'from_the_future')`));
  await assert.rejects(migrate(db.ownerUrl), /migration version\(s\) 999 that this code does not know/);
});

test('the livemode trap: the set_livemode trigger overwrites the INSERT and COPY value from app.livemode', async () => {
  const db = await hardcountDb();
  await withClient(db.ownerUrl, async (c) => {
    const tenant = (await c.query<{ id: string }>(`INSERT INTO tenants (name) VALUES ('t') RETURNING id`)).rows[0].id;
    // unset: the INSERT says true, the row says false
    const a = await c.query<{ livemode: boolean }>(
      `INSERT INTO customers (tenant_id, external_id, name, livemode) VALUES ($1, 'a', 'a', true) RETURNING livemode`,
      [tenant],
    );
    assert.equal(a.rows[0].livemode, false);
    await c.query('BEGIN');
    await c.query(`SET LOCAL app.livemode = 'true'`);
    const b = await c.query<{ livemode: boolean }>(
      `INSERT INTO customers (tenant_id, external_id, name, livemode) VALUES ($1, 'b', 'b', false) RETURNING livemode`,
      [tenant],
    );
    const m = await c.query<{ id: string; livemode: boolean }>(
      `INSERT INTO meters (tenant_id, key, livemode) VALUES ($1, 'api_calls', false) RETURNING id, livemode`,
      [tenant],
    );
    const k = await c.query<{ livemode: boolean }>(
      `INSERT INTO api_keys (tenant_id, key_hash, livemode) VALUES ($1, 'h', false) RETURNING livemode`,
      [tenant],
    );
    const cust = (await c.query<{ id: string }>(`SELECT id FROM customers WHERE external_id = 'b'`)).rows[0].id;
    const e = await c.query<{ livemode: boolean }>(
      `INSERT INTO usage_events (tenant_id, customer_id, meter_id, quantity, idempotency_key, livemode)
       VALUES ($1, $2, $3, 1, 'k1', false) RETURNING livemode`,
      [tenant, cust, m.rows[0].id],
    );
    await c.query('COMMIT');
    assert.deepEqual(
      [b.rows[0].livemode, m.rows[0].livemode, k.rows[0].livemode, e.rows[0].livemode],
      [true, true, true, true],
    );
    // after the transaction the setting is '' again: the default partition (false)
    const after = await c.query<{ livemode: boolean }>(
      `INSERT INTO customers (tenant_id, external_id, name, livemode) VALUES ($1, 'c', 'c', true) RETURNING livemode`,
      [tenant],
    );
    assert.equal(after.rows[0].livemode, false);

    // COPY fires the row trigger too: the file says livemode=f, app.livemode says on.
    await c.query(`SET app.livemode = 'on'`);
    const copy = c.query(
      copyFrom(`COPY usage_events (tenant_id, customer_id, meter_id, quantity, idempotency_key, livemode) FROM STDIN`),
    );
    await pipeline(
      Readable.from([`${tenant}\t${cust}\t${m.rows[0].id}\t5\tcopy-1\tf\n${tenant}\t${cust}\t${m.rows[0].id}\t6\tcopy-2\tf\n`]),
      copy,
    );
    await c.query('RESET app.livemode');
    const copied = await c.query<{ idempotency_key: string; livemode: boolean }>(
      `SELECT idempotency_key, livemode FROM usage_events WHERE idempotency_key LIKE 'copy-%' ORDER BY 1`,
    );
    assert.deepEqual(copied.rows, [
      { idempotency_key: 'copy-1', livemode: true },
      { idempotency_key: 'copy-2', livemode: true },
    ]);
  });
});

test('row-level security binds the app role: nothing without the settings, one tenant and one mode with them', async () => {
  const db = await hardcountDb();
  const ids = await withClient(db.ownerUrl, async (c) => {
    const out: Record<string, string> = {};
    for (const [name, live] of [
      ['a', true],
      ['b', true],
    ] as const) {
      await c.query('BEGIN');
      await c.query(`SELECT set_config('app.livemode', $1, true)`, [String(live)]);
      const t = (await c.query<{ id: string }>(`INSERT INTO tenants (name) VALUES ($1) RETURNING id`, [name])).rows[0].id;
      await c.query(`INSERT INTO customers (tenant_id, external_id, name) VALUES ($1, 'cus_1', $2)`, [t, name]);
      await c.query('COMMIT');
      out[name] = t;
    }
    // a test-mode customer of tenant a
    await c.query(`INSERT INTO customers (tenant_id, external_id, name) VALUES ($1, 'cus_1', 'a-test')`, [out.a]);
    return out;
  });
  await withClient(db.appUrl, async (c) => {
    // never set in this session: the policy's current_setting() raises, so the request fails closed
    await assert.rejects(c.query('SELECT * FROM customers'), /unrecognized configuration parameter "app.tenant_id"/);
    await c.query('BEGIN');
    await c.query(`SELECT set_config('app.tenant_id', $1, true), set_config('app.livemode', 'true', true)`, [ids.a]);
    const live = await c.query<{ name: string }>('SELECT name FROM customers');
    await c.query('COMMIT');
    assert.deepEqual(live.rows, [{ name: 'a' }]);
    await c.query('BEGIN');
    await c.query(`SELECT set_config('app.tenant_id', $1, true), set_config('app.livemode', 'false', true)`, [ids.a]);
    const testMode = await c.query<{ name: string }>('SELECT name FROM customers');
    // and writing another tenant's row is refused by the policy's check
    await assert.rejects(
      c.query(`INSERT INTO customers (tenant_id, external_id, name) VALUES ($1, 'x', 'x')`, [ids.b]),
      /row-level security policy/,
    );
    await c.query('ROLLBACK');
    assert.deepEqual(testMode.rows, [{ name: 'a-test' }]);
    // after the transaction the settings are '' (set in this session before): the cast fails, still closed
    await assert.rejects(c.query('SELECT * FROM customers'), /invalid input syntax for type bigint/);
  });
});

test('passwords are stored as SCRAM verifiers computed client-side and work over scram-sha-256; setupRoles is re-runnable', async () => {
  // log_statement=all: the log would hold a clear password if CREATE/ALTER ROLE carried one
  const cluster = await throwAwayCluster({ superuserPassword: 'su-pw', parameters: { log_statement: 'all' } });
  const su = cluster.url('postgres', 'postgres', 'su-pw');
  const first = await setupRoles(su, { ownerPassword: 'owner-1', appPassword: 'app-1' });
  await migrate(first.ownerUrl);
  await withClient(first.appUrl, async (c) => {
    const r = await c.query<{ u: string }>('SELECT current_user AS u');
    assert.equal(r.rows[0].u, 'hardcount_app');
  });
  const bad = new pg.Client({ connectionString: cluster.url('hardcount', 'hardcount_app', 'wrong') });
  await assert.rejects(bad.connect(), /password authentication failed/);
  // again, with new passwords: the old one stops working, the schema stays
  const second = await setupRoles(su, { ownerPassword: 'owner-2', appPassword: 'app-2' });
  assert.deepEqual(await migrate(second.ownerUrl), { applied: [], current: 6 });
  const old = new pg.Client({ connectionString: first.appUrl });
  await assert.rejects(old.connect(), /password authentication failed/);
  await withClient(second.appUrl, (c) => c.query('SELECT 1'));
  // the server log never saw a clear password (CREATE/ALTER ROLE carried the verifier)
  const fs = await import('node:fs');
  const log = fs.readFileSync(cluster.logFile, 'utf8');
  assert.match(log, /ALTER ROLE "hardcount_app" .* PASSWORD 'SCRAM-SHA-256\$4096:/, 'statements are logged');
  for (const pw of ['owner-1', 'owner-2', 'app-1', 'app-2']) assert.ok(!log.includes(`'${pw}'`), `${pw} in the server log`);
});

test('setupRoles works for a non-superuser master (as on RDS): it joins the owner role to create the database', async () => {
  const cluster = await throwAwayCluster();
  await withClient(cluster.url(), (c) => c.query(`CREATE ROLE rds_master LOGIN CREATEDB CREATEROLE PASSWORD 'm'`));
  const r = await setupRoles(cluster.url('postgres', 'rds_master', 'm'), { ownerPassword: 'o', appPassword: 'a' });
  assert.deepEqual((await migrate(r.ownerUrl)).applied, [1, 2, 3, 4, 5, 6]);
  await withClient(cluster.url('hardcount'), async (c) => {
    const ok = await c.query<{ ok: boolean }>(`SELECT has_table_privilege('hardcount_app', 'usage_events', 'SELECT') AS ok`);
    assert.equal(ok.rows[0].ok, true);
  });
});

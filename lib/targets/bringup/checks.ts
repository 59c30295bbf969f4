// The bring-up checks, one function each, each refusing with BringupRefusal(check, reason). They read
// the database as the owner (or RDS's master user), which row-level security does not bind, so what
// they count is what is really there; and they read the service over HTTP, as the load will.
import type pg from 'pg';
import { HEALTH_PATH, INGEST_PATH, RUN_TAG_PROPERTY, type HealthResponse, type IngestResponse } from '../../protocol/hardcount-api';
import { listMigrations } from '../../../reference/migrate';
import { APP_ROLE, REFERENCE_TABLES, TENANT_TABLES } from '../../../reference/schema';
import { BringupRefusal } from './refusal';
import type { Secret } from './secret';

/** What a clean, fully migrated database holds. The default is the reference service's schema. */
export interface ExpectedSchema {
  /** Every table (and view) in the public schema, no more, no fewer. */
  tables: readonly string[];
  /** Exactly the versions in schema_migrations. */
  migrationVersions: readonly number[];
  /** Tables row-level security must bind the app role on. */
  tenantTables: readonly string[];
  /** The table ingest writes (the app role needs INSERT on it). */
  ingestTable: string;
}

export function referenceSchema(): ExpectedSchema {
  return {
    tables: REFERENCE_TABLES,
    migrationVersions: listMigrations().map((m) => m.version),
    tenantTables: TENANT_TABLES,
    ingestTable: 'usage_events',
  };
}

export const DEFAULT_APP_ROLE = APP_ROLE;

/** AWS only: the database must be in the app's availability zone (a cross-AZ hop is on every statement). */
export function checkAvailabilityZone(az: { app: string; database: string }): string {
  if (!az.app || !az.database) {
    throw new BringupRefusal(
      'availability-zone',
      `could not tell the availability zones apart (app: ${az.app || 'unknown'}, database: ${az.database || 'unknown'})`,
    );
  }
  if (az.app !== az.database) {
    throw new BringupRefusal(
      'availability-zone',
      `the database is in ${az.database} and the app in ${az.app}: every statement would cross availability zones, ` +
        'and the spec measures everything in one',
    );
  }
  return `app and database both in ${az.app}`;
}

/** No table the migrations did not make, none missing, and exactly the expected migration versions. */
export async function checkSchema(owner: pg.Client, expected: ExpectedSchema): Promise<string> {
  const rel = await owner.query<{ relname: string }>(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname`,
  );
  const present = rel.rows.map((r) => r.relname);
  const want = new Set(expected.tables);
  const extra = present.filter((t) => !want.has(t));
  const missing = [...want].filter((t) => !present.includes(t)).sort();
  if (extra.length) {
    throw new BringupRefusal(
      'schema',
      `dirty schema: unexpected table(s) in public: ${extra.join(', ')} (left over from another run or tool?)`,
    );
  }
  if (missing.length) throw new BringupRefusal('schema', `schema incomplete: missing table(s) ${missing.join(', ')}`);
  const v = await owner.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  const got = v.rows.map((r) => Number(r.version));
  const wantV = [...expected.migrationVersions].sort((a, b) => a - b);
  if (got.join(',') !== wantV.join(',')) {
    throw new BringupRefusal(
      'schema',
      `unexpected migration versions: the database has [${got.join(', ')}], this rig expects [${wantV.join(', ')}]`,
    );
  }
  return `${present.length} tables, migrations ${wantV[0] ?? '-'}..${wantV[wantV.length - 1] ?? '-'}`;
}

/**
 * The app role can SELECT every table the migration made (and INSERT into the ingest table). The spec's
 * trap: without ALTER DEFAULT PRIVILEGES made before the first migration, the cluster migrates cleanly
 * and then answers 500 on ingest.
 */
export async function checkAppPrivileges(owner: pg.Client, appRole: string, expected: ExpectedSchema): Promise<string> {
  const role = await owner.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [appRole]);
  if (role.rowCount === 0) throw new BringupRefusal('app-privileges', `the app role ${appRole} does not exist`);
  const res = await owner.query<{ t: string; sel: boolean; ins: boolean }>(
    `SELECT t, has_table_privilege($1, format('public.%I', t), 'SELECT') AS sel,
            has_table_privilege($1, format('public.%I', t), 'INSERT') AS ins
       FROM unnest($2::text[]) AS t ORDER BY t`,
    [appRole, expected.tables],
  );
  const cannotRead = res.rows.filter((r) => !r.sel).map((r) => r.t);
  if (cannotRead.length) {
    throw new BringupRefusal(
      'app-privileges',
      `${appRole} cannot SELECT ${cannotRead.join(', ')}: were its default privileges made before the first migration?`,
    );
  }
  const ingest = res.rows.find((r) => r.t === expected.ingestTable);
  if (ingest && !ingest.ins) {
    throw new BringupRefusal('app-privileges', `${appRole} cannot INSERT into ${expected.ingestTable}`);
  }
  return `${appRole} can read all ${res.rows.length} tables`;
}

export interface ServiceCheckInput {
  serviceUrl: string;
  apiKey: Secret;
  appRole: string;
  /** The fixtures' partition; the key's requests must write to it. */
  livemode: boolean;
  expected: ExpectedSchema;
  timeoutMs?: number;
}

/**
 * The service's request path runs as the app role under row-level security, as a self-hoster runs it,
 * not on an admin pool. Read from both sides: the service's own /healthz (which asks the database for
 * current_user), and the database's catalog for that role and the tables, plus its sessions.
 */
export async function checkServiceRole(owner: pg.Client, input: ServiceCheckInput): Promise<string> {
  const refuse = (reason: string) => new BringupRefusal('service-role', reason);
  let health: HealthResponse;
  try {
    const res = await fetch(new URL(HEALTH_PATH, input.serviceUrl), {
      headers: { authorization: `Bearer ${input.apiKey.reveal()}` },
      signal: AbortSignal.timeout(input.timeoutMs ?? 10_000),
    });
    const text = await res.text();
    if (res.status !== 200) throw refuse(`${HEALTH_PATH} answered ${res.status}: ${text.slice(0, 200)}`);
    health = JSON.parse(text) as HealthResponse;
  } catch (err) {
    if (err instanceof BringupRefusal) throw err;
    throw refuse(`${HEALTH_PATH} did not answer: ${(err as Error).message}`);
  }
  if (health.ok !== true) throw refuse(`${HEALTH_PATH} says not ok`);
  if (health.db_role !== input.appRole) {
    throw refuse(
      `the service's request path runs as database role ${health.db_role}, not ${input.appRole}: it is on the admin ` +
        'pool, which would measure a configuration with no row-level security on the request path',
    );
  }
  if (health.rls !== true) throw refuse(`row-level security does not apply to ${health.db_role} on the request path`);
  if (health.livemode !== input.livemode) {
    throw refuse(
      `the API key's requests run with livemode=${health.livemode}, but the fixtures are livemode=${input.livemode}: ` +
        'events would land in a partition nobody measures',
    );
  }

  // The database's side: the role's attributes, the tables' row-level security, and the role's sessions.
  const role = await owner.query<{ rolsuper: boolean; rolbypassrls: boolean; oid: string }>(
    'SELECT rolsuper, rolbypassrls, oid::text AS oid FROM pg_roles WHERE rolname = $1',
    [input.appRole],
  );
  if (role.rowCount === 0) throw refuse(`the database has no role ${input.appRole}`);
  if (role.rows[0].rolsuper || role.rows[0].rolbypassrls) {
    throw refuse(`${input.appRole} is a superuser or BYPASSRLS in the database: row-level security never binds it`);
  }
  const tables = await owner.query<{ t: string; rls: boolean | null; owner_like: boolean | null; policies: string }>(
    `SELECT t, c.relrowsecurity AS rls,
            pg_has_role($1, c.relowner, 'USAGE') AS owner_like,
            (SELECT count(*) FROM pg_policy p
              WHERE p.polrelid = c.oid AND (p.polroles = '{0}' OR $2::oid = ANY (p.polroles)))::text AS policies
       FROM unnest($3::text[]) AS t
       LEFT JOIN pg_class c ON c.oid = to_regclass(format('public.%I', t))
      ORDER BY t`,
    [input.appRole, role.rows[0].oid, input.expected.tenantTables],
  );
  const noRls = tables.rows.filter((r) => r.rls !== true).map((r) => r.t);
  if (noRls.length) throw refuse(`row-level security is not enabled on ${noRls.join(', ')}`);
  const owned = tables.rows.filter((r) => r.owner_like).map((r) => r.t);
  if (owned.length) {
    throw refuse(`${input.appRole} owns (or has its owner's privileges on) ${owned.join(', ')}, so RLS does not bind it`);
  }
  const noPolicy = tables.rows.filter((r) => Number(r.policies) === 0).map((r) => r.t);
  if (noPolicy.length) throw refuse(`no row-level security policy applies to ${input.appRole} on ${noPolicy.join(', ')}`);
  const sessions = await owner.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND usename = $1`,
    [input.appRole],
  );
  if (Number(sessions.rows[0].n) === 0) {
    throw refuse(
      `the service answered as ${input.appRole}, but no ${input.appRole} session is connected to this database: ` +
        'the service is connected to another database than the one being verified',
    );
  }
  return `request path runs as ${health.db_role} under row-level security (livemode=${health.livemode})`;
}

export interface ProbeInput {
  serviceUrl: string;
  apiKey: Secret;
  tenantId: string;
  livemode: boolean;
  customer: string;
  meter: string;
  runTag: string;
  timeoutMs?: number;
}

/** One event through the API; its 201 must have written exactly that row, in the fixtures' partition. */
export async function checkProbeWrite(owner: pg.Client, input: ProbeInput): Promise<string> {
  const refuse = (reason: string) => new BringupRefusal('probe-write', reason);
  const idempotencyKey = `${input.runTag}:probe`;
  const event = {
    customer_id: input.customer,
    meter: input.meter,
    quantity: 1,
    idempotency_key: idempotencyKey,
    properties: { [RUN_TAG_PROPERTY]: input.runTag, bringup_probe: true },
  };
  let status: number;
  let text: string;
  try {
    const res = await fetch(new URL(INGEST_PATH, input.serviceUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${input.apiKey.reveal()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events: [event] }),
      signal: AbortSignal.timeout(input.timeoutMs ?? 10_000),
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    throw refuse(`the probe POST got no answer: ${(err as Error).message}`);
  }
  if (status !== 201) throw refuse(`the probe POST answered ${status}: ${text.slice(0, 200)}`);
  let body: Partial<IngestResponse> = {};
  try {
    body = JSON.parse(text) as IngestResponse;
  } catch {
    throw refuse(`the probe POST answered 201 with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  if (body.created !== 1) {
    throw refuse(
      `the probe POST answered 201 with created=${body.created} (duplicates=${body.duplicates}): ` +
        `was run tag ${input.runTag} used before?`,
    );
  }
  const rows = await owner.query<{ tenant_id: string; livemode: boolean; quantity: string }>(
    `SELECT tenant_id::text AS tenant_id, livemode, quantity::text AS quantity FROM usage_events
      WHERE idempotency_key = $1 AND properties ->> $2 = $3`,
    [idempotencyKey, RUN_TAG_PROPERTY, input.runTag],
  );
  if (rows.rowCount === 0) {
    throw refuse(
      `the probe POST answered 201 (created 1), but no row with idempotency key ${idempotencyKey} and ` +
        `${RUN_TAG_PROPERTY}=${input.runTag} exists: the service's writes are not reaching this database`,
    );
  }
  if (rows.rowCount !== 1) throw refuse(`the probe wrote ${rows.rowCount} rows, not 1`);
  const r = rows.rows[0];
  if (r.tenant_id !== input.tenantId) throw refuse(`the probe row belongs to tenant ${r.tenant_id}, not ${input.tenantId}`);
  if (r.livemode !== input.livemode) {
    throw refuse(`the probe row landed in livemode=${r.livemode}, but the fixtures are livemode=${input.livemode}`);
  }
  if (r.quantity !== '1') throw refuse(`the probe row has quantity ${r.quantity}, not 1`);
  return `probe ${idempotencyKey} wrote its row (livemode=${r.livemode})`;
}

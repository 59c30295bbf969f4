// "Provision" on an existing deployment is connect: read the owner's URL from where the spec says,
// log in as it, read the server's version and settings, check the service answers at its URL, and
// record how to reach both (record.ts). Nothing is created, changed or started: the database and the
// service are the user's, before the campaign and after it. Bring-up's refusals (schema, the app
// role's privileges, the service's role and row-level security, a probe write) come next, as on
// every target. Safe to run twice: it only reads, and writes the same record again.
import pg from 'pg';
import { pgConfig } from '../../pg/connection';
import { HEALTH_PATH } from '../../protocol/hardcount-api';
import { APP_ROLE } from '../../../reference/schema';
import { readSecret } from '../secret-source';
import type { ProgressFn, ProvisionResult, RigParameters } from '../target';
import { connectionFromRecord } from './connection';
import { readExistingRecord, writeExistingRecord, type ExistingRecord } from './record';

/** The spec's database parameters, read back as the server runs them (the page shows them as found). */
const PARAMETERS = ['shared_buffers', 'min_wal_size', 'max_wal_size', 'autovacuum_vacuum_insert_scale_factor', 'wal_compression', 'max_connections'];

export async function connectExisting(campaignId: string, params: RigParameters, onProgress: ProgressFn = () => {}): Promise<ProvisionResult> {
  const spec = params.existing;
  if (!spec) throw new Error('target "existing" needs the spec\'s "existing" block (serviceUrl, databaseUrlFrom)');
  const reused = readExistingRecord(campaignId) !== undefined;
  const ownerUrl = readSecret('existing.databaseUrlFrom', spec.databaseUrlFrom);
  // Read now so that a missing app URL fails here, not at the denominator an hour later.
  if (spec.appDatabaseUrlFrom) readSecret('existing.appDatabaseUrlFrom', spec.appDatabaseUrlFrom);
  const where = databaseOf(ownerUrl);

  onProgress(`connect: database ${where.host}:${where.port}/${where.name} as ${where.ownerRole}`);
  const db = new pg.Client(pgConfig(ownerUrl, { application_name: 'rig-connect', connectionTimeoutMillis: 15_000 }));
  await db.connect();
  let serverVersion: string;
  const parameters: Record<string, string> = {};
  try {
    serverVersion = (await db.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0].v;
    const rows = await db.query<{ name: string; value: string }>(
      `SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY($1::text[]) ORDER BY name`,
      [PARAMETERS],
    );
    for (const r of rows.rows) parameters[r.name] = r.value;
  } finally {
    await db.end();
  }

  onProgress(`connect: service ${spec.serviceUrl}`);
  try {
    // Any HTTP answer shows the service is there; whether it is the right one is bring-up's to check.
    const res = await fetch(new URL(HEALTH_PATH, spec.serviceUrl), { signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
  } catch (err) {
    throw new Error(`the service at ${spec.serviceUrl} did not answer ${HEALTH_PATH}: ${(err as Error).message}`);
  }

  const rec: ExistingRecord = {
    campaignId,
    serviceUrl: spec.serviceUrl.replace(/\/+$/, ''),
    databaseUrlFrom: spec.databaseUrlFrom,
    ...(spec.appDatabaseUrlFrom ? { appDatabaseUrlFrom: spec.appDatabaseUrlFrom } : {}),
    database: where,
    serverVersion,
    parameters,
    connectedAt: new Date().toISOString(),
  };
  writeExistingRecord(rec);
  return { ...connectionFromRecord(rec), reused };
}

/** Host, port, database and role of a postgres URL; the password is dropped here and goes nowhere. */
function databaseOf(url: string): ExistingRecord['database'] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // The message never repeats the URL: it holds a password.
    throw new Error('existing.databaseUrlFrom: what it holds is not a URL (postgres://owner:password@host:port/database)');
  }
  if (!/^postgres(ql)?:$/.test(u.protocol)) throw new Error(`existing.databaseUrlFrom: the URL's scheme is ${u.protocol}, not postgres:`);
  return {
    host: u.hostname || 'localhost',
    port: Number(u.port || 5432),
    name: decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username),
    ownerRole: decodeURIComponent(u.username),
    appRole: APP_ROLE,
  };
}

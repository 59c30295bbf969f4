// Where the database calibration provokes its events: a database of its own on the rig's cluster
// (same server, same WAL, same log, same settings as what the campaign measures), made from the
// reference service's migrations, so the rows are of the ingest shape and the locked row is the one the
// every-request path updates (api_keys.last_used_at). It never touches the campaign's database: the
// campaign's rows, its table statistics and its vacuum state are what the repeats measure.
//
// The request sessions log in as a role of the calibration's own (the DB sampler is told it is the
// request role, exactly as a campaign's sampler is told hardcount_app), with a random password given to
// PostgreSQL as a SCRAM verifier only.
//
// Safe to run twice: an earlier run's database and role (a worker killed mid-way) are dropped first,
// and the cluster settings it changed are put back from the record it wrote before changing them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { migrate } from '../../../reference/migrate';
import { writeOnce } from '../../evidence/atomic';
import { scramSha256Verifier } from '../../../reference/scram';
import { asRole, onDatabase, pgConfig } from '../../pg/connection';

export const CALIBRATION_DATABASE = 'rig_dbcal';
export const CALIBRATION_REQUEST_ROLE = 'rig_dbcal_request';

export interface ScratchDb {
  /** The superuser on the calibration database. */
  url: string;
  /** The request role on the calibration database. */
  requestUrl: string;
  requestRole: string;
  tenantId: number;
  customerId: number;
  meterId: number;
  apiKeyId: number;
  drop(): Promise<void>;
}

async function onClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(pgConfig(url, { application_name: 'rig-dbcal' }));
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function dropAll(c: pg.Client): Promise<void> {
  await c.query(`DROP DATABASE IF EXISTS ${CALIBRATION_DATABASE} WITH (FORCE)`);
  await c.query(`DROP ROLE IF EXISTS ${CALIBRATION_REQUEST_ROLE}`);
}

/** The calibration database, migrated, with one tenant, customer, meter, cost rate and API key. */
export async function makeScratchDb(superuserUrl: string): Promise<ScratchDb> {
  const password = crypto.randomBytes(18).toString('base64url');
  await onClient(superuserUrl, async (c) => {
    await dropAll(c);
    await c.query(`CREATE ROLE ${CALIBRATION_REQUEST_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD ${c.escapeLiteral(scramSha256Verifier(password))}`);
    await c.query(`CREATE DATABASE ${CALIBRATION_DATABASE}`);
  });
  const url = onDatabase(superuserUrl, CALIBRATION_DATABASE);
  // The superuser made the database, so it owns it: the migrations run as it (migrate refuses anyone else).
  await migrate(url);
  const ids = await onClient(url, async (c) => {
    await c.query(`GRANT SELECT, UPDATE ON api_keys TO ${CALIBRATION_REQUEST_ROLE}`);
    const one = async (sql: string, args: unknown[]) => Number((await c.query<{ id: string }>(sql, args)).rows[0].id);
    const tenantId = await one("INSERT INTO tenants (name) VALUES ($1) RETURNING id::text", ['rig calibration']);
    const customerId = await one('INSERT INTO customers (tenant_id, external_id, name) VALUES ($1, $2, $2) RETURNING id::text', [tenantId, 'cus_calibration']);
    const meterId = await one("INSERT INTO meters (tenant_id, key, name) VALUES ($1, 'api_calls', 'API calls') RETURNING id::text", [tenantId]);
    await c.query("INSERT INTO provider_cost_rates (tenant_id, meter_id, unit_cost, valid_from) VALUES ($1, $2, 0.0001, now() - interval '1 day')", [tenantId, meterId]);
    const apiKeyId = await one('INSERT INTO api_keys (tenant_id, key_hash) VALUES ($1, $2) RETURNING id::text', [tenantId, crypto.randomBytes(32).toString('hex')]);
    return { tenantId, customerId, meterId, apiKeyId };
  });
  const u = new URL(superuserUrl);
  return {
    url,
    requestUrl: asRole(url, CALIBRATION_REQUEST_ROLE, password, CALIBRATION_DATABASE),
    requestRole: CALIBRATION_REQUEST_ROLE,
    ...ids,
    drop: () => onClient(onDatabase(u.toString(), 'postgres'), dropAll),
  };
}

/** The cluster settings the calibration changes, as they were before its first change. */
export interface SettingsRecord {
  /** The cluster they were read from (pg_control_system's system_identifier): never applied to another. */
  cluster: string;
  recorded_at: string;
  /**
   * Per setting: its line in postgresql.auto.conf before the calibration (null: none, so RESET puts it
   * back) and what a new session showed then (what the restore waits for).
   */
  settings: Record<string, { auto_conf: string | null; shown: string }>;
}

/**
 * Cluster settings changed for the calibration (ALTER SYSTEM, a superuser's), each put back as it was.
 * "As it was" comes from a record written once, atomically, before the first change, and never
 * rewritten: a run killed mid-case leaves its changes in postgresql.auto.conf, and a retry that read
 * "the earlier value" there would save the calibration's own (autovacuum_naptime=1s, log_timezone=
 * Europe/Berlin) and put those back, and every measured repeat would run with them (issue 47, item 4).
 * A retry finds the record, puts it back before it measures anything (begin), and restores from it.
 * Waits until a new session sees each value (a reload reaches the postmaster and every process
 * asynchronously).
 */
export class SystemSettings {
  private record: SettingsRecord | null = null;
  constructor(
    private readonly url: string,
    /** Every setting the calibration may change: all recorded at once, before the first. */
    private readonly names: readonly string[],
    /** Where the record is kept across attempts (a campaign's evidence folder). */
    private readonly recordFile: string,
  ) {}

  /** Before anything is measured: an earlier run's record means its changes may still be in force, so they are put back first. */
  async begin(): Promise<void> {
    if (fs.existsSync(this.recordFile)) await this.restore();
  }

  async set(name: string, value: string): Promise<void> {
    if (!this.names.includes(name)) throw new Error(`SystemSettings.set(${name}): not one of the settings recorded before the calibration changes them (${this.names.join(', ')})`);
    await this.recorded();
    await onClient(this.url, async (c) => {
      await c.query(`ALTER SYSTEM SET ${c.escapeIdentifier(name)} = ${c.escapeLiteral(value)}`);
      await c.query('SELECT pg_reload_conf()');
    });
    await this.until(name, value);
    // The background processes (checkpointer, autovacuum launcher) take the reload on their next wake-up.
    await new Promise((r) => setTimeout(r, 300));
  }

  /** Every recorded setting back as it was before the first change (of this run or a killed earlier one). */
  async restore(): Promise<void> {
    const rec = this.record ?? (await this.read());
    if (!rec) return;
    await onClient(this.url, async (c) => {
      for (const [name, was] of Object.entries(rec.settings)) {
        await c.query(was.auto_conf === null ? `ALTER SYSTEM RESET ${c.escapeIdentifier(name)}` : `ALTER SYSTEM SET ${c.escapeIdentifier(name)} = ${c.escapeLiteral(was.auto_conf)}`);
      }
      await c.query('SELECT pg_reload_conf()');
    });
    for (const [name, was] of Object.entries(rec.settings)) await this.until(name, was.shown);
  }

  /** The record: the one on file, else written now (once, atomically) from what the cluster has. */
  private async recorded(): Promise<SettingsRecord> {
    this.record ??= (await this.read()) ?? (await this.write());
    return this.record;
  }

  private async write(): Promise<SettingsRecord> {
    const rec = await onClient(this.url, async (c) => {
      const settings: SettingsRecord['settings'] = {};
      for (const name of this.names) {
        const r = (await c.query<{ setting: string; sourcefile: string | null }>('SELECT current_setting(name) AS setting, sourcefile FROM pg_settings WHERE name = $1', [name])).rows[0];
        if (!r) throw new Error(`the cluster has no setting ${name}`);
        settings[name] = { auto_conf: r.sourcefile?.endsWith('postgresql.auto.conf') ? r.setting : null, shown: r.setting };
      }
      return { cluster: await clusterId(c), recorded_at: new Date().toISOString(), settings };
    });
    writeOnce(this.recordFile, JSON.stringify(rec, null, 2) + '\n');
    return rec;
  }

  /** The record on file (null: none); one of another cluster is refused, naming both. */
  private async read(): Promise<SettingsRecord | null> {
    if (!fs.existsSync(this.recordFile)) return null;
    const rec = JSON.parse(fs.readFileSync(this.recordFile, 'utf8')) as SettingsRecord;
    const here = await onClient(this.url, clusterId);
    if (rec.cluster !== here) {
      throw new Error(`${this.recordFile} records the settings of cluster ${rec.cluster}, not of this one (${here}): it cannot put this cluster's settings back; remove it (or give the calibration another --out) and check this cluster's ${Object.keys(rec.settings).join(', ')} by hand`);
    }
    return rec;
  }

  /** Until a new session shows `value` for `name` (compared as SHOW prints it, or as given). */
  private async until(name: string, value: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const shown = await onClient(this.url, async (c) => (await c.query<{ v: string }>('SELECT current_setting($1) AS v', [name])).rows[0].v);
      if (shown === value || Date.now() > deadline) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function clusterId(c: pg.Client): Promise<string> {
  return (await c.query<{ id: string }>('SELECT system_identifier::text AS id FROM pg_control_system()')).rows[0].id;
}

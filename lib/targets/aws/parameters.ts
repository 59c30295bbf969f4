// The spec's `database` block as an RDS DB parameter group: RDS takes each setting in the unit of
// pg_settings (shared_buffers in 8 kB pages, min/max_wal_size in MB), not "4GB". The group is made
// from its family's defaults and gets exactly what the spec names (every setting of the block is
// optional; one left out keeps the family's default, e.g. shared_buffers at 25 % of the instance's
// memory), plus the marker logging the run journal reads (postgres-log.ts): RDS's defaults log a
// checkpoint only as PostgreSQL's do and an autovacuum pass only from 10 s (PG 11-14; upstream's
// 10 min from 15), so short passes would leave no mark. Booleans go as RDS's parameter groups list
// them (AllowedValues 0,1). log_timezone is not sent: RDS's default groups log in UTC (the logging
// parameters of the RDS User Guide; not re-read against a live group here), and sending a setting RDS
// keeps for itself would fail ModifyDBParameterGroup after the security groups exist; the settings
// read back from pg_settings into the evidence are what show it.
import type { DbParameters } from '../target';

export interface RdsParameter {
  name: string;
  value: string;
  /** Static parameters (shared_buffers) apply at the next reboot; the instance is created with them. */
  applyMethod: 'immediate' | 'pending-reboot';
}

const UNIT_KB: Record<string, number> = { kb: 1, mb: 1024, gb: 1024 * 1024, tb: 1024 * 1024 * 1024 };

/** "4GB" -> kB; a bare number is taken as kB. Throws naming the parameter on anything else. */
export function sizeInKb(name: string, value: string): number {
  const m = /^\s*(\d+)\s*(kB|MB|GB|TB)?\s*$/i.exec(value);
  if (!m) throw new Error(`database.${name}: "${value}" is not a PostgreSQL size such as "4GB" or "512MB"`);
  return Number(m[1]) * UNIT_KB[(m[2] ?? 'kB').toLowerCase()];
}

/**
 * The family an engine version is expected to have ("16.9" or "16" -> postgres16), for the offline
 * dry run only: provisioning uses DescribeDBEngineVersions' DBParameterGroupFamily (preflight-engine.ts).
 */
export function parameterGroupFamily(engineVersion: string): string {
  return `postgres${engineVersion.split('.')[0]}`;
}

/** The marker logging every rig's database runs with, as the local cluster does (local/provision.ts postgresParameters). */
export const MARKER_LOGGING: readonly RdsParameter[] = [
  { name: 'log_autovacuum_min_duration', value: '0', applyMethod: 'immediate' },
  { name: 'log_checkpoints', value: '1', applyMethod: 'immediate' },
];

/** Each parameter the block names (a missing one keeps RDS's default) and the marker logging; `extra` is not passed to RDS. */
export function rdsParameters(db: DbParameters): RdsParameter[] {
  const out: RdsParameter[] = [...MARKER_LOGGING];
  if (db.shared_buffers !== undefined) out.push({ name: 'shared_buffers', value: String(Math.floor(sizeInKb('shared_buffers', db.shared_buffers) / 8)), applyMethod: 'pending-reboot' });
  if (db.min_wal_size !== undefined) out.push({ name: 'min_wal_size', value: String(Math.floor(sizeInKb('min_wal_size', db.min_wal_size) / 1024)), applyMethod: 'immediate' });
  if (db.max_wal_size !== undefined) out.push({ name: 'max_wal_size', value: String(Math.floor(sizeInKb('max_wal_size', db.max_wal_size) / 1024)), applyMethod: 'immediate' });
  if (db.autovacuum_vacuum_insert_scale_factor !== undefined) {
    out.push({ name: 'autovacuum_vacuum_insert_scale_factor', value: String(db.autovacuum_vacuum_insert_scale_factor), applyMethod: 'immediate' });
  }
  if (db.wal_compression !== undefined) out.push({ name: 'wal_compression', value: db.wal_compression, applyMethod: 'immediate' });
  return out;
}

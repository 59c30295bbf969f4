// The spec's `database` block as an RDS DB parameter group: RDS takes each setting in the unit of
// pg_settings (shared_buffers in 8 kB pages, min/max_wal_size in MB), not "4GB". Parameters the spec
// leaves out keep RDS's own defaults, since the group starts from its family's defaults. Note: the
// campaign spec fills its own defaults into `database` (sized for a laptop, 256MB of shared_buffers),
// so an AWS spec should state the block in full; examples/aws.json does.
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

/** Each parameter the block sets (a missing one keeps RDS's default); `extra` is not passed to RDS. */
export function rdsParameters(db: DbParameters): RdsParameter[] {
  const out: RdsParameter[] = [];
  if (db.shared_buffers !== undefined) out.push({ name: 'shared_buffers', value: String(Math.floor(sizeInKb('shared_buffers', db.shared_buffers) / 8)), applyMethod: 'pending-reboot' });
  if (db.min_wal_size !== undefined) out.push({ name: 'min_wal_size', value: String(Math.floor(sizeInKb('min_wal_size', db.min_wal_size) / 1024)), applyMethod: 'immediate' });
  if (db.max_wal_size !== undefined) out.push({ name: 'max_wal_size', value: String(Math.floor(sizeInKb('max_wal_size', db.max_wal_size) / 1024)), applyMethod: 'immediate' });
  if (db.autovacuum_vacuum_insert_scale_factor !== undefined) {
    out.push({ name: 'autovacuum_vacuum_insert_scale_factor', value: String(db.autovacuum_vacuum_insert_scale_factor), applyMethod: 'immediate' });
  }
  if (db.wal_compression !== undefined) out.push({ name: 'wal_compression', value: db.wal_compression, applyMethod: 'immediate' });
  return out;
}

// The local target's database settings where the spec leaves one out (spec `database`, each optional):
// RDS's rule for shared_buffers (its parameter groups default to {DBInstanceClassMemory/32768} pages,
// 25 % of the instance's memory), scaled from this host's memory but kept between PostgreSQL's own
// default, 128MB, and 1GB: a local rig shares its host with the service, the load generator, Temporal
// and whatever else a laptop runs, so a rehearsal on a 64-GB workstation does not take 16 GB. The other
// settings are PostgreSQL's own defaults, written out so that the rig record (and the page) names them.
import os from 'node:os';
import type { DbParameters } from '../target';

const MB = 1024 * 1024;
export const LOCAL_SHARED_BUFFERS_MIN_MB = 128;
export const LOCAL_SHARED_BUFFERS_MAX_MB = 1024;

/** shared_buffers for a host with `totalBytes` of memory: 25 %, within 128MB-1GB, in whole MB. */
export function localSharedBuffers(totalBytes: number): string {
  const quarter = Math.floor(totalBytes / 4 / MB);
  return `${Math.min(LOCAL_SHARED_BUFFERS_MAX_MB, Math.max(LOCAL_SHARED_BUFFERS_MIN_MB, quarter))}MB`;
}

/** The local defaults for a host with `totalBytes` of memory. */
export function localDatabaseDefaults(totalBytes: number = os.totalmem()): Required<Omit<DbParameters, 'extra'>> {
  return {
    shared_buffers: localSharedBuffers(totalBytes),
    min_wal_size: '80MB',
    max_wal_size: '1GB',
    autovacuum_vacuum_insert_scale_factor: 0.2,
    wal_compression: 'off',
  };
}

/** The spec's settings over the local defaults: what the spec names wins, the rest is filled. */
export function withLocalDefaults(db: DbParameters, totalBytes?: number): DbParameters {
  const defaults = localDatabaseDefaults(totalBytes);
  const named = Object.fromEntries(Object.entries(db).filter(([, v]) => v !== undefined));
  return { ...defaults, ...named };
}

// How often the DB sampler takes its snapshot of pg_stat_activity during a repeat or rung: dense enough
// that a share of waits rests on at least MIN_DB_SNAPSHOTS snapshots (a 20-s rung at the old 5-s
// interval had four), never denser than the floor (a snapshot costs the database three catalog reads)
// and never sparser than the slow counters' 5 s. Pure.

/** Snapshots a repeat's share of waits should rest on, at the least. */
export const MIN_DB_SNAPSHOTS = 100;
/** Aimed for, so that a slow snapshot or two (a skipped tick) still leaves MIN_DB_SNAPSHOTS. */
const TARGET_DB_SNAPSHOTS = 150;
export const DB_SNAPSHOT_FLOOR_MS = 100;
export const DB_SNAPSHOT_CEILING_MS = 5000;

/** The snapshot interval for a load of `seconds` seconds. */
export function dbSnapshotIntervalMs(seconds: number): number {
  if (!(seconds > 0)) throw new Error(`a load's seconds must be positive, not ${seconds}`);
  const ms = Math.floor((seconds * 1000) / TARGET_DB_SNAPSHOTS);
  return Math.min(DB_SNAPSHOT_CEILING_MS, Math.max(DB_SNAPSHOT_FLOOR_MS, ms));
}

/**
 * Bytes of DB sampler evidence a load of `seconds` leaves, at the most: its snapshots times a snapshot
 * row's size (measured ~0.6 KB with a request pool of 20 and the background processes at work; 1 KB
 * with room), plus the first row's settings (~4 KB).
 */
export const DB_SNAPSHOT_BYTES = 1024;
export function dbSamplerBytes(seconds: number): number {
  return Math.ceil((seconds * 1000) / dbSnapshotIntervalMs(seconds)) * DB_SNAPSHOT_BYTES + 4096;
}

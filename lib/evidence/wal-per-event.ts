// WAL written per event for one repeat: a pure function of pg_stat_wal at the repeat's start and end and
// the rows the repeat reconciled. The spec's product finding (#823) is stated in exactly these units:
// ~1.2 KB and 7.7 WAL records per event; a heap insert plus five index entries is ~6 records.

/**
 * Which count a repeat's WAL bytes are (recorded with them, shown beside the figure). pg_stat_wal's
 * wal_bytes sums each inserted record's length (xlog.c, XLogInsertRecord: `pgWalUsage.wal_bytes +=
 * rechdr->xl_tot_len`), so a segment switch adds only its switch record. The insert-LSN difference also
 * counts the rest of the segment a switch skips (pg_switch_wal, archive_timeout: up to 16 MB locally,
 * 64 MB on RDS) and every page header: the measure of evidence recorded before issue 47.
 */
export type WalBytesMeasure = 'wal_bytes (pg_stat_wal)' | 'insert LSN difference';
export const WAL_BYTES_STAT: WalBytesMeasure = 'wal_bytes (pg_stat_wal)';
export const WAL_BYTES_LSN: WalBytesMeasure = 'insert LSN difference';

export interface WalCounters {
  wal_records: number;
  wal_fpi: number;
  wal_bytes: number;
  /**
   * pg_current_wal_insert_lsn() as a byte position. pg_stat_wal lags: a backend publishes its counters
   * at most once a second while busy, and one left idle after its last transaction only after
   * PGSTAT_IDLE_INTERVAL (10 s; measured on PG15). So read the end of a repeat WAL_STATS_LAG_MS after its
   * load stopped, or after the load's connections closed (a backend publishes as it exits). The LSN has
   * no lag and cross-checks the bytes (it also counts page headers and every other session's WAL).
   */
  lsn_bytes?: number;
}

/**
 * How long after a load stops pg_stat_wal can still be missing its WAL (see WalCounters). PG 15's
 * pgstat_report_stat flushes at most every PGSTAT_MIN_INTERVAL (1 s); a backend that goes idle less
 * than that after its last flush is told to come back after PGSTAT_IDLE_INTERVAL (10 s). The one
 * constant for every reader: the repeat's WAL bracket (wal-bracket.ts) and bench/target.ts.
 */
export const WAL_STATS_LAG_MS = 11_000;

/**
 * WAL_STATS_LAG_MS, except in the test suite (RIG_TESTING=1), where a repeat of a few seconds would
 * spend more time waiting than loading: there RIG_TEST_WAL_STATS_LAG_MS, default 1500 ms (past
 * PGSTAT_MIN_INTERVAL). The LSN figure has no lag either way; the wait it took is in wal-bracket.json.
 */
export function walStatsLagMs(): number {
  if (process.env.RIG_TESTING !== '1') return WAL_STATS_LAG_MS;
  const v = Number(process.env.RIG_TEST_WAL_STATS_LAG_MS ?? 1500);
  return Number.isFinite(v) && v >= 0 ? v : WAL_STATS_LAG_MS;
}

export interface WalPerEvent {
  events: number;
  walRecords: number;
  walFpi: number;
  walBytes: number;
  recordsPerEvent: number;
  fpiPerEvent: number;
  bytesPerEvent: number;
  /** WAL bytes by insert-LSN difference per event, when both readings have it. */
  lsnBytesPerEvent?: number;
}

export function walPerEvent(start: WalCounters, end: WalCounters, events: number): WalPerEvent {
  if (!Number.isInteger(events) || events <= 0) throw new Error(`walPerEvent: events must be a positive integer, not ${events}`);
  const d = {
    walRecords: end.wal_records - start.wal_records,
    walFpi: end.wal_fpi - start.wal_fpi,
    walBytes: end.wal_bytes - start.wal_bytes,
  };
  if (d.walRecords < 0 || d.walBytes < 0 || d.walFpi < 0) {
    throw new Error('walPerEvent: the end counters are below the start (pg_stat_wal was reset in between); the repeat has no WAL figure');
  }
  const out: WalPerEvent = {
    events,
    ...d,
    recordsPerEvent: d.walRecords / events,
    fpiPerEvent: d.walFpi / events,
    bytesPerEvent: d.walBytes / events,
  };
  if (start.lsn_bytes !== undefined && end.lsn_bytes !== undefined) out.lsnBytesPerEvent = (end.lsn_bytes - start.lsn_bytes) / events;
  return out;
}

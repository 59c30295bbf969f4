// A repeat's WAL figure from the readings that bracket its load (wal-bracket.json, pure). Bytes per
// event are pg_stat_wal's wal_bytes over the reconciled rows, read after the statistics flush, like
// the records and full-page images beside them: the sum of the records' own lengths, which a segment
// switch inside the load (pg_switch_wal, archive_timeout: 16 MB locally, 64 MB on RDS) does not pad
// (wal-per-event.ts, WalBytesMeasure). A bracket recorded before issue 47 carries no `bytes_measure`;
// its figure stays the insert-LSN difference it was shown with, and the page names that measure. A
// repeat recorded before the bracket existed (or whose readings failed) keeps the old derivation, the
// first-to-last sampler row, and says so: that window starts before the generator's child and ends up
// to a sampler interval before the load, so it runs low.
import type { WalBracketFile } from '../wal-bracket';
import { WAL_BYTES_LSN, WAL_BYTES_STAT, type WalBytesMeasure } from '../wal-per-event';
import type { WalSummary } from './db-summary';

export type { WalBytesMeasure } from '../wal-per-event';

/** Where a repeat's WAL figure comes from. */
export type WalBasis = 'load bracket' | 'sampler rows';

/** Why the sampler-row figure is not the bracket's, as the page says it. */
export const SAMPLER_ROWS_NOTE = 'first to last sampler row (no reading at the load\'s edges): runs low';

/** What each measure of the bytes means, as the page says it beside the figure. */
export const WAL_BYTES_MEASURE_NOTE: Record<WalBytesMeasure, string> = {
  'wal_bytes (pg_stat_wal)': 'the records\' own bytes, without segment-switch padding',
  'insert LSN difference': 'recorded before issue 47: counts page headers and the rest of a segment a WAL switch skipped',
};

const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;

/** The measure a bracket file's bytes are: its own, else (written before issue 47) the insert-LSN difference. */
export function bracketMeasure(b: Pick<WalBracketFile, 'bytes_measure'>): WalBytesMeasure {
  return b.bytes_measure ?? WAL_BYTES_LSN;
}

/** The WAL summary from the bracket, or why there is none (the caller then keeps the sampler rows'). */
export function walFromBracket(b: WalBracketFile, events: number | null): { wal: WalSummary | null; problem: string | null } {
  if (!b.start || !b.end || !b.end_stats) {
    const missing = !b.start ? 'the reading before the first request' : !b.end ? 'the reading after the last reply' : 'pg_stat_wal after the flush';
    return { wal: null, problem: `no ${missing}${b.problems.length ? ` (${b.problems.join('; ')})` : ''}` };
  }
  if (events === null || events <= 0) return { wal: null, problem: 'no events to divide by' };
  const measure = bracketMeasure(b);
  const lsnBytes = b.end.lsn_bytes - b.start.lsn_bytes;
  const bytes = measure === WAL_BYTES_STAT ? b.end_stats.wal_bytes - b.start.wal_bytes : lsnBytes;
  const records = b.end_stats.wal_records - b.start.wal_records;
  const fpi = b.end_stats.wal_fpi - b.start.wal_fpi;
  if (bytes < 0 || lsnBytes < 0 || records < 0 || fpi < 0) return { wal: null, problem: 'the end readings are below the start (pg_stat_wal was reset in between)' };
  const seconds = (Date.parse(b.end.t) - Date.parse(b.start.t)) / 1000;
  return {
    problem: null,
    wal: {
      bytes,
      records,
      fpi,
      seconds: round(seconds, 1),
      bytes_per_s: seconds > 0 ? round(bytes / seconds, 1) : null,
      events,
      bytes_per_event: round(bytes / events, 1),
      records_per_event: round(records / events, 3),
      fpi_per_event: round(fpi / events, 4),
      lsn_bytes_per_event: round(lsnBytes / events, 1),
      bytes_measure: measure,
    },
  };
}

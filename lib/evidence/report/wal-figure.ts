// A repeat's WAL figure from the readings that bracket its load (wal-bracket.json, pure). Bytes per
// event are the insert-LSN difference over the reconciled rows: no statistics lag, the same range
// pg_waldump or pg_walinspect would read. Records and full-page images per event are pg_stat_wal's,
// read after the statistics flush. A repeat recorded before the bracket existed (or whose readings
// failed) keeps the old derivation, the first-to-last sampler row, and says so: that window starts
// before the generator's child and ends up to a sampler interval before the load, so it runs low.
import type { WalBracketFile } from '../wal-bracket';
import type { WalSummary } from './db-summary';

/** Where a repeat's WAL figure comes from. */
export type WalBasis = 'load bracket' | 'sampler rows';

/** Why the sampler-row figure is not the bracket's, as the page says it. */
export const SAMPLER_ROWS_NOTE = 'first to last sampler row (no reading at the load\'s edges): runs low';

const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;

/** The WAL summary from the bracket, or why there is none (the caller then keeps the sampler rows'). */
export function walFromBracket(b: WalBracketFile, events: number | null): { wal: WalSummary | null; problem: string | null } {
  if (!b.start || !b.end || !b.end_stats) {
    const missing = !b.start ? 'the reading before the first request' : !b.end ? 'the reading after the last reply' : 'pg_stat_wal after the flush';
    return { wal: null, problem: `no ${missing}${b.problems.length ? ` (${b.problems.join('; ')})` : ''}` };
  }
  if (events === null || events <= 0) return { wal: null, problem: 'no events to divide by' };
  const bytes = b.end.lsn_bytes - b.start.lsn_bytes;
  const records = b.end_stats.wal_records - b.start.wal_records;
  const fpi = b.end_stats.wal_fpi - b.start.wal_fpi;
  if (bytes < 0 || records < 0 || fpi < 0) return { wal: null, problem: 'the end readings are below the start (pg_stat_wal was reset in between)' };
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
      lsn_bytes_per_event: round(bytes / events, 1),
    },
  };
}

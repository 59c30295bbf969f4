// What the database and the host were doing during one repeat, from its sampler rows (pure).
// These are diagnostics beside the gated figures ("what stops it"), never inputs to a gate.
//
// - Wait events: each DB sample groups pg_stat_activity by state and wait event. What counts as a
//   backend "working" is what Performance Insights' average-active-sessions view counts: backends in
//   state 'active' (by their wait event, or CPU when they wait on nothing), plus background processes
//   (no state) waiting on something other than their idle loop (wait type Activity), e.g. the
//   checkpointer in IO:DataFileSync. Idle sessions and a client's own think time (ClientRead) are not
//   work. Summed over the samples, an event's share is how much of the sampled work it accounts for.
// - WAL: pg_stat_wal counters are cumulative, so the repeat's WAL is last - first, per event by
//   lib/evidence/wal-per-event (divided by the reconciled rows). pg_stat_wal lags (see WalCounters),
//   so per-sample rates are approximate; the whole-repeat figure is what the page reports.
// - CPU: medians and maxima over the host rows (busy = 100 - idle), and of the database server's own
//   CPU only when its sampler saw it (cpu_pct).
import { median } from '../../protocol/percentile';
import { isSampleError, type DbSample, type DbSampleRow, type HostSample, type HostSampleRow } from '../records';
import { walPerEvent } from '../wal-per-event';

export interface Spread {
  median: number;
  max: number;
}

export interface WaitShare {
  event: string;
  /** Backend-samples in this event, over all rows. */
  count: number;
  /** count / all backend-samples, 0..1. */
  share: number;
}

export interface WalSummary {
  bytes: number;
  records: number;
  fpi: number;
  /** Seconds between the first and the last sample. */
  seconds: number;
  bytes_per_s: number | null;
  /** The events it is divided by (reconciled rows, else events acknowledged). */
  events: number | null;
  bytes_per_event: number | null;
  records_per_event: number | null;
  fpi_per_event: number | null;
  /** Insert-LSN bytes per event (no statistics lag; counts page headers and every session's WAL). */
  lsn_bytes_per_event: number | null;
}

export interface DbSeries {
  /** Seconds from the start of the repeat (or from the first sample when the start is unknown). */
  t_s: number[];
  /** Backends per wait event at each t_s (the top events, the rest summed under "other"). */
  waits: Array<{ event: string; values: number[] }>;
  /** Between consecutive samples, at the later one's t_s. */
  wal_mb_per_s: Array<[number, number]>;
  wal_records_per_s: Array<[number, number]>;
}

export interface DbSummary {
  rows: number;
  /** Sampler error rows (gaps). */
  errors: number;
  waits: WaitShare[];
  backend_samples: number;
  wal: WalSummary | null;
  /** Why there is no WAL figure, when there is none. */
  wal_problem: string | null;
  cpu_pct: Spread | null;
  series: DbSeries;
}

export interface HostSummary {
  rows: number;
  errors: number;
  cpu_busy_pct: Spread | null;
  iowait_pct: Spread | null;
  /** CPU steal (the hypervisor's share): null in samples written before it was kept. */
  steal_pct: Spread | null;
}

/** Wait events kept as their own series in the stacked chart; the rest become "other". */
export const TOP_WAIT_SERIES = 6;

const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const spread = (xs: number[]): Spread | null => (xs.length ? { median: round(median(xs)), max: round(Math.max(...xs)) } : null);
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Seconds of `ts` after `origin` (ISO strings), to 0.1 s. */
export function offsetS(ts: string, origin: string): number {
  return Math.round((Date.parse(ts) - Date.parse(origin)) / 100) / 10;
}

/** The work a sample shows, by wait event ("Type:Event", or "CPU" for an active backend waiting on nothing). */
export function workByEvent(row: DbSample): Map<string, number> {
  const out = new Map<string, number>();
  for (const w of row.waits) {
    const working = w.state === 'active' || (w.state === null && w.wait_event_type !== 'Activity' && w.wait_event_type !== null);
    if (!working || w.count <= 0) continue;
    const key = w.wait_event_type && w.wait_event ? `${w.wait_event_type}:${w.wait_event}` : 'CPU';
    out.set(key, (out.get(key) ?? 0) + w.count);
  }
  return out;
}

export function summarizeDb(rows: readonly DbSampleRow[], startedAt: string | null, events: number | null): DbSummary {
  const errors = rows.filter(isSampleError).length;
  const sorted = rows.filter((r): r is DbSample & { cpu_pct?: number } => !isSampleError(r)).sort((a, b) => Date.parse(a.t) - Date.parse(b.t) || a.seq - b.seq);
  const origin = startedAt ?? sorted[0]?.t ?? null;
  const t = sorted.map((r) => (origin ? offsetS(r.t, origin) : 0));
  const work = sorted.map(workByEvent);

  const totals = new Map<string, number>();
  for (const m of work) for (const [ev, n] of m) totals.set(ev, (totals.get(ev) ?? 0) + n);
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  const waits = [...totals.entries()]
    .sort(([ea, a], [eb, b]) => b - a || byName(ea, eb))
    .map(([event, count]) => ({ event, count: round(count), share: all > 0 ? round(count / all, 4) : 0 }));

  const top = waits.slice(0, TOP_WAIT_SERIES).map((w) => w.event);
  const series: DbSeries = {
    t_s: t,
    waits: top.map((event) => ({ event, values: work.map((m) => m.get(event) ?? 0) })),
    wal_mb_per_s: [],
    wal_records_per_s: [],
  };
  if (waits.length > top.length) {
    series.waits.push({ event: 'other', values: work.map((m) => [...m.entries()].reduce((s, [ev, n]) => (top.includes(ev) ? s : s + n), 0)) });
  }

  let wal: WalSummary | null = null;
  let walProblem: string | null = null;
  if (sorted.length >= 2) {
    for (let i = 1; i < sorted.length; i++) {
      const a = sorted[i - 1];
      const b = sorted[i];
      const dt = (Date.parse(b.t) - Date.parse(a.t)) / 1000;
      if (dt <= 0) continue;
      series.wal_mb_per_s.push([t[i], round((b.wal.wal_bytes - a.wal.wal_bytes) / dt / 1e6)]);
      series.wal_records_per_s.push([t[i], round((b.wal.wal_records - a.wal.wal_records) / dt)]);
    }
    const first = sorted[0];
    const last = sorted[sorted.length - 1];
    const seconds = (Date.parse(last.t) - Date.parse(first.t)) / 1000;
    const bytes = last.wal.wal_bytes - first.wal.wal_bytes;
    wal = {
      bytes,
      records: last.wal.wal_records - first.wal.wal_records,
      fpi: last.wal.wal_fpi - first.wal.wal_fpi,
      seconds: round(seconds, 1),
      bytes_per_s: seconds > 0 ? round(bytes / seconds, 1) : null,
      events: null,
      bytes_per_event: null,
      records_per_event: null,
      fpi_per_event: null,
      lsn_bytes_per_event: null,
    };
    if (events !== null && events > 0) {
      try {
        const p = walPerEvent(first.wal, last.wal, events);
        wal.events = events;
        wal.bytes_per_event = round(p.bytesPerEvent, 1);
        wal.records_per_event = round(p.recordsPerEvent, 3);
        wal.fpi_per_event = round(p.fpiPerEvent, 4);
        wal.lsn_bytes_per_event = p.lsnBytesPerEvent === undefined ? null : round(p.lsnBytesPerEvent, 1);
      } catch (err) {
        walProblem = (err as Error).message;
        wal = null;
      }
    } else walProblem = 'no events to divide by';
  } else walProblem = `${sorted.length} usable DB sample(s): a WAL figure needs two`;
  const cpu = sorted.map((r) => r.cpu_pct).filter((x): x is number => typeof x === 'number');
  return { rows: sorted.length, errors, waits, backend_samples: round(all), wal, wal_problem: walProblem, cpu_pct: spread(cpu), series };
}

export function summarizeHost(rows: readonly HostSampleRow[]): HostSummary {
  const ok = rows.filter((r): r is HostSample => !isSampleError(r));
  return {
    rows: ok.length,
    errors: rows.length - ok.length,
    cpu_busy_pct: spread(ok.map((r) => 100 - r.cpu.id)),
    iowait_pct: spread(ok.map((r) => r.cpu.wa)),
    steal_pct: spread(ok.map((r) => r.cpu.st).filter((x) => typeof x === 'number')),
  };
}

/** The database server's CPU: only what a sampler measured of the server itself (never the whole host). */
export function dbCpu(db: DbSummary | null): Spread | null {
  return db?.cpu_pct ?? null;
}

/**
 * The top wait events over several repeats' DB summaries: each event's backend-samples summed, as a
 * share of all sampled work (the same measure as one repeat's), biggest first, ties by name.
 */
export function topWaits(dbs: readonly DbSummary[], limit = 5): WaitShare[] {
  const totals = new Map<string, number>();
  let all = 0;
  for (const db of dbs) {
    for (const w of db.waits) totals.set(w.event, (totals.get(w.event) ?? 0) + w.count);
    all += db.backend_samples;
  }
  return [...totals.entries()]
    .sort(([ea, a], [eb, b]) => b - a || byName(ea, eb))
    .slice(0, limit)
    .map(([event, count]) => ({ event, count: round(count), share: all > 0 ? round(count / all, 4) : 0 }));
}

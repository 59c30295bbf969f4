// What the database and the host were doing during one repeat, from its sampler rows (pure).
// These are diagnostics beside the gated figures ("what stops it"), never inputs to a gate.
//
// - Wait events: each DB snapshot groups pg_stat_activity by whose backends (`who`, db-sampler.ts),
//   state and wait event. "What requests waited on" counts only the service's client backends (who
//   'request': backend_type 'client backend' of the service's role) in state 'active': by their wait
//   event, or REQUEST_CPU when they wait on nothing (on a CPU, or runnable and waiting for one: the
//   sampler cannot tell the two apart). An 'active' ClientRead is the backend waiting for the client's
//   next message, the client's time, not the database's: counted apart (client_read), never as work.
//   Summed over the snapshots, an event's share is how much of the requests' sampled work it accounts
//   for, and its count (backend-samples) says what the share rests on.
// - The database's own work gets rows of its own (own_work): background processes (checkpointer,
//   walwriter, autovacuum workers, background writer) in anything but their idle loop (wait type
//   Activity, which the sampler leaves out), and the rig's or anyone else's sessions while active. The
//   checkpointer pacing itself (Timeout:CheckpointWriteDelay), autovacuum's cost delay
//   (Timeout:VacuumDelay) and the walwriter's IO:WALSync are there, never in the requests' shares.
//   Rows written before the sampler kept `who` count every client backend as a request.
// - WAL: pg_stat_wal counters are cumulative, so the repeat's WAL is last - first, per event by
//   lib/evidence/wal-per-event (divided by the reconciled rows). pg_stat_wal lags (see WalCounters),
//   so per-sample rates are approximate (taken over at least WAL_RATE_STEP_S); the whole-repeat figure
//   is what the page reports.
// - CPU: medians and maxima over the host rows (busy = 100 - idle), and of the database server's own
//   CPU only when its sampler saw it (cpu_pct).
import { median } from '../../protocol/percentile';
import type { DbSettings, WaitCount } from '../db-sampler';
import { isSampleError, type DbSample, type DbSampleRow, type HostSample, type HostSampleRow } from '../records';
import { WAL_BYTES_STAT, walPerEvent, type WalBytesMeasure } from '../wal-per-event';

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

/** A row of the database's own work: whose processes, in what, how many backend-samples. */
export interface OwnWork {
  /** 'checkpointer', 'walwriter', 'autovacuum worker', 'rig', 'other client', ... */
  who: string;
  event: string;
  count: number;
  /** count / snapshots: how many of these processes were in it at a time, on average. */
  mean: number;
}

/** What an active backend waiting on nothing is: running, or runnable and waiting for a CPU. */
export const REQUEST_CPU = 'no wait event (on CPU or waiting to run)';
/** Per-sample WAL rates are taken over at least this long (pg_stat_wal lags ~1 s). */
export const WAL_RATE_STEP_S = 1;

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
  /** Insert-LSN bytes per event (no statistics lag; counts page headers, segment-switch padding and every session's WAL). */
  lsn_bytes_per_event: number | null;
  /** What `bytes` counts (wal-per-event.ts): pg_stat_wal's wal_bytes, or (a bracket before issue 47) the insert-LSN difference. */
  bytes_measure: WalBytesMeasure;
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
  /** Snapshots (sampler rows without error). */
  rows: number;
  /** Sampler error rows (gaps). */
  errors: number;
  /** What requests waited on: the service's client backends, active. */
  waits: WaitShare[];
  /** The requests' backend-samples the shares are of. */
  backend_samples: number;
  /** Requests' backend-samples in an active ClientRead (waiting for the client): not work, not in the shares. */
  client_read?: number;
  /** The database's own work and other sessions', biggest first. */
  own_work?: OwnWork[];
  /** The cluster's settings read back at the sampler's start (its first row), when it kept them. */
  settings?: DbSettings | null;
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

/** Whose backends a group is; rows written before the sampler kept it: every client backend a request. */
export function whoOf(w: Pick<WaitCount, 'who' | 'backend_type'>): string {
  return w.who ?? (w.backend_type === 'client backend' || w.backend_type === null ? 'request' : w.backend_type);
}

const eventOf = (w: Pick<WaitCount, 'wait_event_type' | 'wait_event'>, cpu: string) => (w.wait_event_type && w.wait_event ? `${w.wait_event_type}:${w.wait_event}` : cpu);
const isClientRead = (w: Pick<WaitCount, 'wait_event_type' | 'wait_event'>) => w.wait_event_type === 'Client' && w.wait_event === 'ClientRead';

/** The requests' work a sample shows, by wait event ("Type:Event", or REQUEST_CPU when active on no wait). */
export function workByEvent(row: Pick<DbSample, 'waits'>): Map<string, number> {
  const out = new Map<string, number>();
  for (const w of row.waits) {
    if (whoOf(w) !== 'request' || w.state !== 'active' || isClientRead(w) || w.count <= 0) continue;
    const key = eventOf(w, REQUEST_CPU);
    out.set(key, (out.get(key) ?? 0) + w.count);
  }
  return out;
}

/** Everyone else's work in a sample, by "who\tevent": background processes outside their idle loop, other sessions while active. */
export function ownWorkByEvent(row: Pick<DbSample, 'waits'>): Map<string, number> {
  const out = new Map<string, number>();
  for (const w of row.waits) {
    const who = whoOf(w);
    if (who === 'request' || w.count <= 0) continue;
    const working = w.state === 'active' ? !isClientRead(w) : w.state === null && w.wait_event_type !== 'Activity';
    if (!working) continue;
    const key = `${who}\t${eventOf(w, 'no wait event (on CPU or waiting to run)')}`;
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

  let clientRead = 0;
  const own = new Map<string, number>();
  for (const r of sorted) {
    for (const w of r.waits) if (whoOf(w) === 'request' && w.state === 'active' && isClientRead(w)) clientRead += w.count;
    for (const [k, n] of ownWorkByEvent(r)) own.set(k, (own.get(k) ?? 0) + n);
  }
  const ownWork: OwnWork[] = [...own.entries()]
    .sort(([ka, a], [kb, b]) => b - a || byName(ka, kb))
    .map(([k, count]) => {
      const [who, event] = k.split('\t');
      return { who, event, count, mean: sorted.length ? round(count / sorted.length, 3) : 0 };
    });
  const settings = sorted.find((r) => r.settings)?.settings ?? null;

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
    // Rates over steps of at least WAL_RATE_STEP_S: dense snapshots would chart pg_stat_wal's lag.
    let a = sorted[0];
    for (let i = 1; i < sorted.length; i++) {
      const b = sorted[i];
      const dt = (Date.parse(b.t) - Date.parse(a.t)) / 1000;
      if (dt < WAL_RATE_STEP_S) continue;
      series.wal_mb_per_s.push([t[i], round((b.wal.wal_bytes - a.wal.wal_bytes) / dt / 1e6)]);
      series.wal_records_per_s.push([t[i], round((b.wal.wal_records - a.wal.wal_records) / dt)]);
      a = b;
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
      bytes_measure: WAL_BYTES_STAT,
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
  return {
    rows: sorted.length,
    errors,
    waits,
    backend_samples: round(all),
    client_read: clientRead,
    own_work: ownWork,
    settings,
    wal,
    wal_problem: walProblem,
    cpu_pct: spread(cpu),
    series,
  };
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
 * The database's own work over several repeats' DB summaries: each (who, event)'s backend-samples
 * summed, and their mean per snapshot over all those repeats' snapshots, biggest first.
 */
export function ownWorkOver(dbs: readonly DbSummary[], limit = 6): OwnWork[] {
  const totals = new Map<string, number>();
  let snapshots = 0;
  for (const db of dbs) {
    for (const w of db.own_work ?? []) totals.set(`${w.who}\t${w.event}`, (totals.get(`${w.who}\t${w.event}`) ?? 0) + w.count);
    snapshots += db.rows;
  }
  return [...totals.entries()]
    .sort(([ka, a], [kb, b]) => b - a || byName(ka, kb))
    .slice(0, limit)
    .map(([k, count]) => {
      const [who, event] = k.split('\t');
      return { who, event, count, mean: snapshots ? round(count / snapshots, 3) : 0 };
    });
}

/** "Lock:transactionid 62 % (1,240)": a share with the backend-samples it rests on. */
export function shareText(w: WaitShare): string {
  return `${w.event} ${Math.round(w.share * 100)} % (${w.count.toLocaleString('en-US')})`;
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

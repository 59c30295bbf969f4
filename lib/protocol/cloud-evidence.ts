// Cloud evidence of one repeat on the aws target: the shapes of its three files (written by
// lib/targets/aws/evidence/collect.ts, read by the report) and their per-repeat summaries. Pure.
//
// These are diagnostics beside the DB sampler's figures, never inputs to a gate: a repeat passes or
// fails on its own samples and the database's counts. The files hold the series as the cloud gave
// them (evidence before summary); everything below is re-derived from them on every report.
//
// A collector that failed writes `{ error, source, window }` instead of its series, so the page can
// say "CloudWatch: AccessDenied ..." rather than leave the block blank.

/** The repeat's window: its load's start and end (ISO 8601). */
export interface CloudWindow {
  start: string;
  end: string;
}

/** What every cloud file carries, whether it holds data or an error. */
export interface CloudFileHead {
  /** Where the figures come from, in words the page prints beside them. */
  source: string;
  window: CloudWindow;
  collected_at: string;
}

export interface CloudErrorFile extends CloudFileHead {
  /** "<ErrorName>: <message>", first line only. */
  error: string;
}

/** One CloudWatch series (one metric, statistic Average, one period). */
export interface RdsSeries {
  metric: string;
  /** The unit AWS documents for the metric (GetMetricData does not return one; see cloudwatch.ts). */
  unit: string;
  /** Start of each period, ISO 8601, ascending. */
  timestamps: string[];
  values: number[];
  /** GetMetricData's StatusCode of the last page (Complete, PartialData, ...). */
  status: string;
}

export interface RdsMetricsFile extends CloudFileHead {
  db_instance: string;
  namespace: 'AWS/RDS';
  stat: 'Average';
  period_s: number;
  /** The window as asked of CloudWatch: rounded out to whole periods. */
  query: CloudWindow;
  /** True when every series had its last period when collection stopped. */
  complete: boolean;
  /** Seconds spent waiting for CloudWatch to publish the window's last period. */
  waited_s: number;
  series: RdsSeries[];
}

/** One disk of Enhanced Monitoring's diskIO list, one value per event. */
export interface OsDiskSeries {
  device: string;
  read_iops: Array<number | null>;
  write_iops: Array<number | null>;
  await_ms: Array<number | null>;
  avg_queue_len: Array<number | null>;
  /** KB/s read and written (readKbPS, writeKbPS): the average IO size is their sum over the IOPS. Absent in files written before tail attribution. */
  read_kb_ps?: Array<number | null>;
  write_kb_ps?: Array<number | null>;
}

export interface OsMetricsFile extends CloudFileHead {
  log_group: string;
  log_stream: string;
  /** Seconds between consecutive events (median), null with fewer than two. */
  granularity_s: number | null;
  /** Messages read in the window, and those that were not JSON of the expected shape. */
  events: number;
  unreadable: number;
  complete: boolean;
  /** One entry per event: its own `timestamp` field (ISO 8601). */
  t: string[];
  cpu_total_pct: Array<number | null>;
  cpu_wait_pct: Array<number | null>;
  cpu_steal_pct: Array<number | null>;
  load_1m: Array<number | null>;
  /** Enhanced Monitoring reports memory in kilobytes. */
  memory_total_kb: Array<number | null>;
  memory_free_kb: Array<number | null>;
  memory_cached_kb: Array<number | null>;
  disks: OsDiskSeries[];
}

export interface DbLoadSeries {
  /** "<db.wait_event.type>:<db.wait_event.name>", or "total" for the ungrouped line. */
  event: string;
  dimensions: Record<string, string>;
  timestamps: string[];
  values: Array<number | null>;
}

export interface DbLoadFile extends CloudFileHead {
  identifier: string;
  metric: 'db.load.avg';
  group: 'db.wait_event';
  period_s: number;
  aligned: CloudWindow | null;
  total: DbLoadSeries | null;
  by_wait_event: DbLoadSeries[];
}

export type CloudFile<T> = T | CloudErrorFile;

export function isCloudError(f: unknown): f is CloudErrorFile {
  return typeof f === 'object' && f !== null && typeof (f as { error?: unknown }).error === 'string';
}

/** The three files of one repeat as the report found them (null: not in the evidence). */
export interface CloudEvidence {
  rds: CloudFile<RdsMetricsFile> | null;
  os: CloudFile<OsMetricsFile> | null;
  load: CloudFile<DbLoadFile> | null;
}

/**
 * At most this long is spent after a repeat's load waiting for CloudWatch to publish the window's
 * last period (collect.ts), and the repeat activity's start-to-close timeout grows by it on aws.
 */
export const CLOUD_WAIT_MAX_S = 300;
/** What a whole collection may take beyond the wait (the calls themselves, paging). */
export const CLOUD_EVIDENCE_BUDGET_S = CLOUD_WAIT_MAX_S + 120;

// ---- summaries (pure) ----

export type Part<T> = { ok: T; source: string; period: string } | { error: string; source: string };

export interface RdsSummary {
  cpu_mean_pct: number | null;
  cpu_max_pct: number | null;
  read_iops_mean: number | null;
  write_iops_mean: number | null;
  queue_depth_max: number | null;
  read_latency_mean_ms: number | null;
  write_latency_mean_ms: number | null;
  freeable_memory_min_bytes: number | null;
  points: number;
  complete: boolean;
}

export interface OsSummary {
  steal_max_pct: number | null;
  wait_max_pct: number | null;
  cpu_max_pct: number | null;
  samples: number;
  unreadable: number;
}

export interface LoadSummary {
  /** The wait events with the highest mean db.load over the window, at most three. */
  top: Array<{ event: string; mean: number }>;
  /** Mean db.load over the window (all events), null without the total line. */
  mean_total: number | null;
}

export interface CloudSummary {
  rds: Part<RdsSummary> | null;
  os: Part<OsSummary> | null;
  load: Part<LoadSummary> | null;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const finite = (xs: ReadonlyArray<number | null | undefined>): number[] => xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
const mean = (xs: ReadonlyArray<number | null | undefined>): number | null => {
  const v = finite(xs);
  return v.length ? r3(v.reduce((a, b) => a + b, 0) / v.length) : null;
};
const max = (xs: ReadonlyArray<number | null | undefined>): number | null => {
  const v = finite(xs);
  return v.length ? r3(Math.max(...v)) : null;
};
const min = (xs: ReadonlyArray<number | null | undefined>): number | null => {
  const v = finite(xs);
  return v.length ? r3(Math.min(...v)) : null;
};

export function summarizeRds(f: RdsMetricsFile): RdsSummary {
  const values = (metric: string) => f.series.find((s) => s.metric === metric)?.values ?? [];
  // CloudWatch reports RDS latencies in seconds; the page speaks milliseconds.
  const ms = (metric: string) => values(metric).map((v) => v * 1000);
  return {
    cpu_mean_pct: mean(values('CPUUtilization')),
    cpu_max_pct: max(values('CPUUtilization')),
    read_iops_mean: mean(values('ReadIOPS')),
    write_iops_mean: mean(values('WriteIOPS')),
    queue_depth_max: max(values('DiskQueueDepth')),
    read_latency_mean_ms: mean(ms('ReadLatency')),
    write_latency_mean_ms: mean(ms('WriteLatency')),
    freeable_memory_min_bytes: min(values('FreeableMemory')),
    points: Math.max(0, ...f.series.map((s) => s.values.length)),
    complete: f.complete,
  };
}

export function summarizeOs(f: OsMetricsFile): OsSummary {
  return {
    steal_max_pct: max(f.cpu_steal_pct),
    wait_max_pct: max(f.cpu_wait_pct),
    cpu_max_pct: max(f.cpu_total_pct),
    samples: f.t.length,
    unreadable: f.unreadable,
  };
}

export function summarizeDbLoad(f: DbLoadFile, top = 3): LoadSummary {
  const ranked = f.by_wait_event
    .map((s) => ({ event: s.event, mean: mean(s.values) ?? 0 }))
    .sort((a, b) => b.mean - a.mean || (a.event < b.event ? -1 : a.event > b.event ? 1 : 0));
  return { top: ranked.slice(0, top), mean_total: f.total ? mean(f.total.values) : null };
}

function part<F extends CloudFileHead, S>(f: CloudFile<F> | null, summarize: (f: F) => S, period: (f: F) => string): Part<S> | null {
  if (!f) return null;
  if (isCloudError(f)) return { error: f.error, source: f.source };
  return { ok: summarize(f), source: f.source, period: period(f) };
}

/** The Cloud (RDS) block of one repeat; null when it has none of the three files (a local repeat). */
export function summarizeCloud(e: CloudEvidence): CloudSummary | null {
  if (!e.rds && !e.os && !e.load) return null;
  return {
    rds: part(e.rds, summarizeRds, (f) => `${f.period_s} s ${f.stat.toLowerCase()}s`),
    os: part(e.os, summarizeOs, (f) => (f.granularity_s === null ? 'one event' : `every ${f.granularity_s} s`)),
    load: part(e.load, (f) => summarizeDbLoad(f), (f) => `${f.period_s} s`),
  };
}

// "Tails attributed": a repeat's freeze-seconds and windows set beside the markers in its postgres.log,
// the WAL-segment creation waits its samplers saw, and its disk's per-second figures
// (lib/protocol/tail-attribution.ts classifies; this file gathers the evidence and lays out the table).
// The disk figures come from disk-samples.jsonl (local) or, without it, Enhanced Monitoring's
// cloud-os-metrics.json (aws). Pure.
import { isCloudError, type DbLoadFile, type OsMetricsFile } from '../../protocol/cloud-evidence';
import { diskSecondsFromLocal, diskSecondsFromOs, type DiskSecond, type LocalDiskRow } from '../../protocol/disk-seconds';
import { logMarkers } from '../../protocol/postgres-log';
import type { RunReport } from '../../protocol/run-report';
import { attributeTails, progressMarkers, REQUEST_PATH_TABLES, TAIL_CLASSES, walInitSightings, type SampledWaits } from '../../protocol/tail-attribution';
import { usesRollup, type ServiceSpec } from '../../protocol/service-spec';
import type { CampaignSpec } from '../../protocol/spec';
import { measuredConfigurations, variantSettings } from '../../protocol/variants';
import type { AttemptEvidence } from './load';
import { num, type Table } from './cells';
import type { TailsModel } from './model-types';

const DASH = '—';

function diskOf(a: AttemptEvidence): DiskSecond[] {
  const local = a.disk ? diskSecondsFromLocal(a.disk as LocalDiskRow[]) : [];
  if (local.length) return local;
  const os = a.cloud?.os;
  return os && !isCloudError(os) ? diskSecondsFromOs(os as OsMetricsFile) : [];
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/**
 * The tables an attempt's request path writes (reference/request-tx.ts, ingest.ts): usage_events in
 * every mode; api_keys when every request updates its key's row (lastUsed every-request; per-minute
 * writes it at most once a minute a key, no load); usage_daily_rollup when the ingest path keeps the
 * rollup (aggregate rollup). A variant's attempt is read with its own service settings.
 */
export function requestTablesOf(spec: CampaignSpec, config: string): string[] {
  let service: Pick<ServiceSpec, 'run' | 'aggregate' | 'env' | 'lastUsed'> = spec.service;
  const measured = spec.variants ? measuredConfigurations(spec).find((c) => c.name === config) : undefined;
  if (measured?.variant) service = variantSettings(spec, measured.variant).service;
  const lastUsed = service.run ? service.env?.HC_LAST_USED : service.lastUsed;
  return [...REQUEST_PATH_TABLES, ...(lastUsed === 'every-request' ? ['api_keys'] : []), ...(usesRollup(service) ? ['usage_daily_rollup'] : [])];
}

/** The cluster's log_timezone as the DB sampler read it back (its first row), if it did. */
export function logTimeZoneOf(a: Pick<AttemptEvidence, 'db'>): string | null {
  for (const r of a.db ?? []) {
    const z = (r as { settings?: { named?: Record<string, string> } }).settings?.named?.log_timezone;
    if (z) return z;
  }
  return null;
}

/**
 * Whether a log was read for the repeat, and why none could be matched when none could. Target
 * "existing" writes an empty postgres.log (lib/targets/existing: the server's log is the
 * deployment's): no log was read there, and an empty file is never shown as one that was.
 */
export function postgresLogState(log: string | null, target: string | undefined): { read: boolean; note?: string } {
  if (log === null) return { read: false, note: 'no postgres.log in the evidence' };
  if (target === 'existing') return { read: false, note: 'no postgres.log was read (target "existing": the server\'s log is the deployment\'s, and the rig reads none)' };
  if (log.trim() === '') return { read: true, note: 'its postgres.log is empty (nothing was logged in the window)' };
  return { read: true };
}

/**
 * The repeat's tails attributed; undefined when it has no freeze-second and no window (the page is
 * unchanged). `requestTables`: the tables its request path writes (tail-attribution.ts REQUEST_PATH_TABLES by default).
 * `target`: the campaign's (an "existing" target reads no log).
 */
export function tailsOf(a: AttemptEvidence, report: RunReport, requestTables?: readonly string[], target?: string): TailsModel | undefined {
  if (!report.freeze_seconds.length && !report.windows.length) return undefined;
  const started = a.load?.started_at ? Date.parse(a.load.started_at) : NaN;
  if (Number.isNaN(started)) return undefined;
  const log = postgresLogState(a.postgresLog, target);
  const logged = log.read && a.postgresLog !== null ? logMarkers(a.postgresLog, { timeZone: logTimeZoneOf(a) }) : { markers: [], unplaced: 0 };
  const { unplaced } = logged;
  // A pass still running when the log was read has no line: the sampler's progress snapshots have it.
  const markers = [...logged.markers, ...progressMarkers((a.db ?? []) as SampledWaits[], logged.markers)];
  const load = a.cloud?.load && !isCloudError(a.cloud.load) ? (a.cloud.load as DbLoadFile).by_wait_event : [];
  const walInit = walInitSightings((a.db ?? []) as SampledWaits[], load);
  const disk = diskOf(a);
  const r = attributeTails({ startedAtMs: started, freezeSeconds: report.freeze_seconds, windows: report.windows, markers, walInit, disk, requestTables });
  return {
    counts: r.counts,
    rows: r.items.map((it) => ({
      what: it.what,
      from_s: it.from_s,
      to_s: it.to_s,
      class: it.class,
      markers: it.markers.map((m) => `${clock(m.to_ms)} ${m.detail}`),
      lines: it.markers.map((m) => m.line),
      wal_init: it.wal_init.map((w) => `${clock(w.at_ms)} WAL segment being created (${w.source})`),
      disk: it.disk ? { avg_io_kb: it.disk.avg_io_kb, queue_depth: it.disk.queue_depth } : null,
    })),
    disk_source: disk.length ? disk[0].source : null,
    postgres_log: log.read,
    ...(log.note ? { postgres_log_note: log.note } : {}),
    unplaced_log_lines: unplaced,
  };
}

/** "vacuum 3 s + 1 window, unexplained 1 s" */
export function tailCountsText(t: TailsModel): string {
  const parts = TAIL_CLASSES.filter((c) => t.counts[c].seconds || t.counts[c].windows).map((c) => {
    const { seconds, windows } = t.counts[c];
    const bits = [seconds ? `${seconds} freeze-second${seconds === 1 ? '' : 's'}` : '', windows ? `${windows} window${windows === 1 ? '' : 's'}` : ''].filter(Boolean);
    return `${c} ${bits.join(' + ')}`;
  });
  const caveats = [
    t.postgres_log && !t.postgres_log_note
      ? ''
      : `${t.postgres_log_note ?? 'no postgres.log in the evidence'}, so no log line could be matched to a vacuum pass or a checkpoint (the DB sampler's progress snapshots only)`,
    t.disk_source ? `disk figures from ${t.disk_source === 'disk sampler' ? 'the disk sampler (disk-samples.jsonl)' : 'Enhanced Monitoring (cloud-os-metrics.json)'}` : 'no per-second disk figures in the evidence',
    t.unplaced_log_lines ? `${t.unplaced_log_lines} log line(s) in a time zone that could not be read, not matched` : '',
  ].filter(Boolean);
  return `${parts.join('; ')} (${caveats.join('; ')}).`;
}

const kb = (x: number | null) => (x === null ? DASH : `${num(x, 1)} KB`);
const queue = (x: number | null) => (x === null ? DASH : num(x, 1));

/** One row per freeze-second and window: when, its class, the marker lines beside it, the disk that second. */
export function tailsTable(t: TailsModel): Table {
  return {
    header: ['tail (s from start)', 'class', 'markers (log time UTC)', 'avg IO size', 'queue depth'],
    rows: t.rows.map((r) => ({
      cells: [
        r.what === 'window' ? `window ${r.from_s}–${r.to_s}` : `second ${r.from_s}`,
        r.class,
        [...r.markers, ...r.wal_init].join('; ') || DASH,
        r.disk ? kb(r.disk.avg_io_kb) : DASH,
        r.disk ? queue(r.disk.queue_depth) : DASH,
      ],
      ...(r.class === 'unexplained' ? { cls: 'not-run' } : {}),
    })),
  };
}

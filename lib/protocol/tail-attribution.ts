// Tails attributed from the evidence: each freeze-second and each window of a repeat set beside the
// markers the rig keeps (the Postgres log's autovacuum/autoanalyze and checkpoint lines, the sampled
// WAL-file initialisation waits) and the disk's per-second figures, and given one class. Pure, in the
// shape of gates.ts: every item carries the evidence it was classified on, so the page shows why.
//
// The rule (ATTRIBUTION_RULES says it in the page's words):
// - A freeze-second s covers [t0 + s, t0 + s + 1) and a window [a, b] covers [t0 + a, t0 + b + 10),
//   t0 being load.json's started_at (the stream's t = 0). A marker matches when its activity interval
//   (postgres-log.ts: a vacuum/analyze pass from its start, back-computed from `elapsed`, to its
//   completion line; a checkpoint's sync phase, or all of an immediate one) comes within
//   MARKER_TOLERANCE_MS of it: t0 is taken in the activity before the generator's first request, a
//   request sent just before a stall is slow in the second it was sent, and the log's stamps are ms.
// - vacuum: an autovacuum or autoanalyze pass on a table the request path writes matches (the
//   protocol's "marker-classified vacuum freeze-seconds": the insert-triggered pass's rewrite storm).
//   A pass on any other table (a small one the rig or the service keeps beside it) is listed beside
//   the item but classifies nothing. A pass still running when the log was read has no completion line:
//   it comes from the DB sampler's pg_stat_progress_vacuum snapshots (progressMarkers), from the first
//   snapshot that saw it to the last.
// - checkpoint: no request-path pass matches, a checkpoint does.
// - wal-segment-pool: neither, and a backend was seen waiting to create a WAL segment (wait events
//   IO:WALInitWrite / IO:WALInitSync: the pool of ready segments ran dry and a commit made one) within
//   one sampling interval of it: the DB sampler's snapshot ± the larger gap to its neighbouring snapshots
//   (5 s at the most: its snapshots are 100 ms-5 s apart), ±1 s for Performance
//   Insights' 1-s db.load. The disk alone does not make this class: a zero-filled segment is a large
//   sequential write, and so is ordinary WAL at a high commit rate; the two look alike per second.
// - unexplained: nothing above. Said as it is, never folded into a class.
// When several match, the class is the first in that order and every matching marker is listed.
// The disk figures (average IO size, queue depth) are shown beside each item, not used to classify: the
// vacuum storm's signature (IO size collapsing to a few KB, queue in the hundreds) is for the reader to
// check against the marker, and a local disk shared with everything else would mislead a rule.
import { diskAt, type DiskSecond } from './disk-seconds';
import type { LogMarker } from './postgres-log';

export const TAIL_CLASSES = ['vacuum', 'checkpoint', 'wal-segment-pool', 'unexplained'] as const;
export type TailClass = (typeof TAIL_CLASSES)[number];

export const MARKER_TOLERANCE_MS = 1000;
export const DB_SAMPLER_SPAN_MS = 5000;
export const DB_LOAD_SPAN_MS = 1000;
export const WAL_INIT_WAITS = ['WALInitWrite', 'WALInitSync'] as const;

/** The table every request path writes, in every mode: its passes are the rewrite storm the protocol names. */
export const REQUEST_PATH_TABLES = ['usage_events'] as const;

export const ATTRIBUTION_RULES = [
  `A freeze-second s is [start + s, start + s + 1), a window its 10-s buckets, start being the load's own start; a log marker matches when its activity comes within ${MARKER_TOLERANCE_MS / 1000} s of it. A vacuum or analyze pass's activity runs from its completion line minus its "elapsed" to that line, or, for a pass with no completion line yet, over the DB sampler's pg_stat_progress_vacuum snapshots that saw it; a checkpoint's is its sync phase ("sync=" before "checkpoint complete"), or all of it ("total=") when immediate.`,
  'vacuum: an autovacuum or autoanalyze pass on a table the request path writes matches (a pass on any other table is listed beside it, not counted). checkpoint: no such pass does, a checkpoint does. wal-segment-pool: neither, and a backend was seen waiting to create a WAL segment (IO:WALInitWrite / WALInitSync) within one sampling interval (the gap between the DB sampler snapshots, 5 s at the most; ±1 s for Performance Insights). unexplained: none of these.',
  'The disk figures are those of the second itself (of a window: its second with the deepest queue); they are shown for the reader, not used to classify: a segment being zero-filled and ordinary WAL at a high rate are both large sequential writes.',
];

/** A sighting of a backend creating a WAL segment: when, and how far from it it counts. */
export interface WalInitSighting {
  at_ms: number;
  span_ms: number;
  source: 'DB sampler' | 'Performance Insights';
}

export interface TailItem {
  what: 'freeze-second' | 'window';
  /** Seconds from the load's start, [from, to). */
  from_s: number;
  to_s: number;
  class: TailClass;
  /** Every log marker that matched, in time order. */
  markers: LogMarker[];
  /** WAL-segment creation sightings that matched. */
  wal_init: WalInitSighting[];
  disk: DiskSecond | null;
}

export interface TailAttribution {
  items: TailItem[];
  /** Per class: how many freeze-seconds and how many windows. */
  counts: Record<TailClass, { seconds: number; windows: number }>;
}

export interface TailInput {
  /** load.json's started_at, epoch ms: t = 0 of the stream. */
  startedAtMs: number;
  freezeSeconds: readonly number[];
  /** RunReport.windows: [first bucket start_s, last bucket start_s], 10-s buckets. */
  windows: ReadonlyArray<readonly [number, number]>;
  markers: readonly LogMarker[];
  walInit: readonly WalInitSighting[];
  disk: readonly DiskSecond[];
  /** Tables the request path writes (names with or without their schema); default REQUEST_PATH_TABLES. */
  requestTables?: readonly string[];
}

const relname = (table: string) => table.slice(table.lastIndexOf('.') + 1).replace(/^"|"$/g, '');

/** Whether a pass marker's table is one the request path writes (a marker without a table: cannot say, so it counts). */
export function onRequestPath(m: LogMarker, requestTables: readonly string[] = REQUEST_PATH_TABLES): boolean {
  if (m.table === undefined) return true;
  return requestTables.some((t) => relname(t) === relname(m.table!));
}

const near = (aFrom: number, aTo: number, bFrom: number, bTo: number, tol: number) => aFrom <= bTo + tol && bFrom <= aTo + tol;

function classify(input: TailInput, what: TailItem['what'], fromS: number, toS: number): TailItem {
  const from = input.startedAtMs + fromS * 1000;
  const to = input.startedAtMs + toS * 1000;
  const markers = input.markers.filter((m) => near(m.from_ms, m.to_ms, from, to, MARKER_TOLERANCE_MS)).sort((a, b) => a.to_ms - b.to_ms);
  const walInit = input.walInit.filter((w) => near(w.at_ms, w.at_ms, from, to, w.span_ms));
  const cls: TailClass = markers.some((m) => (m.kind === 'vacuum' || m.kind === 'analyze') && onRequestPath(m, input.requestTables))
    ? 'vacuum'
    : markers.some((m) => m.kind === 'checkpoint')
      ? 'checkpoint'
      : walInit.length
        ? 'wal-segment-pool'
        : 'unexplained';
  let disk: DiskSecond | null;
  if (what === 'freeze-second') disk = diskAt(input.disk, from, to);
  else {
    const inside = input.disk.filter((d) => d.to_ms > from && d.from_ms < to);
    disk = inside.reduce<DiskSecond | null>((best, d) => ((d.queue_depth ?? -1) > (best?.queue_depth ?? -1) ? d : best), null);
  }
  return { what, from_s: fromS, to_s: toS, class: cls, markers, wal_init: walInit, disk };
}

export function attributeTails(input: TailInput): TailAttribution {
  const items: TailItem[] = [
    ...input.freezeSeconds.map((s) => classify(input, 'freeze-second', s, s + 1)),
    ...input.windows.map(([a, b]) => classify(input, 'window', a, b + 10)),
  ];
  const counts = Object.fromEntries(TAIL_CLASSES.map((c) => [c, { seconds: 0, windows: 0 }])) as TailAttribution['counts'];
  for (const it of items) counts[it.class][it.what === 'window' ? 'windows' : 'seconds']++;
  return { items, counts };
}

/** The DB sampler rows' shape read here (lib/evidence/db-sampler.ts DbSample; error rows have no waits). */
export interface SampledWaits {
  t: string;
  waits?: ReadonlyArray<{ wait_event: string | null; count: number }>;
  vacuum?: ReadonlyArray<{ pid: number; relname: string | null; phase: string }>;
}

/**
 * Vacuum passes seen in the DB sampler's pg_stat_progress_vacuum snapshots that no completion line in
 * the log stands for (still running when the log was read, or a manual VACUUM, which logs nothing):
 * one marker per pass (pid and table, in consecutive snapshots), from the first snapshot that saw it to
 * the last. A pass the log has a line for (the same table, overlapping) is the log's marker alone.
 */
export function progressMarkers(db: readonly SampledWaits[], logged: readonly LogMarker[] = []): LogMarker[] {
  const rows = db.filter((r) => r.vacuum !== undefined).sort((a, b) => Date.parse(a.t) - Date.parse(b.t));
  const open = new Map<string, { pid: number; table: string; from: number; to: number; phases: string[] }>();
  const done: Array<{ pid: number; table: string; from: number; to: number; phases: string[] }> = [];
  for (const r of rows) {
    const at = Date.parse(r.t);
    const seen = new Set<string>();
    for (const v of r.vacuum!) {
      const key = `${v.pid}\t${v.relname ?? '?'}`;
      seen.add(key);
      const p = open.get(key);
      if (p) {
        p.to = at;
        if (v.phase && p.phases[p.phases.length - 1] !== v.phase) p.phases.push(v.phase);
      } else open.set(key, { pid: v.pid, table: v.relname ?? '?', from: at, to: at, phases: v.phase ? [v.phase] : [] });
    }
    for (const [key, p] of open) {
      if (!seen.has(key)) {
        done.push(p);
        open.delete(key);
      }
    }
  }
  done.push(...open.values());
  const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);
  return done
    .filter((p) => !logged.some((m) => m.kind === 'vacuum' && m.table !== undefined && relname(m.table) === relname(p.table) && m.from_ms <= p.to + MARKER_TOLERANCE_MS && p.from <= m.to_ms + MARKER_TOLERANCE_MS))
    .sort((a, b) => a.from - b.from)
    .map((p) => ({
      kind: 'vacuum' as const,
      line: `pg_stat_progress_vacuum: pid ${p.pid} vacuuming ${p.table}, seen ${clock(p.from)}–${clock(p.to)} UTC (${p.phases.join(' → ') || 'no phase'})`,
      from_ms: p.from,
      to_ms: p.to,
      detail: `vacuum ${p.table} running (progress snapshots, ${((p.to - p.from) / 1000).toFixed(1)} s seen, no completion line)`,
      table: p.table,
    }));
}

/** The Performance Insights series' shape read here (cloud-evidence.ts DbLoadSeries). */
export interface LoadSeries {
  event: string;
  timestamps: readonly string[];
  values: ReadonlyArray<number | null>;
}

/**
 * Every sighting of a WAL segment being created: a DB sampler snapshot with a backend in WALInitWrite
 * or WALInitSync, and a Performance Insights second whose db.load for IO:WALInitWrite/WALInitSync is
 * above zero.
 */
export function walInitSightings(db: readonly SampledWaits[], load: readonly LoadSeries[] = []): WalInitSighting[] {
  const out: WalInitSighting[] = [];
  const isInit = (name: string | null) => name !== null && (WAL_INIT_WAITS as readonly string[]).includes(name);
  const times = db.map((r) => Date.parse(r.t)).sort((a, b) => a - b);
  const spanAt = (at: number) => {
    const i = times.indexOf(at);
    const gaps = [i > 0 ? at - times[i - 1] : 0, i < times.length - 1 ? times[i + 1] - at : 0].filter((g) => g > 0);
    return gaps.length ? Math.min(DB_SAMPLER_SPAN_MS, Math.max(...gaps)) : DB_SAMPLER_SPAN_MS;
  };
  for (const r of db) {
    if (r.waits?.some((w) => isInit(w.wait_event) && w.count > 0)) out.push({ at_ms: Date.parse(r.t), span_ms: spanAt(Date.parse(r.t)), source: 'DB sampler' });
  }
  for (const s of load) {
    if (!isInit(s.event.split(':').pop() ?? null)) continue;
    s.timestamps.forEach((t, i) => {
      if ((s.values[i] ?? 0) > 0) out.push({ at_ms: Date.parse(t), span_ms: DB_LOAD_SPAN_MS, source: 'Performance Insights' });
    });
  }
  return out.sort((a, b) => a.at_ms - b.at_ms);
}

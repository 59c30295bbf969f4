// The database side's calibration (issue 31, item 6), judged: each provoked event's known figure beside
// what the rig's own evidence code made of it, and the verdict. Pure; the provocation and the readings
// are lib/targets/db-calibration/. Like the instrument's calibration (calibration-truth.ts), a case is
// ok only when the evidence found the event AND its figure is within the tolerance of the truth.
//
// The cases and their truth:
// - lock wait: N sessions of the request role block on a row another session holds; the truth is the
//   seconds each one spent blocked, timed by its own client. The rig's figure is the DB sampler's
//   snapshots through db-summary: the requests' Lock:transactionid/Lock:tuple backend-samples, times
//   the sampler's span over its snapshots (mean blocked backends x seconds). ±20 %.
// - WAL per event: a known number of usage_events rows; the rig's bracket (wal-bracket.ts, through
//   the page's walFromBracket) against PostgreSQL's own count (pg_walinspect's pg_get_wal_stats, else
//   pg_waldump --stats) of the LSN range the inserts wrote, read on their own session right before
//   the first and after the last: a bracket that misses part of the load is off it. Both are divided
//   by the same rows. ±2 %. (The bracket's bytes are an insert-LSN difference, so they also hold page
//   headers and record alignment, ~1 % over the records' bytes for rows of this shape.)
// - vacuum / checkpoint marker: an autovacuum pass of usage_events and a CHECKPOINT inside a load
//   window; the marker the rig parses from the server log must end within 1 s of the pass's
//   pg_stat_user_tables.last_autovacuum and of the time CHECKPOINT returned, and a freeze-second put
//   at each event's second must be classified as that event by the page's tail attribution.
// - non-UTC zone: the same two markers from a cluster whose log_timezone is Europe/Berlin.

export const DB_CALIBRATION_TOLERANCES = {
  /** Lock-wait seconds: |measured - known| / known at most this. */
  lockShare: 0.2,
  /** WAL bytes per event: |rig - PostgreSQL's| / PostgreSQL's at most this. */
  walShare: 0.02,
  /** A marker's end within this many ms of the event's true time. */
  markerMs: 1000,
} as const;

export const DB_CASES = ['lock wait', 'WAL per event', 'vacuum marker', 'checkpoint marker', 'non-UTC zone'] as const;
export type DbCaseName = (typeof DB_CASES)[number];

export interface DbCaseResult {
  name: DbCaseName;
  ok: boolean;
  /** What the rig's evidence said, in words ("11.6 lock-wait s (116 backend-samples in 41 snapshots)"). */
  measured: string;
  /** The truth it is judged against, in words. */
  known: string;
  problems: string[];
  /** What to look at when it is off. */
  fix?: string;
  /** The figures behind the words, for the evidence file. */
  figures: Record<string, number | string | boolean | null>;
}

export interface DbCalibrationFile {
  calibrated: boolean;
  passed: number;
  total: number;
  cases: DbCaseResult[];
  tolerances: typeof DB_CALIBRATION_TOLERANCES;
  /** The cluster's settings as the DB sampler read them back (log_timezone, server_version, ...). */
  settings: Record<string, string>;
  started_at: string;
  ended_at: string;
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
const LOCK_EVENTS = ['Lock:transactionid', 'Lock:tuple'];

export interface LockReading {
  /** Seconds each request session was blocked, by its own client (the truth). */
  knownSeconds: number;
  sessions: number;
  /** Requests' backend-samples in Lock:transactionid or Lock:tuple (db-summary's waits). */
  lockSamples: number;
  /** All requests' backend-samples (the shares' base) and the snapshots they came from. */
  backendSamples: number;
  snapshots: number;
  /** Seconds from the first snapshot to the last plus one mean gap: what the snapshots stand for. */
  spanSeconds: number;
  /** db-summary's top request wait event. */
  topEvent: string | null;
}

export function judgeLock(r: LockReading): DbCaseResult {
  const measured = r.snapshots > 0 ? (r.lockSamples / r.snapshots) * r.spanSeconds : 0;
  const off = r.knownSeconds > 0 ? (measured - r.knownSeconds) / r.knownSeconds : NaN;
  const problems: string[] = [];
  if (r.snapshots === 0) problems.push('the DB sampler took no snapshot');
  if (r.topEvent === null || !LOCK_EVENTS.includes(r.topEvent)) problems.push(`the requests' top wait is ${r.topEvent ?? 'nothing'}, not ${LOCK_EVENTS.join(' or ')}`);
  if (!(Math.abs(off) <= DB_CALIBRATION_TOLERANCES.lockShare)) problems.push(`lock-wait seconds ${pct(off)} off the known (±${DB_CALIBRATION_TOLERANCES.lockShare * 100} %)`);
  return {
    name: 'lock wait',
    ok: problems.length === 0,
    measured: `${measured.toFixed(2)} s in ${r.topEvent ?? '-'} (${r.lockSamples} of ${r.backendSamples} request backend-samples, ${r.snapshots} snapshots over ${r.spanSeconds.toFixed(1)} s)`,
    known: `${r.knownSeconds.toFixed(2)} s blocked (${r.sessions} request sessions, timed by their clients)`,
    problems,
    fix: problems.length ? "the requests' waits: db-sampler.ts `who` (only the request role's client backends) and db-summary.ts workByEvent" : undefined,
    figures: { measured_s: round(measured, 3), known_s: round(r.knownSeconds, 3), off: round(off, 4), lock_samples: r.lockSamples, backend_samples: r.backendSamples, snapshots: r.snapshots, span_s: round(r.spanSeconds, 3), top_event: r.topEvent, sessions: r.sessions },
  };
}

export interface WalReading {
  rows: number;
  /** The page's WAL bytes per event from the bracket (null: the bracket gave none, with `problem`). */
  rigBytesPerEvent: number | null;
  problem: string | null;
  /** PostgreSQL's own count of the bracket's LSN range: bytes (records + full-page images) and records. */
  truthBytes: number | null;
  truthRecords: number | null;
  /** 'pg_walinspect' or 'pg_waldump', and why there is none when truthBytes is null. */
  truthSource: string;
  rigRecordsPerEvent: number | null;
  /** The LSN ranges: the bracket's, and the inserts' own (what PostgreSQL counted). */
  ranges?: { rig: string | null; truth: string };
}

export function judgeWal(r: WalReading): DbCaseResult {
  const problems: string[] = [];
  const truthPerEvent = r.truthBytes !== null ? r.truthBytes / r.rows : null;
  const off = r.rigBytesPerEvent !== null && truthPerEvent ? (r.rigBytesPerEvent - truthPerEvent) / truthPerEvent : NaN;
  if (r.rigBytesPerEvent === null) problems.push(`the bracket gave no WAL figure: ${r.problem ?? 'unknown'}`);
  if (truthPerEvent === null) problems.push(`no count from PostgreSQL: ${r.truthSource}`);
  if (r.rigBytesPerEvent !== null && truthPerEvent !== null && !(Math.abs(off) <= DB_CALIBRATION_TOLERANCES.walShare)) {
    problems.push(`WAL per event ${pct(off)} off ${r.truthSource}'s (±${DB_CALIBRATION_TOLERANCES.walShare * 100} %)`);
  }
  return {
    name: 'WAL per event',
    ok: problems.length === 0,
    measured: r.rigBytesPerEvent === null ? 'none' : `${r.rigBytesPerEvent.toFixed(1)} B/event${r.rigRecordsPerEvent !== null ? `, ${r.rigRecordsPerEvent.toFixed(2)} records` : ''} (load bracket)`,
    known: truthPerEvent === null ? 'none' : `${truthPerEvent.toFixed(1)} B/event${r.truthRecords !== null ? `, ${(r.truthRecords / r.rows).toFixed(2)} records` : ''} (${r.truthSource} over the inserts' own LSN range, ${r.rows.toLocaleString('en-US')} rows)`,
    problems,
    fix: problems.length ? 'the WAL bracket: wal-bracket.ts readings right before the first insert and after the last, walFromBracket (report/wal-figure.ts)' : undefined,
    figures: { rows: r.rows, rig_bytes_per_event: r.rigBytesPerEvent, truth_bytes_per_event: truthPerEvent === null ? null : round(truthPerEvent, 2), truth_bytes: r.truthBytes, truth_records: r.truthRecords, rig_records_per_event: r.rigRecordsPerEvent, off: Number.isNaN(off) ? null : round(off, 5), truth_source: r.truthSource, rig_range: r.ranges?.rig ?? null, truth_range: r.ranges?.truth ?? null },
  };
}

export interface MarkerReading {
  kind: 'vacuum' | 'checkpoint';
  /** The event's true end, epoch ms (last_autovacuum; the time CHECKPOINT returned). */
  trueMs: number | null;
  /** The end of the marker the rig parsed for it (the nearest of its kind), or null. */
  markerMs: number | null;
  /** The class the page's tail attribution gave a freeze-second at the event's second. */
  classified: string | null;
  /** Log lines whose stamp could not be placed. */
  unplaced: number;
  markerLine: string | null;
}

/** One marker's problems (empty: found, in time, classified as what it was). */
export function markerProblems(r: MarkerReading): string[] {
  const problems: string[] = [];
  if (r.trueMs === null) return [`the ${r.kind} did not happen (no true time)`];
  if (r.markerMs === null) problems.push(`no ${r.kind} marker in the log${r.unplaced ? ` (${r.unplaced} line(s) whose stamp could not be placed)` : ''}`);
  else if (!(Math.abs(r.markerMs - r.trueMs) <= DB_CALIBRATION_TOLERANCES.markerMs)) problems.push(`the ${r.kind} marker is ${((r.markerMs - r.trueMs) / 1000).toFixed(3)} s off its true time (±${DB_CALIBRATION_TOLERANCES.markerMs / 1000} s)`);
  if (r.classified !== r.kind) problems.push(`a freeze-second at the ${r.kind} was classified ${r.classified ?? 'nothing'}`);
  return problems;
}

const markerWords = (r: MarkerReading) => (r.markerMs === null || r.trueMs === null ? 'no marker' : `marker ${((r.markerMs - r.trueMs) / 1000).toFixed(3)} s from its true time, classified ${r.classified ?? '-'}`);
const markerFigures = (r: MarkerReading, p = '') => ({
  [`${p}${r.kind}_true`]: r.trueMs === null ? null : new Date(r.trueMs).toISOString(),
  [`${p}${r.kind}_marker`]: r.markerMs === null ? null : new Date(r.markerMs).toISOString(),
  [`${p}${r.kind}_off_ms`]: r.markerMs === null || r.trueMs === null ? null : r.markerMs - r.trueMs,
  [`${p}${r.kind}_class`]: r.classified,
  [`${p}${r.kind}_line`]: r.markerLine,
});

export function judgeMarker(r: MarkerReading): DbCaseResult {
  const problems = markerProblems(r);
  const name = r.kind === 'vacuum' ? 'vacuum marker' : 'checkpoint marker';
  return {
    name,
    ok: problems.length === 0,
    measured: markerWords(r),
    known: r.kind === 'vacuum' ? 'autovacuum of usage_events ended at pg_stat_user_tables.last_autovacuum' : 'CHECKPOINT returned',
    problems,
    fix: problems.length ? 'the markers: postgres-log.ts logMarkers (the completion line, its stamp) and tail-attribution.ts' : undefined,
    figures: { ...markerFigures(r), unplaced: r.unplaced },
  };
}

/** Both markers again, from a cluster logging in a zone other than UTC. */
export function judgeZone(zone: string, readings: readonly MarkerReading[]): DbCaseResult {
  const problems = readings.flatMap(markerProblems);
  return {
    name: 'non-UTC zone',
    ok: problems.length === 0,
    measured: readings.map((r) => `${r.kind} ${markerWords(r)}`).join('; '),
    known: `log_timezone = ${zone}: the same events' true times`,
    problems,
    fix: problems.length ? "stamps in a named zone: postgres-log.ts stampOf with the cluster's log_timezone, read back by the DB sampler (report/tails.ts logTimeZoneOf)" : undefined,
    figures: Object.assign({ zone, unplaced: Math.max(0, ...readings.map((r) => r.unplaced)) }, ...readings.map((r) => markerFigures(r))),
  };
}

/** A case whose provocation or reading threw: failed, with the error as its problem. */
export function caseError(name: DbCaseName, err: unknown): DbCaseResult {
  const message = err instanceof Error ? err.message : String(err);
  return { name, ok: false, measured: 'nothing (the case did not complete)', known: '-', problems: [`the case failed: ${message}`], fix: 'the error above', figures: { error: message } };
}

/** `lock wait: 11.62 s ... vs known 12.00 s ... -> ok` */
export function dbCaseLine(c: DbCaseResult): string {
  return `${c.name}: ${c.measured} vs known ${c.known} -> ${c.ok ? 'ok' : `OFF: ${c.problems.join('; ')}`}`;
}

export function summarizeCases(cases: readonly DbCaseResult[], settings: Record<string, string>, startedAt: string, endedAt: string): DbCalibrationFile {
  const passed = cases.filter((c) => c.ok).length;
  return { calibrated: cases.length > 0 && passed === cases.length, passed, total: cases.length, cases: [...cases], tolerances: DB_CALIBRATION_TOLERANCES, settings, started_at: startedAt, ended_at: endedAt };
}

/** `CALIBRATED 5/5`, or `NOT CALIBRATED 4/5: lock wait (fix: ...)`. */
export function dbVerdictLine(f: Pick<DbCalibrationFile, 'calibrated' | 'passed' | 'total' | 'cases'>): string {
  if (f.calibrated) return `CALIBRATED ${f.passed}/${f.total}`;
  const failed = f.cases.filter((c) => !c.ok);
  return `NOT CALIBRATED ${f.passed}/${f.total}: ${failed.map((c) => `${c.name}${c.fix ? ` (fix: ${c.fix})` : ''}`).join('; ')}`;
}

/** The names of the cases that failed. */
export function failedCases(f: { cases: ReadonlyArray<{ name: string; ok: boolean }> }): string[] {
  return f.cases.filter((c) => !c.ok).map((c) => c.name);
}

/** The page's mark beside every database figure: null when calibrated. */
export function dbCalibrationMark(f: { calibrated: boolean; cases: ReadonlyArray<{ name: string; ok: boolean }> } | null): string | null {
  if (!f || f.calibrated) return null;
  const failed = failedCases(f);
  return `database NOT CALIBRATED (${failed.length ? failed.join(', ') : 'no case ran'})`;
}

function round(x: number, d: number): number {
  return Math.round(x * 10 ** d) / 10 ** d;
}

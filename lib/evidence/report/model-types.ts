// The report model's shapes, and those of its sections (tails, variants, warm-ups, ladder, baseline):
// what model.ts builds and the section builders and renderers read. Types only, importing nothing from
// this folder but its leaves (the evidence's shapes in load.ts, db-summary.ts, app-node.ts), so the
// report reads top-down: load -> the section builders -> model -> tables -> markdown / html / text,
// and every one of them imports its types from here rather than from the file that builds them.
import type { QuietLatency } from '../../protocol/host-quiet';
import type { HistoryAlert } from '../history-alert';
import type { CloudSummary } from '../../protocol/cloud-evidence';
import type { RepeatComparison } from '../../protocol/compare';
import type { DiskSecond } from '../../protocol/disk-seconds';
import type { GateCheck } from '../../protocol/gates';
import type { ConfigurationSummary, FigureSummary } from '../../protocol/reporting';
import type { RunReport } from '../../protocol/run-report';
import type { TailClass } from '../../protocol/tail-attribution';
import type { BaselineChoice, DenominatorLeg } from '../records';
import type { AppNodeSummary } from './app-node';
import type { DbSummary, HostSummary, OwnWork, Spread, WaitShare } from './db-summary';
import type { WalBasis, WalBytesMeasure } from './wal-figure';
import type { WorkloadModel } from './workload';
import type { AttemptKind, VariantChange } from './load';

/** The model's format tag: a reader of report.json knows what it holds. */
export const REPORT_FORMAT = 'rig-report/1';

// ---- model ----

/** invalid: failed on the instrument's account (result.json's repeat says why: lib/protocol/repeat-validity.ts); shown, never counted. */
export type RepeatStatus = 'passed' | 'failed' | 'not-judged' | 'invalid' | 'not-published' | 'interrupted' | 'not-run';

/**
 * Attempts no pass count counts: one interrupted, and one the instrument made invalid (re-run, never
 * the service's failure). The page's summary (model.ts) and a comparison's pass counts
 * (comparison.ts's repeatFigures) both read it, so the two counts cannot disagree.
 */
export const notCounted = (status: RepeatStatus): boolean => status === 'interrupted' || status === 'invalid';

/** Per-second series of one repeat, for the plots. */
export interface RepeatSeries {
  /** Second index from the start of the repeat. */
  t_s: number[];
  p50_ms: Array<number | null>;
  p99_ms: Array<number | null>;
  /** p99 of the corrected latency (done - intended) per second: a stalled load host shows here, not in p99_ms. */
  co_p99_ms: Array<number | null>;
  offered_rps: number[];
  /** Requests the plan scheduled in each second (null: no plan): what offered_rps must reach. */
  planned_rps: number[] | null;
  delivered_rps: number[];
  dropped: number[];
  freeze_seconds: number[];
  /** [first second, last second + 10) of each window. */
  windows: Array<[number, number]>;
}

export interface RepeatModel {
  /** "batched r2-a1" */
  id: string;
  config: string;
  kind: AttemptKind;
  repeat: number;
  attempt: number;
  dir: string;
  status: RepeatStatus;
  /** failed: every failed gate; not-published / interrupted / not-run: why. */
  reasons: string[];
  /** For a not-published repeat: the gates that also failed (shown beside why it is not published). */
  gate_reasons: string[];
  /** The re-derived report (null when the samples were not analysed). */
  report: RunReport | null;
  checks: GateCheck[];
  db: DbSummary | null;
  /** Where db.wal comes from: the readings at the load's edges, or (older evidence) the sampler rows. */
  wal_basis?: WalBasis | null;
  host: HostSummary | null;
  /** p50 over the seconds the host's steal stayed low (lib/protocol/host-quiet.ts); absent without host samples or a stream. */
  quiet?: QuietLatency | null;
  /** The cloud's own figures of the window (aws only: lib/protocol/cloud-evidence.ts); absent on local repeats. */
  cloud?: CloudSummary;
  /**
   * The app node's host over the window (aws: where the service runs; ./app-node.ts); null when no
   * sample falls in it, absent on a rig without an app node.
   */
  app_node?: AppNodeSummary | null;
  /**
   * Its freeze-seconds and windows attributed to vacuum, checkpoint, WAL segment pool or unexplained
   * (./tails.ts); absent when it has neither, so such a repeat's page is unchanged.
   */
  tails?: TailsModel;
  /** Its workload's phases and a spike's recovery beside their limits (./workload.ts); absent without arrivals. */
  workload?: WorkloadModel;
  /** Evidence present for this attempt (names of the files). */
  files: string[];
  started_at: string | null;
  series: RepeatSeries | null;
  problems: string[];
}

export interface ReadFigures {
  endpoint: string;
  p50_ms: FigureSummary | null;
  p99_ms: FigureSummary | null;
  /** Passing repeats whose probe had this endpoint. */
  repeats: number;
}

export interface StopsModel {
  /** Which repeats the diagnostics come from. */
  basis: 'passing' | 'failed' | 'none';
  repeats: number;
  db_sampled: number;
  host_sampled: number;
  /** What requests waited on (the service's client backends, active), with the backend-samples and snapshots it rests on. */
  top_waits: WaitShare[];
  request_samples?: number;
  snapshots?: number;
  /** The database's own work (background processes, other sessions), apart from the requests'. */
  own_work?: OwnWork[];
  wal_bytes_per_event: FigureSummary | null;
  wal_records_per_event: FigureSummary | null;
  wal_fpi_per_event: FigureSummary | null;
  wal_mb_per_s: FigureSummary | null;
  /** Repeats whose WAL figure is the first-to-last sampler row (recorded before the load bracket). */
  wal_from_sampler_rows?: number;
  /** What the WAL bytes count, with the repeats each measure gave (wal-figure.ts): shown beside the figure. */
  wal_bytes_measures?: Array<{ measure: WalBytesMeasure; repeats: number }>;
  db_cpu_pct: Spread | null;
  host_cpu_pct: Spread | null;
  host_iowait_pct: Spread | null;
  /** The app node's CPU busy (aws); absent on a rig without an app node. */
  app_node_cpu_pct?: Spread | null;
}

export interface ConfigurationModel {
  name: string;
  kind: 'sustained' | 'rung';
  events_per_second: number;
  batch: number;
  requests_per_second: number;
  p99_limit_ms: number | null;
  planned: number;
  /** Not in the spec: found in the evidence only. */
  unplanned: boolean;
  published: boolean;
  /** Why not published (when not). */
  why_not: string[];
  summary: ConfigurationSummary;
  repeats: RepeatModel[];
  reads: ReadFigures[];
  stops: StopsModel;
  /** Freeze-seconds and windows over the passing repeats: totals and per-repeat range. */
  freeze_seconds_total: number | null;
  windows_total: number | null;
}

export interface CeilingModel {
  /**
   * measured: a valid ceiling (0 failed, enough samples, reconciled). invalid: its gate failed (failed
   * requests, too few samples). not-published: not reconciled, or its evidence disagrees. Neither of
   * those two is a ceiling: shown as "not a valid ceiling: <why>", and no ratio is computed from it.
   */
  status: 'measured' | 'invalid' | 'not-published' | 'interrupted' | 'not-run';
  why: string[];
  workers: number;
  batch: number;
  seconds: number;
  dir: string | null;
  report: RunReport | null;
  /** Findings noted beside the ceiling without gating it (drift: a ceiling is not a service level). */
  notes: string[];
  attempts: RepeatModel[];
}

export interface DenominatorLegModel extends DenominatorLeg {
  /** Closed-loop ceiling ev/s over this leg's rows/s (only for verified legs of the ceiling's batch size). */
  ratio: number | null;
}

export interface DenominatorModel {
  legs: DenominatorLegModel[];
  ceiling_evps: number | null;
}

export interface StepModel {
  step: string;
  status: string;
  started_at: string;
  ended_at: string;
  seconds: number;
  summary: string;
}

export interface Conditions {
  target: string;
  hardware: string;
  cost_per_hour: number;
  /** Where cost_per_hour comes from, when the target priced the rig itself. */
  cost_source?: string;
  /** What else the bill holds (aws: the plan's total, the worst case at the watchdog deadline, ...), one line each. */
  cost_notes?: string[];
  /** Rig lifetime the cost covers. */
  billed: { from: string; to: string; hours: number; basis: string } | null;
  total_cost: number | null;
  database: Array<[string, string]>;
  database_source: 'rig.json' | 'spec.json';
  /**
   * The settings the database ran with, as the DB sampler read them back from pg_settings at the start
   * of a repeat (db-sampler.ts DbSettings): one entry per distinct set, naming the repeats that had it.
   * Absent in evidence written before the sampler kept them.
   */
  settings_read_back?: Array<{ repeats: string[]; named: Array<[string, string]>; changed: Array<{ name: string; value: string; source: string }> }>;
  /** Which build was measured (issue 14): the reference service, or the spec's command or image. */
  service_build: string;
  /** Its settings as the spec asked them (the reference service's switches, then env). */
  service: Array<[string, string]>;
  /** Its settings as its own /healthz reported them at bring-up (service.json); null when not known. */
  service_reported: Array<[string, string]> | null;
  seed: { customers: number; history_rows: number };
  protocol: string;
  /** The warm-up before each configuration's first repeat, in one line (report/warmups.ts). */
  warmup: string;
  calibration: {
    calibrated: boolean;
    cases: Array<{ name: string; passed: boolean; detail: string }>;
    /** The instrument's floor on the host (calibration case 0); null in files written before it existed. */
    floor: { samples: number; p50_ms: number; p99_ms: number; p99_limit_ms: number; share_of_limit: number } | null;
  } | null;
}

export interface ReportModel {
  format: typeof REPORT_FORMAT;
  campaign: {
    id: string;
    name: string;
    target: string;
    /**
     * What the page's first line must say before anything else: UNCALIBRATED (calibration was off, so
     * no verdict on the page is one), DIRTY (leftovers after teardown); null for neither.
     */
    banner: string | null;
    status: string | null;
    error: string | null;
    rig: string | null;
    clean_after: string | null;
    /** Target "existing" only: what the rig did not do there (provision, teardown, clean-check, watchdog). */
    deployment?: string;
  };
  evidence: { manifest_sha256: string; files: number; bytes: number; unlisted: string[] };
  dates: { first: string | null; last: string | null; days: string[] };
  headline: string[];
  conditions: Conditions;
  method: string[];
  configurations: ConfigurationModel[];
  /**
   * A ladder campaign's rungs by offered rate (failed ones with their figures), its knee and the wait
   * profile around it (./ladder.ts); absent on a campaign without a ladder.
   */
  ladder?: LadderModel | null;
  /** A ladder campaign with variants: each variant's ladder and knee, control first (./ladder.ts). */
  variant_ladders?: VariantLadder[];
  /** Warm-ups, marked "warm-up, not measured": shown, never counted, gated or pooled. */
  warmups: WarmupModel[];
  /** Repeats sent from several load nodes (issue 37): a row per node and the merged row (./load-nodes.ts); absent without any. */
  load_nodes?: LoadNodeRowModel[];
  ceiling: CeilingModel | null;
  denominator: DenominatorModel | null;
  steps: StepModel[];
  unpublished: Array<{ what: string; why: string[] }>;
  warnings: string[];
  not_shown: string[];
  /**
   * The database side's calibration (calibration/database.json): its n/n and, when a case failed, the
   * mark set beside every database figure (`database NOT CALIBRATED (lock wait)`). Without the file
   * (aws, existing, an RDS-fidelity rig, calibrate: false, older evidence) the mark says the database
   * was not calibrated (`database not calibrated: target "aws"`) and `not_run` says why
   * (db-calibration-state.ts). Absent only in models built before issue 47.
   */
  db_calibration?: { passed: number; total: number; failed: string[]; mark: string | null; not_run?: string };
  /** Set by compareWithBaseline (report/baseline.ts) when a baseline was given. */
  baseline?: BaselineComparison;
  /**
   * How the report step chose the baseline (baseline.json), and whether its folder could be compared;
   * absent for a campaign neither scheduled nor pinned.
   */
  baseline_choice?: BaselineChoice & { compared: boolean; problem?: string };
  /** Control beside each treatment (spec.variants only; ./variants.ts). */
  variants?: VariantsModel;
  /**
   * The spec's history on this hardware up to this run, as the report step read it (history-alert.json,
   * issue 36): each figure's series with its change points, and the ones that alerted. Absent without one.
   */
  history?: HistoryAlert;
}

// ---- tails ----

export interface TailRowModel {
  what: 'freeze-second' | 'window';
  /** Seconds from the load's start, [from, to). */
  from_s: number;
  to_s: number;
  class: TailClass;
  /** The matching marker lines, shortened: `12:00:03.500 vacuum public.usage_events 3.20 s, ...`. */
  markers: string[];
  /** The matching lines as written. */
  lines: string[];
  wal_init: string[];
  disk: { avg_io_kb: number | null; queue_depth: number | null } | null;
}

export interface TailsModel {
  counts: Record<TailClass, { seconds: number; windows: number }>;
  rows: TailRowModel[];
  /** Where the disk figures come from; null when the repeat has none. */
  disk_source: DiskSecond['source'] | null;
  /**
   * A postgres.log was read for the repeat (without one, no log line can be a vacuum or a checkpoint).
   * False also for target "existing", whose postgres.log files are empty by design: the rig reads no
   * log there (issue 47), and the page must not claim it did.
   */
  postgres_log: boolean;
  /** Why no log lines could be matched, when none could (no file; not read; read but empty). */
  postgres_log_note?: string;
  /** Log lines whose time zone could not be read (not placed, not matched). */
  unplaced_log_lines: number;
}

// ---- variants ----

export interface VariantPair {
  /** The spec's configuration. */
  base: string;
  treatment: string;
  comparison: RepeatComparison;
  /** Top wait events of each side (share of sampled backends), as the "what stops it" table has them. */
  waits: { control: string; treatment: string };
}

export interface VariantsModel {
  order: 'blocks' | 'interleaved';
  fresh: boolean;
  control: string;
  treatments: string[];
  /** The variant of each sustained repeat attempt, in the order their loads started. */
  ran: string[];
  changes: VariantChange[];
  pairs: VariantPair[];
  /** A ladder campaign: where each variant's knee fell (the first rung that did not hold), control first. */
  knees?: Array<{ variant: string; where: string }>;
}

// ---- load nodes ----

export interface LoadNodeRowModel {
  repeat: string;
  /** `n<i>`, or `merged` (the repeat's own stream). */
  node: string;
  offered: number | null;
  sent: number | null;
  ok: number | null;
  failed: number | null;
  dropped: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  schedule_lag_p99_ms: number | null;
  clock_offset_ms: number | null;
  /** The node's own instrument gate, or what the merged row is. */
  instrument: string;
}

// ---- warmups ----

export interface WarmupModel {
  config: string;
  attempt: number;
  dir: string;
  seconds: number | null;
  rate: number | null;
  batch: number | null;
  sent: number | null;
  ok: number | null;
  failed: number | null;
  dropped: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  freeze_seconds: number[];
  /** Rows the database holds under the warm-up's own run tag (null: not counted). */
  rows_reconciled: number | null;
  /** Acknowledged events == rows in the database, checked against the stream re-derived here. */
  reconciled: boolean | null;
  /** The warm-up's own judgement (warmup.json): ok, or why it stopped the campaign. */
  ok_to_measure: boolean | null;
  reasons: string[];
  problems: string[];
}

// ---- ladder ----

/**
 * instrument-late: a repeat failed, but on the instrument's gate alone (the generator sent late, so
 * what it measured cannot be trusted either way). Not "held", and not the knee: a rung that tells
 * nothing about the service must not be named as where the service stops holding.
 */
export type RungStatus = 'held' | 'did-not-hold' | 'instrument-late' | 'not-published' | 'incomplete' | 'not-run';

export interface LadderRung {
  name: string;
  offered_evps: number;
  batch: number;
  status: RungStatus;
  /** "1/2": passed of counted repeats. */
  passed: string;
  /** Repeats in the figures below: finished and reconciled, passed or failed. */
  repeats: number;
  delivered_evps: FigureSummary | null;
  p50_ms: FigureSummary | null;
  p99_ms: FigureSummary | null;
  /** Requests dropped over those repeats. */
  dropped: number | null;
  /** Why it did not hold: each failed repeat's failed gates ("r2: dropped: 40 of 3000 ..."). */
  reasons: string[];
  /** The database's top wait events over those repeats, and how many of them had DB samples. */
  waits: { sampled: number; top: WaitShare[]; samples?: number; snapshots?: number };
}

export interface LadderKnee {
  /** The first rung (by offered rate) with a repeat that failed its gate. */
  rung: string;
  offered_evps: number;
  /** The highest rung below it that held, if any. */
  last_held: string | null;
  reasons: string[];
  /** The rungs whose wait profiles stand beside the knee: the one below, the knee, the one above. */
  around: string[];
}

export interface LadderModel {
  rungs: LadderRung[];
  knee: LadderKnee | null;
}

/** One variant's ladder (a ladder campaign with variants: each variant climbs every rung). */
export interface VariantLadder {
  variant: string;
  ladder: LadderModel | null;
}

// ---- baseline ----

export interface BaselineSide {
  label: string;
  passed: number;
  total: number;
  published: boolean;
  events_per_second: number;
  batch: number;
  p99_ms: FigureSummary | null;
}

export interface BaselineRow {
  config: string;
  current: BaselineSide | null;
  baseline: BaselineSide | null;
  verdict: 'unchanged' | 'regression' | 'faster' | 'new';
  /** Every finding, in words. */
  flags: string[];
  /** Figure by figure, the baseline (control) beside now (variant); null when the two cannot be compared. */
  comparison: RepeatComparison | null;
  /** The database's top wait events of each side: what a changed latency waited on. */
  waits?: { baseline: string; current: string };
}

export interface BaselineComparison {
  baseline_id: string;
  tolerance_pct: number;
  baseline_manifest_sha256: string;
  baseline_days: string[];
  /** How the figures were compared, in one paragraph (stated on the page). */
  method: string;
  rows: BaselineRow[];
  regression: boolean;
  summary: string;
}

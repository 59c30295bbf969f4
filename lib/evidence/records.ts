// The shapes of the evidence files (docs/architecture.md, "Evidence layout"), for the activities
// that write them and the report that reads them back.
//
// Shapes owned elsewhere are re-used, not redefined:
//   result.json             CampaignResult      (lib/protocol/campaign-result.ts, the workflow's result)
//   steps/NN-<step>.json    StepOutcome (+ optional index/detail below)
//   verdict.json            RunReport           (lib/protocol/run-report.ts, what `rig measure` writes)
//   samples.csv.gz          the sample stream   (lib/protocol/sample-row.ts)
//   db-samples.jsonl        DbSample rows       (lib/evidence/db-sampler.ts)
//   host-samples.jsonl      HostSample rows     (lib/evidence/host-sampler.ts)
//   disk-samples.jsonl      DiskSample rows     (lib/evidence/disk-sampler.ts)
// Shapes defined HERE (the writer follows them; the report parses them with the schemas below, so a
// writer that drifts from this file is told which file and field, instead of a figure going silent):
//   reconcile.json, load.json, denominator/legs.json, calibration/calibration.json, rig.json.
//
// The schemas are loose on purpose: they require only what the report reads and let writers add
// fields. Every time is an ISO-8601 UTC string (Date#toISOString()).
import type { MemorySeries } from '../protocol/memory-trend';
import { z } from 'zod';
import type { TruthFigures } from '../protocol/calibration-truth';
import type { StepOutcome } from '../protocol/campaign-result';
import type { DbSample, DbSampleError } from './db-sampler';
import type { DiskSample } from './disk-sampler';
import type { HostSample } from './host-sampler';

export type { CampaignResult, RepeatSummary, InterruptedAttempt, StepOutcome } from '../protocol/campaign-result';
export type { DbSample, DbSampleError } from './db-sampler';
export type { HostSample } from './host-sampler';
export type { DiskSample, DiskFigures } from './disk-sampler';
export type { RunReport } from '../protocol/run-report';

const iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO-8601 time, e.g. 2026-08-16T10:00:00.000Z');
const count = z.number().int().min(0);

/** steps/NN-<step>.json: the workflow's StepOutcome, plus where it sat and anything worth keeping. */
export interface StepRecord extends StepOutcome {
  /** NN of the file name. */
  index?: number;
  /** Small step-specific facts (e.g. seed: rows, settle seconds); never secrets, never raw data. */
  detail?: Record<string, unknown>;
}
export const StepRecordSchema = z.looseObject({
  step: z.string(),
  status: z.string(),
  startedAt: iso,
  endedAt: iso,
  summary: z.string(),
});

/**
 * reconcile.json (per repeat, and ceiling/ when the ceiling is reconciled): what the DATABASE holds for
 * the attempt's run tag, counted after the run. Without this file a repeat is "not reconciled" and is
 * not published. Compared with the events/quantity the samples show acknowledged (2xx).
 */
export interface ReconcileFile {
  run_tag: string;
  /** count(*) of usage_events whose properties.rig_run = run_tag. */
  rows_written: number;
  /** sum(quantity) of the same rows. */
  quantity_gained: number;
  /** The livemode partition counted (the fixtures' mode). */
  livemode?: boolean;
  checked_at?: string;
}
export const ReconcileSchema = z.looseObject({ run_tag: z.string(), rows_written: count, quantity_gained: count });

/**
 * load.json: the generator's own summary of the attempt. The report reads only `started_at` (the wall
 * time of t = 0 of the sample stream, to place DB and host samples on the same axis) and `cut_short`
 * (the run stopped before its end: the attempt is interrupted, never counted).
 */
export interface LoadFile {
  mode?: 'open' | 'closed';
  started_at: string;
  ended_at?: string;
  cut_short?: boolean;
  cut_reason?: string;
  run_tag?: string;
  rate?: number;
  batch?: number;
  seconds?: number;
  workers?: number;
  offered?: number;
  sent?: number;
  dropped?: number;
  host?: string;
  /** The generator's summary (lib/loadgen/generator.ts LoadSummary); the page reads only its memory series (issue 35's soak). */
  generator?: { memory?: MemorySeries };
}
export const LoadSchema = z.looseObject({ started_at: iso, cut_short: z.boolean().optional(), cutShort: z.boolean().optional() });

/**
 * db-samples.jsonl: written by lib/evidence/db-sampler.ts (its DbSample type is the shape), one line
 * per snapshot while the repeat runs (every 100 ms-5 s: lib/protocol/db-sampling.ts; checkpointer,
 * bgwriter, sizes and table statistics only every 5 s, settings on the first row), or a DbSampleError
 * line ({t, seq, error}) when a sample failed: a gap the report counts, never a reason to drop the
 * file. Counters (wal, checkpointer, bgwriter) are CUMULATIVE as Postgres reports them; the report
 * takes differences.
 *
 * One optional field beyond DbSample: `cpu_pct`, the database server's own CPU busy %, for a target
 * whose sampler can see it (RDS Enhanced Monitoring). Locally the host sampler has no per-process
 * split, so the report says "not sampled" for DB CPU rather than guess.
 */
export type DbSampleRow = (DbSample & { cpu_pct?: number }) | DbSampleError;

/**
 * wal-bracket.json (issue 31): the WAL position and pg_stat_wal at the load's edges, written by
 * lib/evidence/wal-bracket.ts (its WalBracketFile is the shape). Repeats recorded before it have none:
 * their WAL figure is the first-to-last sampler-row window, marked as such on the page.
 */
export type { WalBracketFile } from './wal-bracket';
const lsnReading = z.looseObject({ t: iso, lsn: z.string(), lsn_bytes: z.number().min(0) });
const statsReading = z.looseObject({ t: iso, wal_records: z.number().min(0), wal_fpi: z.number().min(0), wal_bytes: z.number().min(0) });
export const WalBracketSchema = z.looseObject({
  start: z.union([z.looseObject({ ...lsnReading.shape, ...statsReading.shape }), z.null()]),
  end: z.union([lsnReading, z.null()]),
  end_stats: z.union([statsReading, z.null()]),
  stats_waited_ms: z.union([z.number().min(0), z.null()]),
  problems: z.array(z.string()),
  // Absent before issue 47: those files' bytes were the insert-LSN difference (wal-per-event.ts).
  bytes_measure: z.enum(['wal_bytes (pg_stat_wal)', 'insert LSN difference']).optional(),
});
export const DbSampleSchema = z.union([
  z.looseObject({ t: iso, seq: count, error: z.string() }),
  z.looseObject({
    t: iso,
    seq: count,
    waits: z.array(
      z.looseObject({
        state: z.string().nullable(),
        wait_event_type: z.string().nullable(),
        wait_event: z.string().nullable(),
        backend_type: z.string().nullable(),
        count: z.number().min(0),
      }),
    ),
    wal: z.looseObject({ wal_records: z.number().min(0), wal_bytes: z.number().min(0), wal_fpi: z.number().min(0), lsn_bytes: z.number().min(0).optional() }),
    cpu_pct: z.number().min(0).optional(),
  }),
]);

/**
 * host-samples.jsonl: written by lib/evidence/host-sampler.ts (HostSample), vmstat-like, one line per
 * interval; or an error line ({t, seq, error}). CPU is percent of the whole machine (us sy id wa st).
 */
export type HostSampleRow = HostSample | { t: string; seq: number; error: string };
export const HostSampleSchema = z.union([
  z.looseObject({ t: iso, seq: count, error: z.string() }),
  z.looseObject({ t: iso, seq: count, cpu: z.looseObject({ us: z.number(), sy: z.number(), id: z.number().min(0).max(100), wa: z.number(), st: z.number() }) }),
]);

/**
 * disk-samples.jsonl (local target): written by lib/evidence/disk-sampler.ts (DiskSample), one line a
 * second, each device under the database's files with its per-second figures; or an error line ({t,
 * seq, error}), also the single line of a machine with no block device under the data directory.
 */
export type DiskSampleRow = DiskSample | { t: string; seq: number; error: string };
const perSecond = z.number().min(0);
export const DiskSampleSchema = z.union([
  z.looseObject({ t: iso, seq: count, error: z.string() }),
  z.looseObject({
    t: iso,
    seq: count,
    intervalMs: z.number().min(0),
    devices: z.array(
      z.looseObject({
        device: z.string(),
        reads_ps: perSecond,
        writes_ps: perSecond,
        read_kb_ps: perSecond,
        write_kb_ps: perSecond,
        avg_io_kb: perSecond.nullable(),
        queue_depth: perSecond,
        util_pct: perSecond,
      }),
    ),
  }),
]);

export function isSampleError(r: DbSampleRow | HostSampleRow | DiskSampleRow): r is { t: string; seq: number; error: string } {
  return typeof (r as { error?: unknown }).error === 'string';
}

/**
 * denominator/legs.json: pgbench on the same database and row shape. Each leg verifies its rows in the
 * intended livemode partition; an unverified leg is shown but never used as a denominator.
 */
export interface DenominatorLeg {
  /** e.g. "one-row" (1-row commits), "batch" (rows per transaction = batch), "batch-rls" (same, through RLS). */
  leg: string;
  description: string;
  clients: number;
  /** Rows per transaction. */
  batch: number;
  seconds: number;
  transactions: number;
  rows: number;
  tps: number;
  rows_per_s: number;
  rows_verified: boolean;
  rows_expected?: number;
  rows_found?: number;
  livemode?: boolean;
  /** 1-based place in the order the legs ran (absent before issue 31: they ran in the file's order). */
  order?: number;
  /** The VACUUM and CHECKPOINT the leg began after (absent before issue 31: it began after none). */
  settled_before?: {
    vacuum_s: number;
    vacuum_error?: string;
    checkpoint: { why: string; at: string; seconds: number; buffers_written: number | null; requested_before: number | null; requested_after: number | null; error?: string };
  };
}
export interface DenominatorFile {
  legs: DenominatorLeg[];
}
export const DenominatorSchema = z.looseObject({
  legs: z.array(
    z.looseObject({
      leg: z.string(),
      description: z.string().optional(),
      clients: count,
      batch: count,
      seconds: z.number().min(0),
      tps: z.number().min(0),
      rows_per_s: z.number().min(0),
      rows_verified: z.boolean(),
    }),
  ),
});

/**
 * calibration/calibration.json: the instrument measured against a server of known behaviour. Files
 * written before issue 9 have only `calibrated` and `cases` (name, passed, detail); the rest is
 * optional so they stay readable. Times in ms; definitions in lib/protocol/calibration-truth.ts.
 */
export interface CalibrationFile {
  calibrated: boolean;
  cases: Array<{
    name: string;
    passed: boolean;
    detail: string;
    id?: number;
    /** The server's own figures beside the client's, joined per request (TruthFigures). */
    truth?: CalibrationTruth;
  }>;
  /** The instrument's floor on this host: client latency minus server time against a 0-ms server. */
  floor?: CalibrationFloor | null;
  /** The smallest p99 limit the floor was judged against. */
  p99_limit_ms?: number;
  /** Every tolerance applied (CALIBRATION_TOLERANCES), so the file says what it was judged by. */
  tolerances?: Record<string, number>;
  /**
   * The host's CPU steal (%, one reading a second) while the cases ran, and the steal bound it sets for
   * the campaign's repeats (repeat-validity.ts stealBoundFromCalibration). Absent before issue 34.
   */
  host_steal?: { max: number; median: number } | null;
  steal_bound_pct?: number;
  /**
   * Set only by a test that is not about the instrument (test/harness/calibration-stand-in.ts): why it
   * records a stand-in instead of a calibration. activities/calibrate.ts honours it only under
   * RIG_TESTING=1 and refuses it outside the test suite.
   */
  test_stand_in?: string;
}
export interface CalibrationFloor {
  samples: number;
  p50_ms: number;
  p99_ms: number;
  p99_limit_ms: number;
  /** p99_ms / p99_limit_ms. */
  share_of_limit: number;
}
/** The server's own figures beside the client's, joined per request: lib/protocol/calibration-truth.ts. */
export type CalibrationTruth = TruthFigures;
const msOrNull = z.number().nullable();
const CalibrationTruthSchema = z.looseObject({
  joined: count,
  server_p50_ms: msOrNull,
  server_p99_ms: msOrNull,
  client_p50_ms: msOrNull,
  client_p99_ms: msOrNull,
  excess_p50_ms: msOrNull,
  excess_p99_ms: msOrNull,
  // absent from calibrations recorded before the generator's schedule was judged there
  schedule_lag_p99_ms: msOrNull.optional(),
});
/** calibration/database.json (issue 31 item 6; lib/protocol/db-calibration.ts DbCalibrationFile): read for its verdict and its cases' names. */
export const DbCalibrationSchema = z.looseObject({
  calibrated: z.boolean(),
  passed: z.number().int().min(0),
  total: z.number().int().min(0),
  cases: z.array(z.looseObject({ name: z.string(), ok: z.boolean() })),
});

export const CalibrationSchema = z.looseObject({
  calibrated: z.boolean(),
  cases: z.array(z.looseObject({ name: z.string(), passed: z.boolean(), detail: z.string().optional(), truth: CalibrationTruthSchema.optional() })),
  floor: z
    .looseObject({ samples: count, p50_ms: z.number(), p99_ms: z.number(), p99_limit_ms: z.number().positive(), share_of_limit: z.number().min(0) })
    .nullable()
    .optional(),
  p99_limit_ms: z.number().positive().optional(),
  tolerances: z.record(z.string(), z.number()).optional(),
  host_steal: z.looseObject({ max: z.number().min(0), median: z.number().min(0) }).nullable().optional(),
  steal_bound_pct: z.number().positive().optional(),
});

/**
 * rig.json: the provisioned rig as the report describes it (no secrets). `hardware` is the line the
 * Conditions section prints; `postgresParameters` what the server actually ran with.
 */
export interface RigFile {
  target: string;
  hardware?: string;
  serviceUrl?: string;
  database?: string;
  postgresVersion?: string;
  postgresParameters?: Record<string, string | number | boolean>;
  service?: Record<string, string | number | boolean>;
  /** Which build was measured: the reference service, or the spec's command or image (issue 14). */
  serviceBuild?: string;
  /** The build id of the rig worker that provisioned it (lib/tools/worker-build.ts): an unversioned worker's campaigns have none in visibility. */
  rigBuild?: string;
  /** The rig's $/hour as its target priced it (the spec's hardware.costPerHour for a local rig). */
  costPerHour?: number;
  priceSource?: string;
  priceCovers?: string;
  /** What else the bill holds, one line each (aws: lib/targets/aws/campaign-cost.ts). */
  costNotes?: string[];
}
export const RigSchema = z.looseObject({
  hardware: z.string().optional(),
  costPerHour: z.number().optional(),
  priceSource: z.string().optional(),
  priceCovers: z.string().optional(),
  costNotes: z.array(z.string()).optional(),
  postgresParameters: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

/** service.json (issue 14): what the service under test reported of itself at bring-up (its /healthz `settings`). */
export interface ServiceFile {
  serviceUrl: string;
  /** null: its /healthz has no `settings`. */
  reported: Record<string, string> | null;
  /** The build the service says it is (its /healthz `build`), when it says. */
  build?: string;
}
export const ServiceFileSchema = z.looseObject({
  serviceUrl: z.string(),
  reported: z.record(z.string(), z.string()).nullable(),
  build: z.string().optional(),
});

/** interrupted.json: an attempt that did not finish, and why. It is listed and never counted. */
export interface InterruptedFile {
  reason: string;
  detected_by_attempt?: number;
  detected_at?: string;
}
export const InterruptedSchema = z.looseObject({ reason: z.string() });

/** nodes.json (a repeat of several load nodes, issue 37): a row per node (lib/protocol/node-gates.ts NodeRow). */
export const NodesFileSchema = z.looseObject({
  nodes: z.number(),
  rows: z.array(
    z.looseObject({
      node: z.number(),
      offered: z.number(),
      sent: z.number(),
      ok: z.number(),
      failed: z.number(),
      dropped: z.number(),
      p50_us: z.number().nullable(),
      p99_us: z.number().nullable(),
      schedule_lag_p99_us: z.number().nullable(),
      clock_offset_ms: z.number().nullable(),
      instrument: z.looseObject({ passed: z.boolean().nullable(), detail: z.string() }),
    }),
  ),
});
export type NodesFile = z.infer<typeof NodesFileSchema>;

/** verdict.json: the fields of RunReport the report compares with its own re-derivation. */
export const VerdictSchema = z.looseObject({
  p50_ms: z.number().nullable(),
  p99_ms: z.number().nullable(),
  verdict: z.looseObject({ passed: z.boolean(), interrupted: z.boolean().optional() }),
});

/** result.json: the fields the report reads (the rest is shown as recorded). */
export const ResultSchema = z.looseObject({
  campaignId: z.string(),
  status: z.string(),
  steps: z.array(StepRecordSchema),
  interrupted: z.array(z.looseObject({ configuration: z.string(), index: count, attempt: count, dir: z.string(), reason: z.string() })).optional(),
});

/**
 * warmup/<config>/aA/warmup.json: the warm-up before a configuration's first repeat, judged
 * (lib/protocol/warmup.ts). Never a measurement: the report shows its figures marked "warm-up, not
 * measured", re-derived from its own samples.csv.gz, and never counts, gates or pools them.
 */
export interface WarmupFile {
  configuration: string;
  run_tag: string;
  seconds: number;
  measured: false;
  ok: boolean;
  reasons: string[];
  failed_statuses?: Record<string, number>;
  summary?: string;
}
export const WarmupSchema = z.looseObject({ configuration: z.string(), run_tag: z.string(), seconds: z.number().min(0), ok: z.boolean(), reasons: z.array(z.string()) });

/**
 * cloud-*.json (aws only): written by lib/targets/aws/evidence/collect.ts, shapes in
 * lib/protocol/cloud-evidence.ts. Each holds its source's series or, when the source failed, its
 * error; the report checks only what its summaries read.
 */
const CloudErrorSchema = z.looseObject({ error: z.string(), source: z.string() });
const maybe = z.array(z.number().nullable());
export const CloudRdsSchema = z.union([
  CloudErrorSchema,
  z.looseObject({ source: z.string(), period_s: z.number(), stat: z.string(), complete: z.boolean(), series: z.array(z.looseObject({ metric: z.string(), unit: z.string(), values: z.array(z.number()) })) }),
]);
export const CloudOsSchema = z.union([
  CloudErrorSchema,
  z.looseObject({
    source: z.string(),
    granularity_s: z.number().nullable(),
    unreadable: z.number(),
    t: z.array(iso),
    cpu_total_pct: maybe,
    cpu_wait_pct: maybe,
    cpu_steal_pct: maybe,
    // Read for tail attribution's disk figures; read_kb_ps/write_kb_ps only in files written since.
    disks: z.array(z.looseObject({ device: z.string(), read_iops: maybe, write_iops: maybe, avg_queue_len: maybe, read_kb_ps: maybe.optional(), write_kb_ps: maybe.optional() })).optional(),
  }),
]);
export const CloudDbLoadSchema = z.union([
  CloudErrorSchema,
  z.looseObject({ source: z.string(), period_s: z.number(), total: z.looseObject({ values: maybe }).nullable(), by_wait_event: z.array(z.looseObject({ event: z.string(), values: maybe })) }),
]);

/** baseline.json (layout.ts BASELINE_FILE): the comparison's other side, or why there is none. */
export interface BaselineChoice {
  /** pinned: the spec's `baseline`; schedule: found among the runs of the schedule that started this one. */
  how: 'pinned' | 'schedule';
  schedule_id?: string;
  /** The baseline's campaign id (its folder under the results root); null when none was found. */
  baseline_id: string | null;
  /** The baseline's workflow id, when found through Temporal. */
  baseline_workflow_id?: string;
  /** One sentence: what was looked for and what was found. */
  why: string;
}

export const BaselineChoiceSchema = z.looseObject({
  how: z.enum(['pinned', 'schedule']),
  schedule_id: z.string().optional(),
  baseline_id: z.string().nullable(),
  why: z.string(),
});

/** history-alert.json (lib/evidence/history-alert.ts): the spec's history as the report step read it. */
export const HistoryAlertSchema = z.looseObject({
  runs: z.number(),
  regressed: z.boolean(),
  changes: z.array(z.looseObject({ series: z.string(), figure: z.string(), run: z.string() })),
  summary: z.string(),
  series: z.array(z.looseObject({ series: z.string(), figures: z.array(z.looseObject({ key: z.string() })), rows: z.array(z.looseObject({ campaignId: z.string() })), changePoints: z.array(z.looseObject({ figure: z.string(), row: z.number() })) })).optional(),
});

/** variants/NN-<variant>.json (activities/variant.ts): a change of variant, as it took effect. */
export const VariantChangeSchema = z.looseObject({
  seq: count,
  variant: z.string(),
  at: iso,
  applied: z.looseObject({
    database: z.record(z.string(), z.string()),
    service: z.record(z.string(), z.string().optional()),
    restarted: z.looseObject({ database: z.array(z.string()), service: z.boolean() }),
  }),
});

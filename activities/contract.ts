// Inputs and outputs of the rig's activities: small, plain, secret-free data (they are recorded in
// workflow history). Large data goes to evidence files; results carry their paths.
import type {
  CampaignResult,
  DenominatorSummary,
  InterruptedAttempt,
  RepeatSummary,
  RigHandle,
} from '../lib/protocol/campaign-result';
import type { CampaignSpec, ConfigurationSpec, TargetName } from '../lib/protocol/spec';

/** The host whose worker claimed a campaign, and its own queue for the campaign's machine-bound steps. */
export interface ClaimHostOutput {
  host: string;
  hostQueue: string;
}

export interface LeaseRequestInput {
  host: string;
  /** The campaign's workflow id: the grant is signalled to it. */
  workflowId: string;
  /** How often a lease this request starts looks at its holder (the spec's watchdogCheckSeconds). */
  holderCheckMs?: number;
}

/** Who holds the lease now (absent: nobody else; the grant follows at once). */
export interface LeaseRequestOutput {
  heldBy?: string;
  since?: string;
  /** Campaigns in line, this one included. */
  waiting?: number;
}

export interface CampaignRef {
  campaignId: string;
}

export interface OpenCampaignInput extends CampaignRef {
  spec: CampaignSpec;
}

export interface OpenCampaignOutput {
  resultsDir: string;
  /** Rig search attributes the cluster lacks (then the workflow does not upsert them). */
  missingSearchAttributes: string[];
}

export interface StepSummary {
  summary: string;
}

export interface CalibrateInput extends CampaignRef {
  /**
   * The smallest p99 limit (ms) of the spec's sustained configurations: the instrument's floor p99
   * may be at most 10 % of it. Default 50 when absent (histories recorded before it was passed).
   */
  p99LimitMs?: number;
  /** The rig whose node calibrates (an AWS rig's load node, after provisioning); absent on the control host. */
  rig?: RigHandle;
  /** One of the rig's load nodes (issue 37, load.nodes > 1), calibrating in its own worker: its evidence under calibration/nodes/n<i>/. */
  node?: number;
}

export interface CalibrateOutput extends StepSummary {
  /**
   * The host CPU steal (%) at or over which a failed repeat is the host's (repeat-validity.ts
   * stealBoundFromCalibration): what the instrument was proven under, never below the constant.
   * Absent from histories recorded before issue 34's bound (the workflow then uses the constant).
   */
  stealBoundPct?: number;
}

export interface CleanCheckInput extends CampaignRef {
  target: TargetName;
  /** Before provisioning a dirty account refuses; after teardown the result is reported. */
  phase: 'before' | 'after';
}
export interface CleanCheckOutput extends StepSummary {
  clean: boolean;
}

export interface ProvisionInput extends CampaignRef {
  spec: CampaignSpec;
  /**
   * The database is waited for apart (awaitRigDatabase, an activity of its own): provision returns once
   * everything is made and launched, and rig.json is written by the wait. Targets without awaitDatabase ignore it.
   */
  databaseApart?: boolean;
}

export interface CampaignRunStateInput {
  /** The campaign's workflow id (not its campaign id). */
  workflowId: string;
}
export interface CampaignRunStateOutput {
  /** The execution status name (RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT, ...), or NOT_FOUND. */
  status: string;
}

export interface TeardownInput extends CampaignRef {
  target: TargetName;
  by: 'campaign' | 'watchdog' | 'operator';
  /** An AWS rig's region (the spec's): a worker on another host than the one that made the rig has no record of it. */
  region?: string;
}

/** The watchdog's deadline moved: re-tag the rig's expiry (Target.extendExpiry). */
/** nodeConsoleTail's answer: the rig's hosts' console tails (bounded), or none where the target has no hosts. */
export interface NodeConsoleTail {
  tail?: string;
}

export interface RetagExpiryInput extends CampaignRef {
  target: TargetName;
  /** The new deadline, ISO 8601. */
  expiresAt: string;
}

export interface RigInput extends CampaignRef {
  rig: RigHandle;
}

export interface BringUpInput extends RigInput {
  customers: number;
}

export interface SeedInput extends RigInput {
  rows: number;
  settleTimeoutSeconds: number;
  /** The service reads the daily rollup (HC_AGGREGATE=rollup): rebuild it after the COPY, which bypasses it. */
  rebuildRollup: boolean;
  /** A variant's fresh history (variants.fresh): its own seed tag, the table emptied of anything else first. */
  fresh?: string;
  /**
   * Target "existing" only: 'refuse' stops the seed when the fixtures' partition holds rows the rig did
   * not write (seed.allowForeignRows makes it 'allow'); absent elsewhere (the rig made the database).
   */
  foreignRows?: 'refuse' | 'allow';
}

export interface RepeatInput extends RigInput {
  kind: RepeatSummary['kind'];
  configuration: ConfigurationSpec;
  /** 1-based repeat index within its configuration. */
  index: number;
  seconds: number;
  probe: { rate: number; p99BudgetMs: number };
  driftLimit: number;
  /** sustained.drift "noted": drift reported beside the verdict, not gated. Absent (and so in every older history): gated. */
  driftNoted?: boolean;
  maxInFlight: number;
  /** Closed loop with this many workers (the ceiling); open loop when absent. */
  closedLoopWorkers?: number;
  /** `rig step` only: the attempt number to use (Temporal's own attempt counter otherwise). */
  attempt?: number;
  /**
   * A re-run of an invalid repeat: the attempts the repeat had before it (its folders rK-a1..aN are
   * kept); this one's attempts are numbered from N + 1, so its folder and run tag are its own.
   */
  attemptsBefore?: number;
  /**
   * Judge whether a failed sustained repeat is invalid (the instrument's failure, lib/protocol/
   * repeat-validity.ts), with the host CPU steal bound (%) it is judged with. Absent (histories from
   * before it): a failure is the target's, as before.
   */
  validity?: { stealBoundPct: number };
}

export interface RepeatOutput {
  summary: RepeatSummary;
  /** Earlier attempts of this repeat that a crash interrupted (found by this attempt). */
  interrupted: InterruptedAttempt[];
}

export interface WarmupInput extends RigInput {
  /** The configuration (or the ladder's first rung) whose rate and batch the warm-up offers. */
  configuration: ConfigurationSpec;
  seconds: number;
  maxInFlight: number;
}

export interface WarmupOutput {
  /** One line for the step log: what was offered and answered, and that nothing of it is counted. */
  summary: string;
  /** warmup/<config>/aA */
  dir: string;
  runTag: string;
  sent: number;
  ok: number;
  failed: number;
  dropped: number;
  p99Ms: number | null;
  rowsReconciled: number;
}

export interface DenominatorInput extends RigInput {
  batch: number;
  clients: number;
  seconds: number;
  /** The closed-loop ceiling, to print the ratio beside the legs. */
  hardcountEventsPerSecond?: number;
}

export type DenominatorOutput = DenominatorSummary;

export interface FinishInput extends CampaignRef {
  result: CampaignResult;
  /** The spec's `baseline` (a campaign or workflow id) that pins the comparison; else a scheduled run finds its own. */
  baseline?: string;
}
export interface FinishOutput {
  resultsDir: string;
  reportPath?: string;
  /** Set when the page compared this campaign with a baseline: whether anything regressed. */
  regressed?: boolean;
  /** The baseline compared with (its campaign id). */
  baselineId?: string;
}

export interface DbCalibrateInput extends CampaignRef {
  rig: RigHandle;
}

/** The database calibration's verdict: where its evidence is, n/n, and the cases that failed. */
export interface DbCalibrateOutput extends StepSummary {
  path: string;
  calibrated: boolean;
  passed: number;
  total: number;
  failed: string[];
}

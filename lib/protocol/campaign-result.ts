// The records a campaign produces, as plain data: what activities return to the workflow (small
// summaries and paths, never raw samples) and what result.json holds. Types only: the workflow,
// the activities and the report all read the same shapes.
import type { TargetName } from './spec';

export type StepName =
  | 'lease'
  | 'calibrate'
  | 'clean-check'
  | 'provision'
  | 'watchdog'
  /** An AWS rig's RDS instance waited for until available, apart from provisioning (its own heartbeating activity). */
  | 'database'
  /** An AWS rig's database made ready from its load node (roles, migrations). */
  | 'prepare'
  /** An AWS rig's service started on its app node. */
  | 'service'
  /**
   * An AWS rig's app node, after a repeat: its host sampler checked and its samples sent home. Listed
   * only when that failed (the campaign goes on; the page shows those repeats without app node samples).
   */
  | 'app-node'
  | 'bring-up'
  /** The database side calibrated on the rig's own cluster after bring-up (issue 31 item 6; calibration/database.json). */
  | 'calibrate-database'
  | 'seed'
  /** The rig's load nodes' workers started (issue 37, a configuration with load.nodes > 1), before its first repeat. */
  | 'load-nodes'
  | 'warm-up'
  /** The rig took another variant's settings (issue 13): variants/NN-<variant>.json says what ran. */
  | 'variant'
  | 'sustained'
  | 'ladder'
  | 'ceiling'
  | 'denominator'
  | 'teardown'
  | 'clean-check-after'
  | 'report';

export type StepStatus = 'ok' | 'refused' | 'failed' | 'skipped' | 'cancelled';

export interface StepOutcome {
  step: StepName;
  status: StepStatus;
  /** ISO times from the workflow's clock. */
  startedAt: string;
  endedAt: string;
  /** One line for the log and the report: what happened, or the refusal's reason. */
  summary: string;
}

/** What provisioning made, as the rest of the campaign needs it. No secrets: those stay in the rig folder. */
export interface RigHandle {
  campaignId: string;
  target: TargetName;
  /** Task queue of the data-plane worker that can reach this rig (load, seeding, pgbench). */
  dataQueue: string;
  /** Task queue of the worker on the rig's app node, where the target has one (AWS); the service starts there. */
  appQueue?: string;
  /** Base URL of the service under test. */
  serviceUrl: string;
  /** Database host:port, for display. */
  database: string;
  /** Folder holding the rig's own files (cluster, logs, the 0600 secrets file). */
  rigDir: string;
  /** Hardware line for the report. */
  hardware: string;
  parameters: Record<string, string | number | boolean>;
}

/** The compact verdict of one repeat (the full statistics are in its verdict.json). */
export interface RepeatSummary {
  configuration: string;
  /** 1-based repeat index within the configuration. */
  index: number;
  /** 1-based attempt; an attempt that a crash interrupted is listed in `interrupted`. */
  attempt: number;
  runTag: string;
  kind: 'sustained' | 'rung' | 'ceiling';
  passed: boolean;
  /** Every gate that failed, in words (empty when passed). */
  reasons: string[];
  samples: number;
  dropped: number;
  failed: number;
  p50Ms: number | null;
  p99Ms: number | null;
  /** sent - intended p99 (the `instrument` check); optional: histories recorded before it lack it. */
  scheduleLagP99Ms?: number | null;
  /** done - intended p99, beside the gated p99 (done - sent); optional like scheduleLagP99Ms. */
  correctedP99Ms?: number | null;
  worst10sP99Ms: number | null;
  drift: number | null;
  /** The drift's 95 % interval (low; high, null: unbounded above); optional: histories recorded before issue 34 lack it. */
  driftLow?: number | null;
  driftHigh?: number | null;
  deliveredRate: number;
  freezeSeconds: number;
  windows: number;
  reconciled: boolean;
  probe?: { verdict: 'ok' | 'DEGRADED'; p99Ms: number | null };
  /** Evidence folder of this attempt, relative to the campaign's results folder. */
  dir: string;
  cutShort: boolean;
  /**
   * Set when the repeat is invalid (lib/protocol/repeat-validity.ts): it failed on the instrument's
   * account (the generator late, or the host's CPU steal over its bound), so it is kept and shown
   * but not counted; why, e.g. "instrument: schedule lag p99 ...". Absent on a valid repeat.
   */
  invalid?: string;
  /**
   * Set when the repeat is NOT JUDGED (lib/protocol/verdicts.ts): every check that ran passed, but one
   * that decides a pass could not be made, e.g. ["drift not judgeable"] (the drift interval straddles
   * the limit, issue 34). Neither a pass nor the service's failure. Absent on a judged repeat.
   */
  notJudged?: string[];
}

/** An attempt that a worker crash (or a cancellation) interrupted: recorded, never counted. */
export interface InterruptedAttempt {
  configuration: string;
  index: number;
  /** null when the attempt number is not known (a cancellation that stopped the running attempt). */
  attempt: number | null;
  runTag: string | null;
  dir: string | null;
  reason: string;
}

export interface ConfigurationOutcome {
  name: string;
  eventsPerSecond: number;
  batch: number;
  passed: number;
  total: number;
  /** Held only when every repeat passed. */
  held: boolean;
  /** Invalid attempts (the instrument's failures, lib/protocol/repeat-validity.ts): shown, never counted. Absent when none. */
  invalid?: number;
  /**
   * Set when no counted repeat failed but one has no verdict: 'instrument' when a repeat has no valid
   * attempt (invalid, and its re-run invalid or none left); 'drift' when a valid repeat passed every
   * check that ran but its drift interval straddled the limit (issue 34). The configuration is then
   * NOT JUDGED, never NOT HELD.
   */
  notJudged?: 'instrument' | 'drift';
  /** sustained.drift "noted": drift was shown beside each repeat and gated nothing, so "held" is held on every other gate. */
  driftNoted?: true;
}

/**
 * held / not-held: every configuration passed every repeat, or not. not-judged: no configuration
 * failed, but one has a repeat without a verdict: the instrument's (invalid twice, or out of re-runs)
 * or the drift's (its interval straddled the limit) (lib/protocol/configuration-state.ts campaignVerdict). uncalibrated: it ran with
 * `calibrate: false`, so nothing it measured is a verdict, whatever passed. dirty: the clean-check
 * after teardown found leftovers, whatever was measured (the watchdog stays armed).
 */
export type CampaignStatus = 'held' | 'not-held' | 'not-judged' | 'uncalibrated' | 'dirty' | 'failed' | 'aborted' | 'cancelled';

export interface CampaignResult {
  campaignId: string;
  name: string;
  target: TargetName;
  status: CampaignStatus;
  /** The failure or refusal that stopped the campaign, if one did. */
  error?: string;
  steps: StepOutcome[];
  repeats: RepeatSummary[];
  interrupted: InterruptedAttempt[];
  configurations: ConfigurationOutcome[];
  ceiling?: RepeatSummary;
  denominator?: DenominatorSummary;
  /** Whether the rig was torn down, kept, or left to the watchdog; untouched: an existing deployment (nothing was made, nothing removed). */
  rig: 'destroyed' | 'kept' | 'not-provisioned' | 'teardown-failed' | 'untouched';
  /** The clean-check after teardown: "clean", or what it found. */
  cleanAfter?: string;
  resultsDir: string;
  reportPath?: string;
}

export interface DenominatorLegSummary {
  leg: string;
  rowsPerSecond: number;
  rowsVerified: boolean;
}

export interface DenominatorSummary {
  legs: DenominatorLegSummary[];
  dir: string;
}

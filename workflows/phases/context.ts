// What the phases of benchCampaign share (workflows/campaign.ts): the campaign's ids and resolved
// spec, what it has measured so far, its progress (the query's answer), and the tools every step
// uses: the step recorder and the activity proxies, by queue. A phase reads and writes it; the
// commands the campaign issues are the phases' own, in the order the top level calls them. Each
// step's activity options (timeouts, heartbeat timeout, retries) are set where its phase calls it;
// the defaults are on() and retry below.
import {
  condition,
  isCancellation,
  proxyActivities,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type * as activities from '../../activities';
import type {
  ConfigurationOutcome,
  DenominatorSummary,
  InterruptedAttempt,
  RepeatSummary,
  RigHandle,
  StepName,
  StepOutcome,
} from '../../lib/protocol/campaign-result';
import { campaignIdOf } from '../../lib/protocol/campaign-id';
import { configurationCounts } from '../../lib/protocol/configuration-state';
import { measuredConfigurations, measuringSeries } from '../../lib/protocol/variants';
import type { CampaignSpec } from '../../lib/protocol/spec';
import type { LoadNodeHandle } from '../../lib/protocol/load-nodes';
import type { PlanOptions, PlanStep } from '../../lib/protocol/plan';
import { CONTROL_QUEUE } from '../../lib/temporal/queues';
import { failureReason, isRefusal, namingQueue } from '../failures';
import type { CampaignProgress } from '../messages';
import { RigStep } from '../search-attributes';
import { followPlan } from './watchdog';

/** Retries for steps that are safe to repeat; refusals are non-retryable and stop at once. */
export const retry = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 };

export function control(opts: Partial<ActivityOptions>) {
  return proxyActivities<typeof activities>({ taskQueue: CONTROL_QUEUE, startToCloseTimeout: '10 minutes', retry, ...opts });
}

/** Thrown to leave the steps before the series when an abort arrives while the campaign waits for its lease. */
export class StopBeforeMeasuring extends Error {}

/** Steps whose progress line keeps its configuration, repeat and phase (and that an abort lets finish). */
export const SERIES_STEPS: readonly string[] = ['sustained', 'ladder', 'ceiling', 'denominator'];

export class Campaign {
  readonly workflowId = workflowInfo().workflowId;
  readonly campaignId = campaignIdOf(this.workflowId);
  readonly startedMs = Date.now();
  readonly steps: StepOutcome[] = [];
  readonly repeats: RepeatSummary[] = [];
  readonly interrupted: InterruptedAttempt[] = [];
  ceiling: RepeatSummary | undefined;
  denominator: DenominatorSummary | undefined;
  /** The rig once provisioned (a variant or the app node's service may move its service URL). */
  rig: RigHandle | undefined;
  aborting = false;
  readonly progress: CampaignProgress;
  /** When the repeat in flight is due to end (workflow time when it was scheduled + its length). */
  repeatEndsAtMs: number | undefined;

  /** The spec with every default, from the history (workflows/phases/spec.ts): set before any phase runs. */
  spec!: CampaignSpec;
  planOptions: PlanOptions = {};

  /**
   * openCampaign refused the evidence folder: it is another run's (lib/evidence/folder-owner.ts), so
   * this run writes nothing there, not even its report (phases/report.ts). Undefined: the folder is this run's.
   */
  evidenceRefused: string | undefined;
  /** Search attributes the namespace lacks (openCampaign says; undefined until then: none is set). */
  missingAttributes: readonly string[] | undefined;
  readonly watchdogId = `${this.workflowId}.watchdog`;
  /** The deadline this campaign last gave its watchdog (undefined until it is armed). */
  watchdogUntilMs: number | undefined;
  /** The claimed host's own queue (the shared queue until then: a campaign whose claim failed reports from any worker). */
  hostQueue = CONTROL_QUEUE;
  /** The host whose measuring lease this campaign asked for (it gives it back at the end). */
  leaseHost: string | undefined;
  leaseGranted = false;
  /** From here on, teardown runs whatever happens (it is idempotent). */
  provisioned = false;
  /**
   * The host CPU steal (%) the calibration was proven under, the bound a failed repeat's steal is
   * judged against (repeat-validity.ts stealBoundFromCalibration). Undefined without a calibration, or
   * from one recorded before it was returned: the constant INVALID_STEAL_PCT then.
   */
  stealBoundPct: number | undefined;
  /** The rig's load nodes (issue 37), once started for a configuration with load.nodes > 1 (phases/load-nodes.ts). */
  loadNodes: LoadNodeHandle[] | undefined;
  /** What stopped the phases before the end (undefined: none did). */
  failure: unknown;

  constructor() {
    this.progress = {
      campaignId: this.campaignId,
      step: 'start',
      status: 'running',
      startedAt: new Date(this.startedMs).toISOString(),
      secondsLeft: 0, // known once the spec is resolved
      lastVerdicts: [],
      aborting: false,
    };
  }

  /** The rig, for the steps after provisioning. */
  get theRig(): RigHandle {
    if (!this.rig) throw new Error('no rig: a step after provisioning ran before it');
    return this.rig;
  }

  /** A step no worker takes within workerWaitSeconds fails, naming the queue (workflows/failures.ts). */
  get workerWait(): string {
    return `${this.spec.workerWaitSeconds} seconds`;
  }

  /**
   * Upserting a search attribute the cluster lacks fails every workflow task, so they are set only
   * once openCampaign has seen them registered (otherwise it logs the commands that register them).
   * Each attribute on its own: a cluster registered before one was added (RigRegressed) keeps the others.
   */
  setSearchAttributes(pairs: SearchAttributeUpdatePair[]): void {
    const missing = this.missingAttributes;
    if (!missing) return;
    const known = pairs.filter((p) => !missing.includes(p.key.name));
    if (known.length) upsertSearchAttributes(known);
  }

  /** Activities on `taskQueue`, each failing with the queue's name when no worker takes it in time. */
  on(taskQueue: string, opts: Partial<ActivityOptions>) {
    return namingQueue(
      proxyActivities<typeof activities>({ taskQueue, startToCloseTimeout: '10 minutes', scheduleToStartTimeout: this.workerWait, retry, ...opts }),
      taskQueue,
      this.workerWait,
    );
  }

  /** Activities that act on the claimed host's disk and processes. */
  machine(opts: Partial<ActivityOptions>) {
    return this.on(this.hostQueue, opts);
  }

  /** Activities on the rig's data plane (its load host). */
  data(opts: Partial<ActivityOptions>) {
    return this.on(this.theRig.dataQueue, opts);
  }

  /** Runs one step and records its outcome; `within` a series step, progress keeps showing the series. */
  async step<T>(name: StepName, fn: () => Promise<T>, summarize: (r: T) => string, within = false): Promise<T> {
    const planStep = planStepOf(this, name);
    if (planStep) await followPlan(this, planStep);
    const progress = this.progress;
    if (!within) {
      progress.step = name;
      if (!SERIES_STEPS.includes(name)) {
        progress.configuration = undefined;
        progress.repeat = undefined;
        progress.phase = undefined;
      }
      this.setSearchAttributes([{ key: RigStep, value: name }]);
    }
    const startedAt = new Date().toISOString();
    try {
      const r = await fn();
      this.steps.push({ step: name, status: 'ok', startedAt, endedAt: new Date().toISOString(), summary: summarize(r) });
      return r;
    } catch (err) {
      const status = isCancellation(err) || err instanceof StopBeforeMeasuring ? 'cancelled' : isRefusal(err) ? 'refused' : 'failed';
      this.steps.push({ step: name, status, startedAt, endedAt: new Date().toISOString(), summary: failureReason(err) });
      throw err;
    }
  }

  /** A cool-down: a durable timer, cut short by an abort. */
  async coolDown(seconds: number): Promise<void> {
    this.progress.phase = 'cool-down';
    await condition(() => this.aborting, seconds * 1000);
  }

  /** Records a step that did not run, and why. */
  skip(step: StepName, summary: string): void {
    this.steps.push(skipped(step, summary));
  }
}

/**
 * The plan's step a campaign step counts from (lib/protocol/plan.ts). An AWS rig (today's plan) waits
 * for RDS and calibrates on its load node in steps of their own; a local rig calibrates before the
 * watchdog is armed, where followPlan has nothing to move.
 */
function planStepOf(cx: Campaign, name: StepName): PlanStep | undefined {
  const awsSteps = cx.spec.target === 'aws' && !cx.planOptions.legacy;
  const steps: Partial<Record<StepName, PlanStep>> = {
    ...(awsSteps ? { calibrate: 'calibrate' as const } : {}),
    provision: 'provision',
    database: awsSteps ? 'database' : 'bring-up',
    prepare: 'bring-up',
    service: 'bring-up',
    'bring-up': 'bring-up',
    seed: 'seed',
    'warm-up': 'measuring',
    sustained: 'measuring',
    ladder: 'measuring',
    ceiling: 'measuring',
    denominator: 'measuring',
    teardown: 'teardown',
  };
  return steps[name];
}

export function skipped(step: StepName, summary: string): StepOutcome {
  const now = new Date().toISOString();
  return { step, status: 'skipped', startedAt: now, endedAt: now, summary };
}

/** N/M per configuration, in spec order; held only when every repeat passed (invalid ones aside: lib/protocol/configuration-state.ts). */
export function outcomes(spec: CampaignSpec, repeats: RepeatSummary[]): ConfigurationOutcome[] {
  const total = measuringSeries(spec)?.repeats ?? 0;
  const configs = measuredConfigurations(spec).map((c) => ({ name: c.name, eventsPerSecond: c.eventsPerSecond, batch: c.batch, total }));
  return configs.map((c) => {
    const { ran: _ran, ...counts } = configurationCounts(repeats, c.name, c.total);
    // A held that did not gate drift says so wherever it is printed (client/progress-view.ts, the page).
    return { ...c, ...counts, ...(spec.sustained?.drift === 'noted' ? { driftNoted: true as const } : {}) };
  });
}

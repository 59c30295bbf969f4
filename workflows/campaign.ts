// benchCampaign: the Hardcount bench protocol (run.sh of the spec) as one durable workflow.
//
// calibrate -> clean-check -> watchdog -> provision -> bring-up -> seed -> sustained (or ladder)
// -> ceiling -> denominator -> teardown -> clean-check again -> report.
//
// Deterministic: no I/O, clocks or randomness outside Temporal's APIs; large data stays in evidence
// files (activities return paths and small summaries); no secret is ever an argument or a result.
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  deprecatePatch,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type * as activities from '../activities';
import type {
  CampaignResult,
  CampaignStatus,
  ConfigurationOutcome,
  DenominatorSummary,
  InterruptedAttempt,
  RepeatSummary,
  RigHandle,
  StepName,
  StepOutcome,
} from '../lib/protocol/campaign-result';
import { CLOUD_EVIDENCE_BUDGET_S } from '../lib/protocol/cloud-evidence';
import { campaignVerdict, configurationCounts } from '../lib/protocol/configuration-state';
import { countedRepeats, INVALID_STEAL_PCT, mayRerun } from '../lib/protocol/repeat-validity';
import { campaignIdOf } from '../lib/protocol/campaign-id';
import { measuredConfigurations, measuringOrder, measuringSeries, variantSettings, warmsUpBefore } from '../lib/protocol/variants';
import { EXISTING_SKIPPED } from '../lib/protocol/existing-spec';
import { serviceLaunch, usesRollup } from '../lib/protocol/service-spec';
import { calibratesOnRigNode, tearsDownFromAnyHost, type CampaignSpec, type CampaignSpecInput, type ConfigurationSpec } from '../lib/protocol/spec';
import { historyProblem } from '../lib/protocol/history-budget';
import { DENOMINATOR_LEGS, marginMinutes, measuringSecondsLeft, planFrom, totalMinutes, watchdogProblem, type PlanOptions, type PlanStep } from '../lib/protocol/plan';
import { failureReason, isRefusal, namingQueue } from './failures';
import { abortSignal, abortUpdate, disarmSignal, fireSignal, holdUntilSignal, leaseGrantedSignal, leaseReleaseSignal, progressQuery, type CampaignProgress } from './messages';
import { RigCampaign, RigRegressed, RigStatus, RigStep, RigTarget } from './search-attributes';
import { temporalCallOptions } from './temporal-calls';
import { teardownFromAnywhere } from './teardown';
import { rigWatchdog } from './watchdog';
import { CONTROL_QUEUE, hostQueue as hostQueueOf, leaseWorkflowId } from '../lib/temporal/queues';

/**
 * Patch ids, each deprecated (deprecatePatch, step one of the SDK's two-step retirement; 2026-12-04,
 * issue 24): deprecated: remove the call once no open campaign holds the marker. Campaigns started by
 * a versioned worker are PINNED (workflows/index.ts) and never run newer code, so the old branches
 * were deleted and only the path every campaign since has taken is left. A deprecated call writes
 * its marker (marked deprecated) on a new run and matches a history that holds the marker, deprecated
 * or not; a history without it (one that took an old branch) no longer replays. The next step, once
 * `rig replay --open` shows no open campaign started before this build: delete the calls and the ids
 * (docs/architecture.md, "Retiring the campaign's patches").
 */
/** The watchdog's deadline follows the plan: a watchdog shorter than the plan is refused; each step moves it to cover what is left. */
const PLAN_PATCH = 'watchdog-follows-plan';
/** Each configuration's first repeat (a ladder's first rung) is preceded by an unmeasured warm-up and a cool-down. */
const WARMUP_PATCH = 'warm-up-before-first-repeat';
/** A plan whose history would pass the server's 10,240-event warning is refused before any step (lib/protocol/history-budget.ts). */
const HISTORY_BUDGET_PATCH = 'history-budget-refused';
/** Teardown retries for about 50 minutes with a heartbeat timeout; giving up tells the watchdog to fire now. */
const TEARDOWN_PATCH = 'teardown-retries-then-fires-watchdog';
/**
 * A campaign's first step claims the host of the worker that took it (activities/host.ts); its
 * machine-bound steps (open, calibrate, clean-check, provision, teardown, report) and its watchdog's
 * teardown go to that host's own queue, never to a worker on another machine.
 */
const HOST_PATCH = 'machine-bound-steps-on-host-queue';
/**
 * The spec is resolved (defaults applied) once, by an ordinary activity on the control queue, whose
 * result the history keeps: a default changed in code later does not change a campaign in flight. (It
 * replaced 'spec-resolved-once-into-history', a local activity whose history the SDK could not always
 * replay after a worker restart, docs/benchmarks.md; that id is gone: no history on this path holds it.)
 */
const SPEC_ACTIVITY_PATCH = 'spec-resolved-by-activity';
/**
 * One measurement per host at a time: the campaign takes its host's lease (workflows/host-lease.ts)
 * before it calibrates and gives it back after its teardown; a second campaign waits, saying for whom.
 */
const LEASE_PATCH = 'one-measurement-per-host';
/**
 * After each repeat on a rig with an app node (aws), that node's worker checks its host sampler and
 * sends its samples home (activities/nodes.ts keepAppNodeEvidence).
 */
const APP_NODE_PATCH = 'app-node-evidence-after-each-repeat';
/** Search attributes are upserted each when registered, not all or none. */
const SEARCH_ATTRIBUTES_PATCH = 'search-attributes-each-on-its-own';
/** The report step's comparison with a baseline sets RigRegressed. */
const REGRESSED_PATCH = 'rig-regressed-search-attribute';
/**
 * A step on the rig's own hosts (aws: prepare on the load node, the service on the app node) that no
 * worker took fails carrying what those hosts said on their serial consoles (nodeConsoleTail), so a
 * node that never came up says why in the campaign's own failure.
 */
const NODE_CONSOLE_PATCH = 'no-worker-carries-node-console';
/**
 * An AWS rig's RDS instance is waited for in an activity of its own (awaitRigDatabase: heartbeating,
 * bounded by the spec's aws.database.availableWaitMinutes) instead of inside provisioning, whose
 * 15-minute timeout RDS's creation can exceed (attempts would overlap, and three timeouts fail a
 * campaign whose database is already billing). The nodes boot meanwhile.
 */
const DATABASE_APART_PATCH = 'rds-wait-own-activity';
/**
 * Teardown that no single machine can stop (workflows/teardown.ts): on the claimed host's queue with a
 * bounded wait for its worker (workerWaitSeconds), then retried without a cap (an AWS rig by any worker,
 * on the shared queue), RigStatus `teardown-failing` while it does; its watchdog is told the same.
 * The clean-check after an AWS teardown falls back to the shared queue too.
 */
const ANYWHERE_PATCH = 'teardown-from-any-worker';
/**
 * Active (patched, not deprecated): an AWS campaign plans with AWS's own allowances and a `database`
 * step (lib/protocol/plan.ts AWS_PLAN_STEPS: provisioning 15 min, RDS's creation up to the spec's
 * aws.database.availableWaitMinutes, calibration on the load node, teardown 15 min), so the watchdog
 * covers an RDS creation that runs long. It changes which watchdog signals followPlan sends, so an
 * AWS campaign started before it (on an unversioned worker) keeps the plan it had. Local and existing
 * campaigns plan as before and never ask.
 */
const AWS_PLAN_PATCH = 'aws-plan-own-allowances';
/**
 * Active (patched): a sustained repeat that failed on the instrument's account (the generator late, or
 * the host's CPU steal over its bound) is INVALID (lib/protocol/repeat-validity.ts): kept, shown, not
 * counted, and run again once per configuration; invalid again, the configuration is NOT JUDGED
 * (instrument). It adds activities (the re-run) and timers, so a campaign started before it keeps
 * counting such a repeat as failed.
 */
const INVALID_RERUN_PATCH = 'instrument-invalid-rerun';
/** Retries for steps that are safe to repeat; refusals are non-retryable and stop at once. */
const retry = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 };

function control(opts: Partial<ActivityOptions>) {
  return proxyActivities<typeof activities>({ taskQueue: CONTROL_QUEUE, startToCloseTimeout: '10 minutes', retry, ...opts });
}

export async function benchCampaign(input: CampaignSpecInput): Promise<CampaignResult> {
  const workflowId = workflowInfo().workflowId;
  const campaignId = campaignIdOf(workflowId);
  const startedMs = Date.now();
  const steps: StepOutcome[] = [];
  const repeats: RepeatSummary[] = [];
  const interrupted: InterruptedAttempt[] = [];
  let ceiling: RepeatSummary | undefined;
  let denominator: DenominatorSummary | undefined;
  let rig: RigHandle | undefined;
  let aborting = false;

  const progress: CampaignProgress = {
    campaignId,
    step: 'start',
    status: 'running',
    startedAt: new Date(startedMs).toISOString(),
    secondsLeft: 0, // known once the spec is resolved
    lastVerdicts: [],
    aborting: false,
  };
  // Nothing computed from the clock here: a query sees the workflow's time of its last task, which
  // stands still during a repeat; the client computes the elapsed time from startedAt.
  setHandler(progressQuery, () => progress);
  /** When the repeat in flight is due to end (workflow time when it was scheduled + its length). */
  let repeatEndsAtMs: number | undefined;
  const requestAbort = (reason?: string) => {
    aborting = true;
    progress.aborting = true;
    log.info('abort requested: finishing the current repeat, then tearing down', { reason });
  };
  setHandler(abortSignal, requestAbort);
  setHandler(
    abortUpdate,
    (reason: string) => {
      requestAbort(reason);
      if (progress.phase === 'repeat' && progress.repeat && repeatEndsAtMs !== undefined) {
        return `the current repeat (${progress.configuration} ${progress.repeat.k}/${progress.repeat.n}) finishes at ${new Date(repeatEndsAtMs).toISOString()}, then teardown and the report`;
      }
      if (progress.phase === 'cool-down') return 'the cool-down ends now; then teardown and the report';
      if (progress.step === 'lease') return 'the campaign stops waiting for the lease: nothing was provisioned or measured; the report follows';
      if (['sustained', 'ladder', 'ceiling', 'denominator'].includes(progress.step)) return `the current step (${progress.step}) finishes, then teardown and the report`;
      return `no repeat will start: the steps before the series (now ${progress.step}) finish, then teardown and the report`;
    },
    {
      validator: (_reason: string) => {
        if (aborting) throw new Error('already aborting: the current repeat finishes, then teardown');
        if (['teardown', 'clean-check-after', 'report', 'done'].includes(progress.step)) throw new Error(`nothing to abort: the campaign is past measuring (step ${progress.step})`);
      },
    },
  );
  // The handlers above are in place before the first await: a query or an abort right after the start
  // is answered. A bad spec fails here, before any step touches a machine, naming each field.
  const spec = await resolvedSpec(input);
  // A watchdog shorter than the plan would tear a healthy series down halfway: refused before anything runs.
  deprecatePatch(PLAN_PATCH);
  const planOptions: PlanOptions = spec.target === 'aws' && !patched(AWS_PLAN_PATCH) ? { legacy: true } : {};
  const shortWatchdog = watchdogProblem(spec, planOptions);
  if (shortWatchdog) throw ApplicationFailure.nonRetryable(shortWatchdog, 'InvalidSpec');
  // Started without the client's check (a schedule, `temporal workflow start`): the same refusal here.
  deprecatePatch(HISTORY_BUDGET_PATCH);
  const tooLong = historyProblem(spec);
  if (tooLong) throw ApplicationFailure.nonRetryable(tooLong, 'InvalidSpec');
  progress.secondsLeft = measuringSecondsLeft(spec, 0);
  // Upserting a search attribute the cluster lacks fails every workflow task, so they are set only
  // once openCampaign has seen them registered (otherwise it logs the commands that register them).
  // Each attribute on its own (SEARCH_ATTRIBUTES_PATCH): a cluster registered before one was added
  // (RigRegressed) keeps the others.
  let missingAttributes: readonly string[] | undefined;
  const setSearchAttributes = (pairs: SearchAttributeUpdatePair[]) => {
    if (!missingAttributes) return;
    const known = pairs.filter((p) => !missingAttributes!.includes(p.key.name));
    if (known.length) upsertSearchAttributes(known);
  };

  const watchdogId = `${workflowId}.watchdog`;
  /** The deadline this campaign last gave its watchdog (undefined until it is armed). */
  let watchdogUntilMs: number | undefined;
  /**
   * The watchdog's deadline follows the plan: when what is left from this step (its allowance, lib/
   * protocol/plan.ts) plus the margin ends after the deadline (a step ran over), it is moved forward.
   * On plan, nothing is sent.
   */
  async function followPlan(from: PlanStep): Promise<void> {
    if (watchdogUntilMs === undefined) return;
    const left = totalMinutes(planFrom(spec, from, countedRepeats(repeats).length, planOptions));
    const wantMs = Date.now() + (left + marginMinutes(left)) * 60_000;
    if (wantMs <= watchdogUntilMs) return;
    watchdogUntilMs = wantMs;
    try {
      await getExternalWorkflowHandle(watchdogId).signal(holdUntilSignal, wantMs);
      log.info('the plan ran over: the watchdog holds the rig longer', { from, until: new Date(wantMs).toISOString() });
    } catch (err) {
      // Closed: it has fired (the rig is going or gone); the next step that needs the rig fails and says so.
      log.warn('the watchdog could not be moved: it has closed', { error: failureReason(err) });
    }
  }
  // An AWS rig (today's plan) waits for RDS and calibrates on its load node in steps of their own; a
  // local rig calibrates before the watchdog is armed, where followPlan has nothing to move.
  const awsSteps = spec.target === 'aws' && !planOptions.legacy;
  const planStepOf: Partial<Record<StepName, PlanStep>> = {
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

  /** Runs one step and records its outcome; `within` a series step, progress keeps showing the series. */
  async function step<T>(name: StepName, fn: () => Promise<T>, summarize: (r: T) => string, within = false): Promise<T> {
    const planStep = planStepOf[name];
    if (planStep) await followPlan(planStep);
    if (!within) {
      progress.step = name;
      if (!['sustained', 'ladder', 'ceiling', 'denominator'].includes(name)) {
        progress.configuration = undefined;
        progress.repeat = undefined;
        progress.phase = undefined;
      }
      setSearchAttributes([{ key: RigStep, value: name }]);
    }
    const startedAt = new Date().toISOString();
    try {
      const r = await fn();
      steps.push({ step: name, status: 'ok', startedAt, endedAt: new Date().toISOString(), summary: summarize(r) });
      return r;
    } catch (err) {
      const status = isCancellation(err) || err instanceof StopBeforeMeasuring ? 'cancelled' : isRefusal(err) ? 'refused' : 'failed';
      steps.push({ step: name, status, startedAt, endedAt: new Date().toISOString(), summary: failureReason(err) });
      throw err;
    }
  }

  const ctl = control({});
  /** The host's lease is asked through a failover of the cluster (workflows/temporal-calls.ts), for up to 10 minutes. */
  const leaseActs = control(temporalCallOptions('10 minutes'));
  // A step no worker takes within workerWaitSeconds fails, naming the queue (workflows/failures.ts).
  const workerWait = `${spec.workerWaitSeconds} seconds`;
  deprecatePatch(HOST_PATCH);
  /** The claimed host's own queue (the shared queue until then: a campaign whose claim failed reports from any worker). */
  let hostQueue = CONTROL_QUEUE;
  /** Activities that act on the claimed host's disk and processes. */
  const machine = (opts: Partial<ActivityOptions>) =>
    namingQueue(
      proxyActivities<typeof activities>({ taskQueue: hostQueue, startToCloseTimeout: '10 minutes', scheduleToStartTimeout: workerWait, retry, ...opts }),
      hostQueue,
      workerWait,
    );
  /** The host whose measuring lease this campaign asked for (it gives it back at the end). */
  let leaseHost: string | undefined;
  let leaseGranted = false;
  setHandler(leaseGrantedSignal, () => {
    leaseGranted = true;
  });
  let failure: unknown;
  let provisioned = false;
  try {
    // Pinned (the spec's host): the claim is taken from that host's own queue, so only its worker answers.
    const claimed = spec.host
      ? await namingQueue(
          proxyActivities<typeof activities>({ taskQueue: hostQueueOf(spec.host), startToCloseTimeout: '1 minute', scheduleToStartTimeout: workerWait, retry }),
          hostQueueOf(spec.host),
          workerWait,
        ).claimHost()
      : await ctl.claimHost();
    hostQueue = claimed.hostQueue;
    const host = claimed.host;
    progress.host = host;
    log.info('host claimed: its machine-bound steps go to its own queue', { host, queue: hostQueue });
    const opened = await machine({}).openCampaign({ campaignId, spec });
    missingAttributes = opened.missingSearchAttributes;
    deprecatePatch(SEARCH_ATTRIBUTES_PATCH);
    setSearchAttributes([
      { key: RigCampaign, value: campaignId },
      { key: RigTarget, value: spec.target },
      { key: RigStep, value: 'start' },
      { key: RigStatus, value: 'running' },
    ]);
    deprecatePatch(LEASE_PATCH);
    leaseHost = host;
    // Before calibration: what the instrument and the repeats measure is this campaign's load alone.
    await step(
      'lease',
      async () => {
        const askedMs = Date.now();
        const now = await leaseActs.requestLease({ host, workflowId, ...(spec.watchdogCheckSeconds ? { holderCheckMs: spec.watchdogCheckSeconds * 1000 } : {}) });
        if (!leaseGranted) {
          progress.waitingFor = `the measuring lease of host ${host}, held by ${now.heldBy ?? 'another campaign'}${now.since ? ` since ${now.since}` : ''}`;
          log.info(`waiting for ${progress.waitingFor}`);
        }
        await condition(() => leaseGranted || aborting);
        progress.waitingFor = undefined;
        if (!leaseGranted) throw new StopBeforeMeasuring('aborted while waiting for the lease');
        return { waitedMs: Date.now() - askedMs, heldBy: now.heldBy };
      },
      (r) => (r.heldBy ? `host ${host}: granted after ${Math.round(r.waitedMs / 60_000)} min waiting for ${r.heldBy}` : `host ${host}: granted at once`),
    );
    // Fine enough is relative to what will be judged: the instrument's floor against the smallest p99 limit.
    const limits = spec.sustained?.configurations.map((c) => c.p99LimitMs) ?? [];
    const p99LimitMs = limits.length ? Math.min(...limits) : undefined;
    // The instrument is calibrated on the host that will send the load: this one for a local rig; an
    // AWS rig's load node, which exists only once provisioned (below, on its data-plane queue).
    const calibrateOnRig = calibratesOnRigNode(spec.target);
    if (spec.calibrate && !calibrateOnRig) {
      const calibrateActs = machine({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '30 seconds' });
      await step('calibrate', () => calibrateActs.calibrateInstrument({ campaignId, p99LimitMs }), (r) => r.summary);
    }
    // An existing deployment (target "existing") is not the rig's: nothing to find clean, nothing for a
    // watchdog to tear down. Only campaigns on that target branch here, and none was recorded before
    // it existed, so local and aws histories issue the same commands as before and need no patch.
    const existing = spec.target === 'existing';
    if (existing) steps.push(skipped('clean-check', EXISTING_SKIPPED['clean-check']));
    else await step('clean-check', () => machine({}).cleanCheck({ campaignId, target: spec.target, phase: 'before' }), (r) => r.summary);

    // The watchdog starts before anything is made: a crash halfway through provisioning is covered.
    const deadlineMs = Date.now() + spec.watchdogMinutes * 60_000;
    if (existing) steps.push(skipped('watchdog', EXISTING_SKIPPED.watchdog));
    else {
      await step(
        'watchdog',
        () =>
          startChild(rigWatchdog, {
            workflowId: watchdogId,
            args: [
              {
                campaignId,
                target: spec.target,
                deadlineMs,
                hostQueue,
                ...(spec.watchdogCheckSeconds ? { checkMs: spec.watchdogCheckSeconds * 1000 } : {}),
                // Read by a watchdog that tears down from any worker (its own patch): how long its host's queue is given, and an AWS rig's region.
                hostWaitSeconds: spec.workerWaitSeconds,
                ...(spec.aws ? { region: spec.aws.region } : {}),
              },
            ],
            parentClosePolicy: ParentClosePolicy.ABANDON,
            cancellationType: ChildWorkflowCancellationType.ABANDON,
          }),
        () => `armed until ${new Date(deadlineMs).toISOString()}`,
      );
      watchdogUntilMs = deadlineMs;
    }

    provisioned = true; // from here on, teardown runs whatever happens (it is idempotent)
    const provisionActs = machine({ startToCloseTimeout: '15 minutes', heartbeatTimeout: '1 minute' });
    const databaseApart = spec.target === 'aws';
    if (databaseApart) deprecatePatch(DATABASE_APART_PATCH);
    rig = await step(
      'provision',
      () => provisionActs.provisionRig({ campaignId, spec, ...(databaseApart ? { databaseApart } : {}) }),
      (r) => (databaseApart ? `${r.hardware}; made and launched, the database waited for apart` : `${r.hardware}; service ${r.serviceUrl}; database ${r.database}`),
    );
    if (databaseApart) {
      // The spec's bound is the whole step's: the activity counts it from its first scheduling and fails
      // non-retryably past it (or at a status RDS will not leave by itself). Its timeouts are a little
      // longer, so an attempt ends by its own bound before Temporal ends it; schedule-to-close caps all
      // attempts together (a retry after a dead worker, seen at the heartbeat timeout, gets what is left).
      const waitMinutes = spec.aws?.database.availableWaitMinutes ?? 60;
      const waitTimeout = `${waitMinutes + 5} minutes` as const;
      const waitActs = machine({ startToCloseTimeout: waitTimeout, scheduleToCloseTimeout: waitTimeout, heartbeatTimeout: '2 minutes', retry: { ...retry, maximumAttempts: 3 } });
      rig = await step('database', () => waitActs.awaitRigDatabase({ campaignId, spec }), (r) => `${r.hardware}; service ${r.serviceUrl}; database ${r.database}`);
    }
    let theRig = rig;

    const on = (taskQueue: string, opts: Partial<ActivityOptions>) =>
      namingQueue(
        proxyActivities<typeof activities>({ taskQueue, startToCloseTimeout: '10 minutes', scheduleToStartTimeout: workerWait, retry, ...opts }),
        taskQueue,
        workerWait,
      );
    const data = (opts: Partial<ActivityOptions>) => on(theRig.dataQueue, opts);
    /** No worker on the rig's hosts took `call`: the failure carries their consoles (NODE_CONSOLE_PATCH). */
    const seeingNodes = <T>(call: () => Promise<T>) => () =>
      call().catch(async (err: unknown) => {
        if (!(err instanceof ApplicationFailure && err.type === 'NoWorker')) throw err;
        deprecatePatch(NODE_CONSOLE_PATCH);
        const { tail } = await machine({ startToCloseTimeout: '2 minutes' }).nodeConsoleTail({ campaignId, target: spec.target });
        if (!tail) throw err;
        // The queue is the node's own: its worker is started by its bootstrap, not by a person.
        const which = err.message.replace(/: start one on the rig's host .*$/s, '');
        throw ApplicationFailure.nonRetryable(`${which}: the rig's nodes did not start their workers (their bootstrap runs at first boot). The nodes' serial consoles (EC2 GetConsoleOutput), last lines:\n${tail}`, 'NoWorker');
      });
    // A rig made whole on its own hosts (AWS): the database from the load node, the service on the app node.
    const appQueue = theRig.appQueue;
    if (appQueue) {
      await step('prepare', seeingNodes(() => data({ startToCloseTimeout: '15 minutes', heartbeatTimeout: '1 minute' }).prepareRig({ campaignId, rig: theRig })), (r) => r.summary);
      // The same object as before issue 14 for the reference service without env: only the activity's input, never a command, changes.
      const service = serviceLaunch(spec.service);
      const started = await step('service', seeingNodes(() => on(appQueue, { startToCloseTimeout: '5 minutes' }).startRigService({ campaignId, rig: theRig, service })), (r) => r.summary);
      theRig = { ...theRig, serviceUrl: started.serviceUrl };
      rig = theRig;
    }
    if (spec.calibrate && calibrateOnRig) {
      await step('calibrate', () => data({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '30 seconds' }).calibrateInstrument({ campaignId, p99LimitMs, rig: theRig }), (r) => r.summary);
    }
    await step('bring-up', () => data({ startToCloseTimeout: '5 minutes' }).bringUp({ campaignId, rig: theRig, customers: spec.seed.customers }), (r) => r.summary);
    // The database side calibrated on the rig's own cluster (issue 31 item 6): a failed case marks the page, never stops the campaign.
    if (spec.calibrate && spec.target === 'local' && patched('database-calibration')) {
      await step('calibrate-database', () => data({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '1 minute' }).calibrateDatabase({ campaignId, rig: theRig }), (r) => r.summary);
    }
    const seedActs = () => data({ startToCloseTimeout: `${spec.seed.settleTimeoutSeconds + 3600 + Math.ceil(spec.seed.historyRows / 5000)} seconds`, heartbeatTimeout: '30 seconds' });
    await step(
      'seed',
      () =>
        seedActs().seedHistory({
          campaignId,
          rig: theRig,
          rows: spec.seed.historyRows,
          settleTimeoutSeconds: spec.seed.settleTimeoutSeconds,
          rebuildRollup: usesRollup(spec.service),
          // Into an existing deployment: refuse when the fixtures' partition holds rows the rig did not write.
          ...(spec.target === 'existing' ? { foreignRows: spec.seed.allowForeignRows ? ('allow' as const) : ('refuse' as const) } : {}),
        }),
      (r) => r.summary,
    );

    // One repeat = one heartbeating activity. A dead worker is noticed at the heartbeat timeout and the
    // repeat runs again (a fresh run tag); the interrupted attempt is recorded by the next attempt.
    const repeatActs = (seconds: number) =>
      data({
        // On aws the repeat also waits (bounded) for CloudWatch to publish its window (lib/protocol/cloud-evidence.ts).
        startToCloseTimeout: `${seconds + 300 + (theRig.target === 'aws' ? CLOUD_EVIDENCE_BUDGET_S : 0)} seconds`,
        heartbeatTimeout: '30 seconds',
        retry: { initialInterval: '1 second', maximumAttempts: 4, nonRetryableErrorTypes: ['InvalidSpec'] },
        // A cancelled repeat stops its load and records itself as interrupted before teardown starts.
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      });
    // Before a configuration's first repeat (a ladder's first rung): its own rate and batch against the
    // target, unmeasured, then a cool-down. A warm-up that shows a broken target refuses (WarmupRefusal)
    // and stops the campaign before any measured repeat.
    const warmUp = async (configuration: ConfigurationSpec, seconds: number, maxInFlight: number, cooldownSeconds: number) => {
      if (seconds <= 0) return;
      deprecatePatch(WARMUP_PATCH);
      progress.configuration = configuration.name;
      progress.repeat = undefined;
      progress.phase = 'warm-up';
      const acts = data({
        startToCloseTimeout: `${seconds + 300} seconds`,
        heartbeatTimeout: '30 seconds',
        retry: { initialInterval: '1 second', maximumAttempts: 3 },
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      });
      await step('warm-up', () => acts.warmUp({ campaignId, rig: theRig, configuration, seconds, maxInFlight }), (r) => r.summary, true);
      if (cooldownSeconds > 0 && !aborting) {
        progress.phase = 'cool-down';
        await condition(() => aborting, cooldownSeconds * 1000);
      }
    };
    // The app node's host samples, after every repeat. A failure is listed as a failed 'app-node' step
    // and the campaign goes on: the measurement is the load node's, and the page shows which repeats
    // have no app node samples.
    const keepAppNode = async () => {
      if (!appQueue) return;
      deprecatePatch(APP_NODE_PATCH);
      const startedAt = new Date().toISOString();
      try {
        await on(appQueue, { startToCloseTimeout: '5 minutes', retry: { initialInterval: '5 seconds', maximumAttempts: 3 } }).keepAppNodeEvidence({ campaignId, rig: theRig });
      } catch (err) {
        if (isCancellation(err)) throw err;
        steps.push({ step: 'app-node', status: 'failed', startedAt, endedAt: new Date().toISOString(), summary: failureReason(err) });
      }
    };
    const record = async (out: { summary: RepeatSummary; interrupted: InterruptedAttempt[] }) => {
      repeats.push(out.summary);
      interrupted.push(...out.interrupted);
      progress.lastVerdicts = [...progress.lastVerdicts, pick(out.summary)].slice(-5);
      progress.secondsLeft = measuringSecondsLeft(spec, countedRepeats(repeats).length);
      await keepAppNode();
    };

    // The measured series: sustained configurations or a ladder's rungs, each repeat (rung) in the order
    // lib/protocol/variants.ts gives, the rig taking a variant's settings when it changes. A ladder
    // without variants issues the commands it always did (warm-up at its first rung, a cool-down after
    // every rung), so that histories from before ladders took variants replay unchanged.
    const series = measuringSeries(spec);
    if (series) {
      const ladder = series.kind === 'rung';
      const judgeValidity = !ladder && patched(INVALID_RERUN_PATCH);
      const m = ladder
        ? { step: 'ladder' as const, seconds: spec.ladder!.rungSeconds, cooldownSeconds: spec.ladder!.cooldownSeconds, cooldownAfterLast: true, maxInFlight: spec.ladder!.maxInFlight, warmupSeconds: spec.ladder!.warmupSeconds, probe: { rate: 0, p99BudgetMs: 500 }, driftLimit: 1.5 }
        : { step: 'sustained' as const, seconds: spec.sustained!.repeatSeconds, cooldownSeconds: spec.sustained!.cooldownSeconds, cooldownAfterLast: false, maxInFlight: spec.sustained!.maxInFlight, warmupSeconds: spec.sustained!.warmupSeconds, probe: spec.sustained!.probe, driftLimit: spec.sustained!.driftLimit };
      await step(
        m.step,
        async () => {
          const plan = measuringOrder(spec);
          let current: string | undefined;
          let changes = 0;
          for (let i = 0; i < plan.length && !aborting; i++) {
            const { configuration: measured, k } = plan[i];
            const { base: _base, variant, ...c } = measured;
            if (variant !== undefined && variant !== current) {
              const settings = variantSettings(spec, variant);
              const seq = ++changes;
              progress.configuration = c.name;
              progress.phase = 'variant';
              const applied = await step('variant', () => data({ startToCloseTimeout: '15 minutes', heartbeatTimeout: '1 minute' }).applyVariant({ campaignId, rig: theRig, variant, seq, settings }), (r) => r.summary, true);
              // A restarted service may listen on another port: the repeats go where it is now.
              theRig = { ...theRig, serviceUrl: applied.serviceUrl };
              rig = theRig;
              // blocks with fresh: a variant after the first writes its own history into an emptied table.
              if (spec.variants!.fresh && current !== undefined && spec.seed.historyRows > 0) {
                await step('seed', () => seedActs().seedHistory({ campaignId, rig: theRig, rows: spec.seed.historyRows, settleTimeoutSeconds: spec.seed.settleTimeoutSeconds, rebuildRollup: usesRollup(settings.service), fresh: variant }), (r) => r.summary, true);
              }
              current = variant;
            }
            if (warmsUpBefore(plan, i, series.kind)) {
              // A later warm-up of the same configuration (after a change of variant) keeps its own folder.
              const first = plan.findIndex((u) => u.configuration.name === c.name) === i;
              await warmUp(first ? c : { ...c, name: `${c.name}.k${k}` }, m.warmupSeconds, m.maxInFlight, m.cooldownSeconds);
              if (aborting) break;
            }
            progress.configuration = c.name;
            progress.repeat = { k, n: series.repeats };
            progress.phase = 'repeat';
            await followPlan('measuring');
            repeatEndsAtMs = Date.now() + m.seconds * 1000;
            const repeatInput = {
              campaignId,
              rig: theRig,
              kind: series.kind,
              configuration: c,
              index: k,
              seconds: m.seconds,
              probe: m.probe,
              driftLimit: m.driftLimit,
              maxInFlight: m.maxInFlight,
              ...(judgeValidity ? { validity: { stealBoundPct: INVALID_STEAL_PCT } } : {}),
            };
            const out = await repeatActs(m.seconds).runRepeat(repeatInput);
            await record(out);
            // Invalid (the instrument's failure): after a cool-down, the same repeat once more, in
            // folders of its own; the first attempt stays in the evidence and on the page.
            if (judgeValidity && out.summary.invalid && mayRerun(repeats, c.name) && !aborting) {
              if (m.cooldownSeconds > 0) {
                progress.phase = 'cool-down';
                await condition(() => aborting, m.cooldownSeconds * 1000);
              }
              if (!aborting) {
                progress.phase = 'repeat';
                // The re-run is time the plan did not count (the invalid repeat is not counted): the watchdog follows.
                await followPlan('measuring');
                repeatEndsAtMs = Date.now() + m.seconds * 1000;
                await record(await repeatActs(m.seconds).runRepeat({ ...repeatInput, attemptsBefore: out.summary.attempt }));
              }
            }
            // Cool-down between repeats: a durable timer, cut short by an abort.
            if ((m.cooldownAfterLast || i < plan.length - 1) && m.cooldownSeconds > 0) {
              progress.phase = 'cool-down';
              await condition(() => aborting, m.cooldownSeconds * 1000);
            }
          }
          return outcomes(spec, repeats);
        },
        (r) => r.map((c) => `${c.name} ${c.passed}/${c.total}`).join(', '),
      );
    }

    if (spec.ceiling && !aborting) {
      const c = spec.ceiling;
      progress.configuration = 'ceiling';
      progress.repeat = undefined;
      progress.phase = undefined;
      ceiling = await step(
        'ceiling',
        async () => {
          const out = await repeatActs(c.seconds).runRepeat({
            campaignId,
            rig: theRig,
            kind: 'ceiling',
            configuration: { name: 'ceiling', eventsPerSecond: 1, batch: c.batch, p99LimitMs: Number.MAX_SAFE_INTEGER },
            index: 1,
            seconds: c.seconds,
            probe: { rate: 0, p99BudgetMs: 500 },
            driftLimit: 1.5,
            maxInFlight: c.workers,
            closedLoopWorkers: c.workers,
          });
          interrupted.push(...out.interrupted);
          await keepAppNode();
          return out.summary;
        },
        (r) => `${Math.round(r.deliveredRate)} ev/s closed loop (${c.workers} workers, batch ${c.batch}); p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`,
      );
    }
    if (spec.denominator && !aborting) {
      const d = spec.denominator;
      progress.configuration = 'denominator';
      progress.secondsLeft = d.seconds * DENOMINATOR_LEGS;
      denominator = await step(
        'denominator',
        () =>
          data({ startToCloseTimeout: `${d.seconds * DENOMINATOR_LEGS + 600} seconds`, heartbeatTimeout: '1 minute' }).runDenominator({
            campaignId,
            rig: theRig,
            batch: d.batch,
            clients: d.clients,
            seconds: d.seconds,
            hardcountEventsPerSecond: ceiling?.deliveredRate,
          }),
        (r) => r.legs.map((l) => `${l.leg} ${Math.round(l.rowsPerSecond)} ${l.leg === 'owner-commit' ? 'commits' : 'rows'}/s${l.rowsVerified ? '' : ' (rows NOT verified)'}`).join('; '),
      );
    }
  } catch (err) {
    // Aborted before anything was measured (waiting for the lease): an abort, not a failure.
    if (!(err instanceof StopBeforeMeasuring)) failure = err;
  }

  // Teardown is the compensation of provisioning: it runs after success, failure and cancellation,
  // in a scope that a cancellation cannot interrupt.
  const cancelled = failure !== undefined && isCancellation(failure);
  // Without calibration nothing measured is a verdict: such a campaign is never "held".
  const status: CampaignStatus = cancelled
    ? 'cancelled'
    : failure !== undefined
      ? 'failed'
      : aborting
        ? 'aborted'
        : campaignVerdict(outcomes(spec, repeats), spec.calibrate);
  /**
   * After a clean teardown. A watchdog that has already closed (it fired first: the rig was gone before
   * the campaign's own teardown ran) cannot be disarmed, and need not be: the clean-check just said so.
   */
  async function disarmWatchdog(): Promise<void> {
    try {
      await getExternalWorkflowHandle(watchdogId).signal(disarmSignal);
    } catch (err) {
      steps.push(skipped('watchdog', `already closed, nothing to disarm (${failureReason(err)}); the clean-check after teardown found the target clean`));
    }
  }

  const result = await CancellationScope.nonCancellable(async (): Promise<CampaignResult> => {
    progress.secondsLeft = 0; // nothing more is measured (the line no longer shows the denominator's time)
    let rigState: CampaignResult['rig'] = provisioned ? 'destroyed' : 'not-provisioned';
    let cleanAfter: string | undefined;
    let dirtyAfter = false;
    const keep = spec.end === 'keep' || (spec.end === 'keep-on-failure' && (status === 'failed' || status === 'cancelled'));
    if (provisioned && spec.target === 'existing') {
      // The deployment was there before the campaign and stays (no watchdog to disarm: none was started).
      rigState = 'untouched';
      steps.push(skipped('teardown', EXISTING_SKIPPED.teardown));
    } else if (provisioned && keep) {
      rigState = 'kept';
      steps.push(skipped('teardown', `kept (end: ${spec.end}); the watchdog tears it down at its deadline unless extended`));
    } else if (provisioned) {
      deprecatePatch(TEARDOWN_PATCH);
      deprecatePatch(ANYWHERE_PATCH);
      const teardownInput = { campaignId, target: spec.target, by: 'campaign' as const, ...(spec.aws ? { region: spec.aws.region } : {}) };
      /** While the uncapped retries run: searchable (RigStatus), in the progress line, and the watchdog's. */
      const failing = ({ reason, queue }: { reason: string; queue: string }) => {
        progress.waitingFor = `the teardown, failing (${reason}): retrying on ${queue} without a cap`;
        setSearchAttributes([{ key: RigStatus, value: 'teardown-failing' }]);
      };
      const tearDown = async () => {
        let wasFailing = false;
        const r = await teardownFromAnywhere(teardownInput, { hostQueue, hostWait: workerWait }, (f) => {
          wasFailing = true;
          failing(f);
        });
        if (wasFailing) {
          progress.waitingFor = undefined;
          setSearchAttributes([{ key: RigStatus, value: 'running' }]);
        }
        return r;
      };
      // An AWS rig is looked for by tag from any worker when the claimed host's does not answer.
      const cleanCheckAfter = async () => {
        const input = { campaignId, target: spec.target, phase: 'after' as const };
        if (!tearsDownFromAnyHost(spec.target)) return machine({}).cleanCheck(input);
        try {
          return await machine({}).cleanCheck(input);
        } catch (err) {
          log.warn(`the clean-check after teardown did not run on ${hostQueue} (${failureReason(err)}): any worker looks by tag`);
          return control({}).cleanCheck(input);
        }
      };
      let tornDown = false;
      try {
        await step('teardown', tearDown, (r) => r.summary);
        tornDown = true;
        const after = await step('clean-check-after', cleanCheckAfter, (r) => r.summary);
        cleanAfter = after.summary;
        dirtyAfter = !after.clean;
        // Left dirty, the watchdog stays armed: it tries again at its deadline.
        if (after.clean) await disarmWatchdog();
      } catch (err) {
        rigState = 'teardown-failed';
        cleanAfter ??= `not checked: ${failureReason(err)}`;
        // Given up (or the clean-check after it could not run): the ledger stays open, and the watchdog
        // (its own retries, perhaps on another worker) is told to tear down now, not at its deadline.
        if (!tornDown) {
          const reason = `the campaign's teardown gave up: ${failureReason(err)}`;
          try {
            await getExternalWorkflowHandle(watchdogId).signal(fireSignal, reason);
            steps.push(skipped('watchdog', `told to fire now (${reason})`));
          } catch (e) {
            steps.push(skipped('watchdog', `could not be told to fire (${failureReason(e)}): rig check --target local lists what is left`));
          }
        }
      }
    }
    // The host is free for the next campaign once this one's rig is gone (its clean-check would see it).
    if (leaseHost !== undefined) {
      try {
        await getExternalWorkflowHandle(leaseWorkflowId(leaseHost)).signal(leaseReleaseSignal, workflowId);
      } catch (err) {
        log.warn('the lease could not be given back: its workflow has closed', { error: failureReason(err) });
      }
    }
    // Leftovers after teardown outrank whatever was measured (a failure or a cancellation keeps its own
    // status, and its error names them too).
    const dirty = dirtyAfter ? `the clean-check after teardown found leftovers: ${cleanAfter}` : undefined;
    const res: CampaignResult = {
      campaignId,
      name: spec.name,
      target: spec.target,
      status: rigState === 'teardown-failed' ? 'failed' : dirty && status !== 'failed' && status !== 'cancelled' ? 'dirty' : status,
      error:
        [failure !== undefined ? failureReason(failure) : rigState === 'teardown-failed' ? `teardown failed: ${cleanAfter}` : undefined, dirty].filter(Boolean).join('; ') ||
        undefined,
      steps,
      repeats,
      interrupted,
      configurations: outcomes(spec, repeats),
      ceiling,
      denominator,
      rig: rigState,
      cleanAfter,
      resultsDir: '',
    };
    try {
      const fin = await step('report', () => machine({}).finishCampaign({ campaignId, result: res, ...(spec.baseline ? { baseline: spec.baseline } : {}) }), (r) =>
        `${r.reportPath ?? 'no report'}${r.baselineId ? `; against ${r.baselineId}: ${r.regressed ? 'REGRESSED' : 'no regression'}` : ''}`,
      );
      res.resultsDir = fin.resultsDir;
      res.reportPath = fin.reportPath;
      // Searchable: a weekly schedule's runs that regressed (`RigRegressed = 'yes'`), and `rig schedule list`.
      if (fin.regressed !== undefined) {
        deprecatePatch(REGRESSED_PATCH);
        setSearchAttributes([{ key: RigRegressed, value: fin.regressed ? 'yes' : 'no' }]);
      }
    } catch (err) {
      // The evidence is on disk already (written before it is summarised); only the page is missing.
      res.status = 'failed';
      res.error = `${res.error ? res.error + '; ' : ''}report failed: ${failureReason(err)}`;
    }
    progress.step = 'done';
    progress.status = res.status;
    setSearchAttributes([
      { key: RigStep, value: 'done' },
      // Searchable: `rig campaign list` and RigStatus = 'teardown-failed' find a rig left behind.
      { key: RigStatus, value: rigState === 'teardown-failed' ? 'teardown-failed' : res.status },
    ]);
    return res;
  });

  if (cancelled) throw failure;
  if (result.status === 'failed') {
    throw ApplicationFailure.nonRetryable(`campaign ${campaignId} failed: ${result.error}`, 'CampaignFailed', result);
  }
  return result;
}

/**
 * The spec with its defaults, resolved by an activity whose result the history keeps, so that a
 * default changed in code later does not change a campaign in flight.
 */
async function resolvedSpec(input: CampaignSpecInput): Promise<CampaignSpec> {
  deprecatePatch(SPEC_ACTIVITY_PATCH);
  const { resolveSpec } = proxyActivities<typeof activities>({ taskQueue: CONTROL_QUEUE, startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } });
  try {
    return await resolveSpec(input);
  } catch (err) {
    // The workflow fails naming each field: InvalidSpec, with the message of the activity's refusal.
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === 'InvalidSpec') throw ApplicationFailure.nonRetryable(cause.message, 'InvalidSpec', ...(cause.details ?? []));
    throw err;
  }
}

/** Thrown to leave the steps before the series when an abort arrives while the campaign waits for its lease. */
class StopBeforeMeasuring extends Error {}

function skipped(step: StepName, summary: string): StepOutcome {
  const now = new Date().toISOString();
  return { step, status: 'skipped', startedAt: now, endedAt: now, summary };
}

function pick(s: RepeatSummary): CampaignProgress['lastVerdicts'][number] {
  return { configuration: s.configuration, index: s.index, attempt: s.attempt, passed: s.passed, p99Ms: s.p99Ms, reasons: s.reasons };
}

/** N/M per configuration, in spec order; held only when every repeat passed (invalid ones aside: lib/protocol/configuration-state.ts). */
export function outcomes(spec: CampaignSpec, repeats: RepeatSummary[]): ConfigurationOutcome[] {
  const total = measuringSeries(spec)?.repeats ?? 0;
  const configs = measuredConfigurations(spec).map((c) => ({ name: c.name, eventsPerSecond: c.eventsPerSecond, batch: c.batch, total }));
  return configs.map((c) => {
    const { ran: _ran, ...counts } = configurationCounts(repeats, c.name, c.total);
    return { ...c, ...counts };
  });
}

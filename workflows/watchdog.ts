// rigWatchdog: a separate workflow, started at provisioning with parent-close policy ABANDON, so it
// outlives a campaign that crashed, was terminated or lost its worker. At the deadline it tears down
// everything that carries the campaign's id, unless the campaign disarmed it after a clean teardown.
// A kept rig (end: keep) stays under its watchdog: billing never runs unattended.
// Signals: disarm (the rig is gone), extend (+minutes, an operator), hold-until (the campaign, at each
// step: the deadline follows the plan), fire (tear down now: the campaign's own teardown gave up).
// Whenever the deadline moves, the rig's expiry tag follows it (retagRigExpiry, on the teardown's
// queue), so `rig check --reap` never takes a rig its watchdog still guards; a re-tag that fails is
// logged and never stops the watchdog (the deadline here, not the tag, is what tears the rig down).
// Its history is bounded: each 2-minute check adds about 11 events, so a kept rig would reach the
// server's 51,200-event limit in about 6 days and be terminated, with nothing left to tear it down.
// Two things bound it: once the campaign has closed by its own end (completed, failed, cancelled:
// its teardown ran, or it kept the rig on purpose) there is nothing more to learn from it, so the
// checks stop and only the deadline and messages add events; and it continues as new when the
// server suggests it (or at input.maxHistoryEvents), carrying its deadline, the deadline its tag
// holds and whether the campaign has closed. The next run is the same watchdog under the same id.
// Its teardown does not depend on the host that made the rig (workflows/teardown.ts): the host's queue
// gets hostWaitSeconds, then an AWS rig is torn down by any worker, retried without a cap.
import { allHandlersFinished, condition, continueAsNew, log, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type * as activities from '../activities';
import type { TargetName } from '../lib/protocol/spec';
import { temporalCallOptions } from './temporal-calls';
import { teardownFromAnywhere } from './teardown';
import { disarmSignal, extendSignal, extendUpdate, fireSignal, holdUntilSignal, watchdogQuery, type WatchdogState } from './messages';

/** On the queue of the host that made the rig (its campaign's claimed host); older inputs: the watchdog's own queue. */
const teardownOn = (taskQueue: string | undefined) =>
  proxyActivities<typeof activities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: '15 minutes',
    retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20 },
  }).teardownRig;

/**
 * Same queue as teardown (the host that made the rig); a few quick attempts, then give up and warn.
 * Each waits at most `hostWait` for that host's worker: a host gone for good must not hold a re-tag
 * (and with it every continue-as-new) for ever.
 */
const retagOn = (taskQueue: string | undefined, hostWait: string | undefined) =>
  proxyActivities<typeof activities>({
    ...(taskQueue ? { taskQueue } : {}),
    ...(hostWait ? { scheduleToStartTimeout: hostWait } : {}),
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 5 },
  }).retagRigExpiry;

/** Read-only: how the campaign's workflow stands (activities/campaign-state.ts), through a failover (workflows/temporal-calls.ts). */
const { campaignRunState } = proxyActivities<typeof activities>(temporalCallOptions('5 minutes'));

/** patched() id: the watchdog looks at its campaign on a durable timer (histories before it did not). */
const CHECKS_CAMPAIGN_PATCH = 'watchdog-checks-campaign';
/** How often the watchdog looks: a terminated campaign's rig is torn down within this, not at the deadline. */
export const CAMPAIGN_CHECK_MS = 2 * 60_000;
/** patched() id: a moved deadline re-tags the rig's expiry (histories before it did not). */
const RETAGS_EXPIRY_PATCH = 'watchdog-retags-expiry';
/**
 * patched() id: the watchdog bounds its history (stops checking a campaign closed by its own end,
 * continues as new). Histories before it did neither, and replay without: a long one whose server
 * once suggested continue-as-new must not now continue there.
 */
const BOUNDED_HISTORY_PATCH = 'watchdog-bounded-history';
/**
 * patched() id: the teardown waits hostWaitSeconds on the host's queue, then retries without a cap (an
 * AWS rig on the shared queue, by any worker). Histories before it waited on the host's queue alone.
 */
const ANYWHERE_PATCH = 'watchdog-teardown-from-any-worker';
/**
 * Closed without running its own end: nothing tore the rig down and nothing will disarm. Any other
 * close (completed, failed, cancelled) ran the campaign's teardown, or kept the rig on purpose
 * (end: keep), which stays under the deadline.
 */
const CLOSED_WITHOUT_ITS_END = ['TERMINATED', 'TIMED_OUT'];
/** Closed by its own end (see above), or gone from the server after its retention: nothing more to learn by looking. */
const CLOSED_BY_ITS_END = ['COMPLETED', 'FAILED', 'CANCELLED', 'NOT_FOUND'];

/** A watchdog input from before hostWaitSeconds: the spec's default workerWaitSeconds. */
const DEFAULT_HOST_WAIT_S = 600;

export interface WatchdogInput {
  campaignId: string;
  target: TargetName;
  /** Epoch milliseconds. */
  deadlineMs: number;
  /** The queue of the host that made the rig (rig-host-<host>): teardown acts on that machine. */
  hostQueue?: string;
  /**
   * Continue as new once the history holds this many events, or earlier when the server suggests it.
   * Absent: only when the server suggests it (a few thousand events on a real cluster). Tests set it
   * small, since the time-skipping server never suggests.
   */
  maxHistoryEvents?: number;
  /** Carried over continue-as-new: the deadline the rig's expiry tag holds (absent: deadlineMs, as provisioning tagged it). */
  taggedMs?: number;
  /** Carried over continue-as-new: how many runs came before this one (absent: none). */
  run?: number;
  /** Carried over continue-as-new: the campaign closed by its own end (its status then), so no run checks it again. */
  campaignClosed?: string;
  /** How often it looks at its campaign (the spec's watchdogCheckSeconds); absent: CAMPAIGN_CHECK_MS. */
  checkMs?: number;
  /** How long a teardown (or re-tag) attempt waits for the host queue's worker (the spec's workerWaitSeconds); absent: 600. */
  hostWaitSeconds?: number;
  /** An AWS rig's region, for a teardown by a worker on another host (it has no record of the rig). */
  region?: string;
}

export async function rigWatchdog(input: WatchdogInput): Promise<WatchdogState> {
  let deadlineMs = input.deadlineMs;
  let disarmed = false;
  let changed = false;
  let fireNow: string | undefined;
  const run = input.run ?? 0;
  /** The deadline the rig's expiry tag holds, and whether a re-tag is running (a continue-as-new waits for it). */
  let taggedMs = input.taggedMs ?? input.deadlineMs;
  let tagging = false;
  /** Set while its teardown retries without a cap (the host's queue did not tear the rig down). */
  let teardownFailing: string | undefined;
  const state = (): WatchdogState => ({
    deadline: new Date(deadlineMs).toISOString(),
    state: disarmed ? 'disarmed' : 'armed',
    ...(run ? { run } : {}),
    ...(teardownFailing ? { teardownFailing } : {}),
  });
  setHandler(disarmSignal, () => {
    disarmed = true;
  });
  setHandler(extendSignal, (minutes: number) => {
    if (Number.isFinite(minutes) && minutes > 0) {
      deadlineMs += minutes * 60_000;
      changed = true;
    }
  });
  // `rig campaign extend ID --minutes N`: the answer is the new deadline, or why there is none.
  setHandler(
    extendUpdate,
    (minutes: number) => {
      deadlineMs += minutes * 60_000;
      changed = true;
      return state();
    },
    {
      validator: (minutes: number) => {
        if (!(Number.isFinite(minutes) && minutes > 0)) throw new Error(`minutes must be a number above 0 (got ${String(minutes)})`);
        if (disarmed) throw new Error('the watchdog is disarmed (its rig was torn down cleanly): nothing to extend');
        if (fireNow !== undefined || deadlineMs <= Date.now()) throw new Error(`the watchdog is firing (${fireNow ?? 'deadline reached'}): too late to extend`);
      },
    },
  );
  // Never earlier: an operator's extension, or a later step's hold, is not undone by a stale one.
  setHandler(holdUntilSignal, (epochMs: number) => {
    if (Number.isFinite(epochMs) && epochMs > deadlineMs) {
      deadlineMs = epochMs;
      changed = true;
    }
  });
  setHandler(fireSignal, (reason: string) => {
    fireNow ??= String(reason || 'asked to fire now');
  });
  setHandler(watchdogQuery, state);
  /**
   * Runs beside the main loop: one re-tag at a time, always to the latest deadline (moves that come
   * while one is running are folded into the next). Provisioning tagged the rig with the first deadline.
   */
  async function followDeadlineWithTag(): Promise<void> {
    const retag = retagOn(input.hostQueue, input.hostWaitSeconds ? `${input.hostWaitSeconds} seconds` : undefined);
    for (;;) {
      await condition(() => disarmed || fireNow !== undefined || deadlineMs !== taggedMs);
      if (disarmed || fireNow !== undefined) return;
      const wanted = deadlineMs;
      tagging = true;
      try {
        await retag({ campaignId: input.campaignId, target: input.target, expiresAt: new Date(wanted).toISOString() });
      } catch (err) {
        log.warn('could not re-tag the rig\'s expiry: a reaper may take it at the old time; the watchdog keeps its own deadline', { error: String(err) });
      } finally {
        tagging = false;
      }
      taggedMs = wanted;
    }
  }
  const checks = patched(CHECKS_CAMPAIGN_PATCH);
  const retags = patched(RETAGS_EXPIRY_PATCH);
  const bounded = patched(BOUNDED_HISTORY_PATCH);
  /** Set once the campaign has closed by its own end: its state cannot change any more. */
  let campaignClosed = input.campaignClosed;
  /** Time to start a fresh history: suggested by the server, or at the input's bound. */
  const historyFull = () => {
    const info = workflowInfo();
    return info.continueAsNewSuggested || (input.maxHistoryEvents !== undefined && info.historyLength >= input.maxHistoryEvents);
  };
  if (retags) {
    followDeadlineWithTag().catch((err) => log.warn('the expiry re-tagging stopped', { error: String(err) }));
  }
  // The campaign's workflow id: this watchdog's own, without the suffix the campaign gave it.
  const campaignWorkflowId = workflowInfo().workflowId.replace(/\.watchdog$/, '');
  for (;;) {
    changed = false;
    const left = deadlineMs - Date.now();
    if (left <= 0 || fireNow !== undefined) break;
    // Not while a re-tag runs (its result would be lost, and the next run would tag again) nor while a
    // message handler is unfinished. A signal that comes while this task is being completed fails the
    // completion; the task runs again with the signal applied, so what is carried includes it.
    if (bounded && historyFull() && !tagging && allHandlersFinished()) {
      log.info('the watchdog continues as new to bound its history', { deadline: new Date(deadlineMs).toISOString(), run: run + 1, historyLength: workflowInfo().historyLength });
      await continueAsNew<typeof rigWatchdog>({ ...input, deadlineMs, taggedMs, run: run + 1, ...(campaignClosed ? { campaignClosed } : {}) });
    }
    const checking = checks && campaignClosed === undefined;
    const wait = checking ? Math.min(left, input.checkMs ?? CAMPAIGN_CHECK_MS) : left;
    const woke = await condition(() => disarmed || changed || fireNow !== undefined, wait);
    if (disarmed) return state();
    if (woke || !checking || wait >= left) continue;
    try {
      const { status } = await campaignRunState({ workflowId: campaignWorkflowId });
      if (CLOSED_WITHOUT_ITS_END.includes(status)) fireNow ??= `the campaign ${campaignWorkflowId} closed (${status.toLowerCase()}) without disarming`;
      else if (bounded && CLOSED_BY_ITS_END.includes(status)) campaignClosed = status;
    } catch (err) {
      // A check that cannot be made changes nothing: the deadline stays the backstop.
      log.warn('could not read the campaign\'s state', { error: String(err) });
    }
  }
  const teardown = { campaignId: input.campaignId, target: input.target, by: 'watchdog' as const };
  if (input.hostQueue && patched(ANYWHERE_PATCH)) {
    const hostWait = `${input.hostWaitSeconds ?? DEFAULT_HOST_WAIT_S} seconds`;
    await teardownFromAnywhere({ ...teardown, ...(input.region ? { region: input.region } : {}) }, { hostQueue: input.hostQueue, hostWait }, ({ reason, queue }) => {
      teardownFailing = `${reason}; retrying on ${queue} without a cap`;
    });
  } else {
    await teardownOn(input.hostQueue)(teardown);
  }
  teardownFailing = undefined;
  return { deadline: new Date(deadlineMs).toISOString(), state: 'fired', firedBy: fireNow ?? 'deadline', ...(run ? { run } : {}) };
}

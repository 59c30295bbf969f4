// rigWatchdog: a separate workflow, started at provisioning with parent-close policy ABANDON, so it
// outlives a campaign that crashed, was terminated or lost its worker. At the deadline it tears down
// everything that carries the campaign's id, unless the campaign disarmed it after a clean teardown.
// A kept rig (end: keep) stays under its watchdog: billing never runs unattended.
// Signals: disarm (the rig is gone), extend (+minutes, an operator), hold-until (the campaign, at each
// step: the deadline follows the plan), fire (tear down now: the campaign's own teardown gave up).
// Whenever the deadline moves, the rig's expiry tag follows it (retagRigExpiry, on the teardown's
// queue), so `rig check --reap` never takes a rig its watchdog still guards; a re-tag that fails is
// logged and never stops the watchdog (the deadline here, not the tag, is what tears the rig down).
import { condition, log, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type * as activities from '../activities';
import type { TargetName } from '../lib/protocol/spec';
import { disarmSignal, extendSignal, extendUpdate, fireSignal, holdUntilSignal, watchdogQuery, type WatchdogState } from './messages';

/** On the queue of the host that made the rig (its campaign's claimed host); older inputs: the watchdog's own queue. */
const teardownOn = (taskQueue: string | undefined) =>
  proxyActivities<typeof activities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: '15 minutes',
    retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20 },
  }).teardownRig;

/** Same queue as teardown (the host that made the rig); a few quick attempts, then give up and warn. */
const retagOn = (taskQueue: string | undefined) =>
  proxyActivities<typeof activities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 5 },
  }).retagRigExpiry;

/** Read-only, quick: how the campaign's workflow stands (activities/campaign-state.ts). */
const { campaignRunState } = proxyActivities<typeof activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', maximumInterval: '30 seconds', maximumAttempts: 3 },
});

/** patched() id: the watchdog looks at its campaign on a durable timer (histories before it did not). */
const CHECKS_CAMPAIGN_PATCH = 'watchdog-checks-campaign';
/** How often the watchdog looks: a terminated campaign's rig is torn down within this, not at the deadline. */
export const CAMPAIGN_CHECK_MS = 2 * 60_000;
/** patched() id: a moved deadline re-tags the rig's expiry (histories before it did not). */
const RETAGS_EXPIRY_PATCH = 'watchdog-retags-expiry';
/**
 * Closed without running its own end: nothing tore the rig down and nothing will disarm. Any other
 * close (completed, failed, cancelled) ran the campaign's teardown, or kept the rig on purpose
 * (end: keep), which stays under the deadline.
 */
const CLOSED_WITHOUT_ITS_END = ['TERMINATED', 'TIMED_OUT'];

export interface WatchdogInput {
  campaignId: string;
  target: TargetName;
  /** Epoch milliseconds. */
  deadlineMs: number;
  /** The queue of the host that made the rig (rig-host-<host>): teardown acts on that machine. */
  hostQueue?: string;
  /** How often it looks at its campaign (the spec's watchdogCheckSeconds); absent: CAMPAIGN_CHECK_MS. */
  checkMs?: number;
}

export async function rigWatchdog(input: WatchdogInput): Promise<WatchdogState> {
  let deadlineMs = input.deadlineMs;
  let disarmed = false;
  let changed = false;
  let fireNow: string | undefined;
  const state = (): WatchdogState => ({ deadline: new Date(deadlineMs).toISOString(), state: disarmed ? 'disarmed' : 'armed' });
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
    const retag = retagOn(input.hostQueue);
    let taggedMs = input.deadlineMs;
    for (;;) {
      await condition(() => disarmed || fireNow !== undefined || deadlineMs !== taggedMs);
      if (disarmed || fireNow !== undefined) return;
      const wanted = deadlineMs;
      try {
        await retag({ campaignId: input.campaignId, target: input.target, expiresAt: new Date(wanted).toISOString() });
      } catch (err) {
        log.warn('could not re-tag the rig\'s expiry: a reaper may take it at the old time; the watchdog keeps its own deadline', { error: String(err) });
      }
      taggedMs = wanted;
    }
  }
  const checks = patched(CHECKS_CAMPAIGN_PATCH);
  if (patched(RETAGS_EXPIRY_PATCH)) {
    followDeadlineWithTag().catch((err) => log.warn('the expiry re-tagging stopped', { error: String(err) }));
  }
  // The campaign's workflow id: this watchdog's own, without the suffix the campaign gave it.
  const campaignWorkflowId = workflowInfo().workflowId.replace(/\.watchdog$/, '');
  for (;;) {
    changed = false;
    const left = deadlineMs - Date.now();
    if (left <= 0 || fireNow !== undefined) break;
    const wait = checks ? Math.min(left, input.checkMs ?? CAMPAIGN_CHECK_MS) : left;
    const woke = await condition(() => disarmed || changed || fireNow !== undefined, wait);
    if (disarmed) return state();
    if (woke || !checks || wait >= left) continue;
    try {
      const { status } = await campaignRunState({ workflowId: campaignWorkflowId });
      if (CLOSED_WITHOUT_ITS_END.includes(status)) fireNow ??= `the campaign ${campaignWorkflowId} closed (${status.toLowerCase()}) without disarming`;
    } catch (err) {
      // A check that cannot be made changes nothing: the deadline stays the backstop.
      log.warn('could not read the campaign\'s state', { error: String(err) });
    }
  }
  await teardownOn(input.hostQueue)({ campaignId: input.campaignId, target: input.target, by: 'watchdog' });
  return { deadline: new Date(deadlineMs).toISOString(), state: 'fired', firedBy: fireNow ?? 'deadline' };
}

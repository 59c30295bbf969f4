// The rig's watchdog (workflows/watchdog.ts, a child that outlives the campaign): armed before
// anything is made, so a crash halfway through provisioning is covered; its deadline follows the
// plan as steps run over; disarmed after a clean teardown, told to fire when the teardown gave up.
import { ChildWorkflowCancellationType, getExternalWorkflowHandle, log, ParentClosePolicy, startChild } from '@temporalio/workflow';
import { countedRepeats } from '../../lib/protocol/repeat-validity';
import { EXISTING_SKIPPED } from '../../lib/protocol/existing-spec';
import { marginMinutes, planFrom, totalMinutes, type PlanStep } from '../../lib/protocol/plan';
import { failureReason } from '../failures';
import { disarmSignal, fireSignal, holdUntilSignal } from '../messages';
import { rigWatchdog } from '../watchdog';
import type { Campaign } from './context';

/** Starts the watchdog with the spec's deadline (an existing deployment has none: nothing to tear down). */
export async function armWatchdog(cx: Campaign): Promise<void> {
  const { spec, campaignId } = cx;
  const deadlineMs = Date.now() + spec.watchdogMinutes * 60_000;
  if (spec.target === 'existing') {
    cx.skip('watchdog', EXISTING_SKIPPED.watchdog);
    return;
  }
  await cx.step(
    'watchdog',
    () =>
      startChild(rigWatchdog, {
        workflowId: cx.watchdogId,
        args: [
          {
            campaignId,
            target: spec.target,
            deadlineMs,
            hostQueue: cx.hostQueue,
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
  cx.watchdogUntilMs = deadlineMs;
}

/**
 * The watchdog's deadline follows the plan: when what is left from this step (its allowance, lib/
 * protocol/plan.ts) plus the margin ends after the deadline (a step ran over), it is moved forward.
 * On plan, nothing is sent.
 */
export async function followPlan(cx: Campaign, from: PlanStep): Promise<void> {
  if (cx.watchdogUntilMs === undefined) return;
  const left = totalMinutes(planFrom(cx.spec, from, countedRepeats(cx.repeats).length, cx.planOptions));
  const wantMs = Date.now() + (left + marginMinutes(left)) * 60_000;
  if (wantMs <= cx.watchdogUntilMs) return;
  cx.watchdogUntilMs = wantMs;
  try {
    await getExternalWorkflowHandle(cx.watchdogId).signal(holdUntilSignal, wantMs);
    log.info('the plan ran over: the watchdog holds the rig longer', { from, until: new Date(wantMs).toISOString() });
  } catch (err) {
    // Closed: it has fired (the rig is going or gone); the next step that needs the rig fails and says so.
    log.warn('the watchdog could not be moved: it has closed', { error: failureReason(err) });
  }
}

/**
 * After a clean teardown. A watchdog that has already closed (it fired first: the rig was gone before
 * the campaign's own teardown ran) cannot be disarmed, and need not be: the clean-check just said so.
 */
export async function disarmWatchdog(cx: Campaign): Promise<void> {
  try {
    await getExternalWorkflowHandle(cx.watchdogId).signal(disarmSignal);
  } catch (err) {
    cx.skip('watchdog', `already closed, nothing to disarm (${failureReason(err)}); the clean-check after teardown found the target clean`);
  }
}

/** The campaign's teardown gave up: the watchdog (its own retries, perhaps on another worker) tears down now, not at its deadline. */
export async function fireWatchdog(cx: Campaign, reason: string): Promise<void> {
  try {
    await getExternalWorkflowHandle(cx.watchdogId).signal(fireSignal, reason);
    cx.skip('watchdog', `told to fire now (${reason})`);
  } catch (e) {
    cx.skip('watchdog', `could not be told to fire (${failureReason(e)}): rig check --target local lists what is left`);
  }
}

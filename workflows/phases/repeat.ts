// One measured repeat = one heartbeating activity on the rig's data plane. A dead worker is noticed at
// the heartbeat timeout and the repeat runs again (a fresh run tag); the interrupted attempt is
// recorded by the next attempt. After each, its summary is kept and an AWS rig's app node sends its
// host samples home.
import { ActivityCancellationType, isCancellation } from '@temporalio/workflow';
import type { InterruptedAttempt, RepeatSummary } from '../../lib/protocol/campaign-result';
import { CLOUD_EVIDENCE_BUDGET_S } from '../../lib/protocol/cloud-evidence';
import { measuringSecondsLeft } from '../../lib/protocol/plan';
import { countedRepeats } from '../../lib/protocol/repeat-validity';
import { failureReason } from '../failures';
import type { CampaignProgress } from '../messages';
import type { Campaign } from './context';

/** The repeat's activities, for a repeat of `seconds`. */
export function repeatActs(cx: Campaign, seconds: number) {
  return cx.data({
    // On aws the repeat also waits (bounded) for CloudWatch to publish its window (lib/protocol/cloud-evidence.ts).
    startToCloseTimeout: `${seconds + 300 + (cx.theRig.target === 'aws' ? CLOUD_EVIDENCE_BUDGET_S : 0)} seconds`,
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumAttempts: 4, nonRetryableErrorTypes: ['InvalidSpec'] },
    // A cancelled repeat stops its load and records itself as interrupted before teardown starts.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
}

/**
 * The app node's host samples, after every repeat: that node's worker checks its host sampler and
 * sends its samples home (activities/nodes.ts keepAppNodeEvidence). A failure is listed as a failed 'app-node' step
 * and the campaign goes on: the measurement is the load node's, and the page shows which repeats
 * have no app node samples.
 */
export async function keepAppNode(cx: Campaign): Promise<void> {
  const appQueue = cx.theRig.appQueue;
  if (!appQueue) return;
  const startedAt = new Date().toISOString();
  try {
    await cx.on(appQueue, { startToCloseTimeout: '5 minutes', retry: { initialInterval: '5 seconds', maximumAttempts: 3 } }).keepAppNodeEvidence({ campaignId: cx.campaignId, rig: cx.theRig });
  } catch (err) {
    if (isCancellation(err)) throw err;
    cx.steps.push({ step: 'app-node', status: 'failed', startedAt, endedAt: new Date().toISOString(), summary: failureReason(err) });
  }
}

/** Keeps a measured repeat: its summary, its interrupted attempts, the progress line; then the app node's samples. */
export async function record(cx: Campaign, out: { summary: RepeatSummary; interrupted: InterruptedAttempt[] }): Promise<void> {
  cx.repeats.push(out.summary);
  cx.interrupted.push(...out.interrupted);
  cx.progress.lastVerdicts = [...cx.progress.lastVerdicts, pick(out.summary)].slice(-5);
  cx.progress.secondsLeft = measuringSecondsLeft(cx.spec, countedRepeats(cx.repeats).length);
  await keepAppNode(cx);
}

function pick(s: RepeatSummary): CampaignProgress['lastVerdicts'][number] {
  // invalid and notJudged ride along so that the line never calls a repeat the target did not fail "FAIL".
  return { configuration: s.configuration, index: s.index, attempt: s.attempt, passed: s.passed, p99Ms: s.p99Ms, reasons: s.reasons, ...(s.invalid ? { invalid: s.invalid } : {}), ...(s.notJudged?.length ? { notJudged: s.notJudged } : {}) };
}

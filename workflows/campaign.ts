// benchCampaign: the Hardcount bench protocol (run.sh of the spec) as one durable workflow. The top
// level only sequences the phases, as run.sh sequences its scripts; each phase is a file of its own
// under workflows/phases/, sharing the campaign's context (phases/context.ts: its spec, what it has
// measured, its progress, the step recorder and the activity proxies by queue). A new step goes in its
// phase's file, behind patched('<id>') with the id at that file's head when it changes the commands
// of a campaign that can be in flight (docs/architecture.md, "The campaign").
//
// Deterministic: no I/O, clocks or randomness outside Temporal's APIs; large data stays in evidence
// files (activities return paths and small summaries); no secret is ever an argument or a result.
//
// Campaigns started by a versioned worker are PINNED (workflows/index.ts) and never run newer code.
// The active patch ids: 'aws-plan-own-allowances' and 'history-budget-load-nodes' (phases/spec.ts),
// 'database-calibration' (phases/bring-up.ts), 'instrument-invalid-rerun' (phases/measure.ts),
// 'load-nodes', 'load-nodes-replace-lost' and 'load-nodes-early' (phases/load-nodes.ts),
// 'evidence-of-one-run' (phases/report.ts: a run whose folder is another run's writes no report). The thirteen
// deprecated in step one of issue 24's retirement are gone (step two, issue 37; docs/architecture.md,
// "Retiring the campaign's patches"): a history that holds their markers flagged deprecated replays
// without them. The watchdog's own ids are in workflows/watchdog.ts.
import { ApplicationFailure, CancellationScope, isCancellation } from '@temporalio/workflow';
import type { CampaignResult, CampaignStatus } from '../lib/protocol/campaign-result';
import { campaignVerdict } from '../lib/protocol/configuration-state';
import type { CampaignSpecInput } from '../lib/protocol/spec';
import { bringUp, prepareRigNodes } from './phases/bring-up';
import { calibrate } from './phases/calibrate';
import { ceiling } from './phases/ceiling';
import { cleanCheckBefore } from './phases/clean-check';
import { Campaign, outcomes, StopBeforeMeasuring } from './phases/context';
import { denominator } from './phases/denominator';
import { answerMessages } from './phases/handlers';
import { claimHostAndLease, releaseLease } from './phases/lease';
import { makeLoadNodesEarly } from './phases/load-nodes';
import { measure } from './phases/measure';
import { provision } from './phases/provision';
import { report } from './phases/report';
import { seed } from './phases/seed';
import { resolveAndCheckSpec } from './phases/spec';
import { teardown } from './phases/teardown';
import { armWatchdog } from './phases/watchdog';

export async function benchCampaign(input: CampaignSpecInput): Promise<CampaignResult> {
  const cx = new Campaign();
  // The progress query and abort are answered from the first task, before the first await.
  answerMessages(cx);
  // A bad spec, a watchdog shorter than the plan or a history past the budget fails here, before any
  // step touches a machine.
  await resolveAndCheckSpec(cx, input);
  try {
    await claimHostAndLease(cx); // claimHost -> openCampaign -> the host's measuring lease
    await calibrate(cx, 'host'); // the instrument, on the host that sends the load (local)
    await cleanCheckBefore(cx);
    await armWatchdog(cx); // before anything is made: a crash halfway through provisioning is covered
    await provision(cx); // (aws: then RDS, waited for apart)
    await prepareRigNodes(cx); // aws: the database from the load node, the service on the app node
    await calibrate(cx, 'rig'); // aws: on the load node
    await makeLoadNodesEarly(cx); // load.nodes > 1: each node made and calibrated, before bring-up and seed
    await bringUp(cx);
    await seed(cx);
    await measure(cx); // sustained repeats (or the ladder), each configuration after its warm-up
    await ceiling(cx);
    await denominator(cx);
  } catch (err) {
    // Aborted before anything was measured (waiting for the lease): an abort, not a failure.
    if (!(err instanceof StopBeforeMeasuring)) cx.failure = err;
  }

  const cancelled = cx.failure !== undefined && isCancellation(cx.failure);
  const status = endStatus(cx);
  // Teardown is the compensation of provisioning: it runs after success, failure and cancellation,
  // in a scope that a cancellation cannot interrupt.
  const result = await CancellationScope.nonCancellable(async (): Promise<CampaignResult> => {
    cx.progress.secondsLeft = 0; // nothing more is measured (the line no longer shows the denominator's time)
    const end = await teardown(cx, status); // then the clean-check after it, and the watchdog disarmed
    await releaseLease(cx);
    return report(cx, status, end);
  });

  if (cancelled) throw cx.failure;
  if (result.status === 'failed') {
    throw ApplicationFailure.nonRetryable(`campaign ${cx.campaignId} failed: ${result.error}`, 'CampaignFailed', result);
  }
  return result;
}

/** How the phases ended. Without calibration nothing measured is a verdict: such a campaign is never "held". */
function endStatus(cx: Campaign): CampaignStatus {
  if (cx.failure !== undefined) return isCancellation(cx.failure) ? 'cancelled' : 'failed';
  if (cx.aborting) return 'aborted';
  return campaignVerdict(outcomes(cx.spec, cx.repeats), cx.spec.calibrate);
}

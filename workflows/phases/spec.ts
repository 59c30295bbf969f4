// The campaign's first step: the spec with its defaults, resolved by an activity whose result the
// history keeps, then the plan's refusals (a watchdog shorter than the plan, a history past the
// server's budget), before any step touches a machine.
import { ActivityFailure, ApplicationFailure, patched, proxyActivities } from '@temporalio/workflow';
import type * as activities from '../../activities';
import { historyProblem } from '../../lib/protocol/history-budget';
import { campaignLoadNodes } from '../../lib/protocol/load-nodes';
import { measuringSecondsLeft, watchdogProblem, type PlanOptions } from '../../lib/protocol/plan';
import type { CampaignSpec, CampaignSpecInput } from '../../lib/protocol/spec';
import { CONTROL_QUEUE } from '../../lib/temporal/queues';
import type { Campaign } from './context';

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
 * Active (patched, not deprecated): the history budget counts the load nodes' activities (each node's
 * runNodeLoad per repeat, making and calibrating the nodes: lib/protocol/history-budget.ts), so a plan
 * on many nodes that would pass the server's warning is refused before anything is made. Asked only
 * for a campaign on N > 1 nodes (a one-node count is unchanged); one started before it keeps the count
 * it had, and is not refused on replay.
 */
const HISTORY_NODES_PATCH = 'history-budget-load-nodes';

/**
 * Resolves the spec into `cx.spec` and refuses a plan the rig cannot keep. A bad spec fails here,
 * before any step touches a machine, naming each field.
 */
export async function resolveAndCheckSpec(cx: Campaign, input: CampaignSpecInput): Promise<void> {
  const spec = await resolvedSpec(input);
  cx.spec = spec;
  // A watchdog shorter than the plan would tear a healthy series down halfway: refused before anything runs.
  const planOptions: PlanOptions = spec.target === 'aws' && !patched(AWS_PLAN_PATCH) ? { legacy: true } : {};
  cx.planOptions = planOptions;
  const shortWatchdog = watchdogProblem(spec, planOptions);
  if (shortWatchdog) throw ApplicationFailure.nonRetryable(shortWatchdog, 'InvalidSpec');
  // Started without the client's check (a schedule, `temporal workflow start`): the same refusal here
  // (lib/protocol/history-budget.ts: past the server's 10,240-event warning).
  const countLoadNodes = campaignLoadNodes(spec) > 1 && patched(HISTORY_NODES_PATCH);
  const tooLong = historyProblem(spec, { countLoadNodes });
  if (tooLong) throw ApplicationFailure.nonRetryable(tooLong, 'InvalidSpec');
  cx.progress.secondsLeft = measuringSecondsLeft(spec, 0);
}

/**
 * The spec with its defaults, resolved by an ordinary activity on the control queue whose result the
 * history keeps, so that a default changed in code later does not change a campaign in flight. (Not a
 * local activity: a first workflow task that closed with its marker alone, a worker slow to start,
 * left a history the SDK could not replay after a worker restart, docs/benchmarks.md.)
 */
async function resolvedSpec(input: CampaignSpecInput): Promise<CampaignSpec> {
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

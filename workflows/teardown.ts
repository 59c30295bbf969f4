// Teardown that does not depend on one machine staying alive, for the campaign's own end and for its
// watchdog. First on the claimed host's queue (the host that made the rig: its ledger, its processes),
// each attempt waiting at most `hostWait` for that host's worker. If that does not tear the rig down,
// the rig is `teardown-failing` (the caller says so: RigStatus, the watchdog's state) and teardown
// retries without a cap: an AWS rig, found by its campaign tag in its region, on the shared queue,
// where any rig worker takes it (tearsDownFromAnyHost); a local rig on its host's queue, with no
// schedule-to-start bound, since only that host's worker can remove it. Giving up is not an option
// for a rig that bills: an uncapped activity retry is the server's (no events per attempt, so the
// history stays bounded however long it retries), and an operator sees it by its RigStatus.
import { log, proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities';
import type { StepSummary, TeardownInput } from '../activities/contract';
import { tearsDownFromAnyHost } from '../lib/protocol/spec';
import { CONTROL_QUEUE } from '../lib/temporal/queues';
import { failureReason } from './failures';

/** On the claimed host: a few quick attempts (a worker restarting, an AWS call throttled). */
const ON_HOST_RETRY = { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 };
/** Then without a cap (no maximumAttempts, no schedule-to-close): 10 s doubling to 5 minutes between attempts. */
const UNCAPPED_RETRY = { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' };
/** A worker that dies mid-teardown is noticed at the heartbeat timeout (its progress lines heartbeat; the longest silent wait is 30 s). */
const ATTEMPT = { startToCloseTimeout: '15 minutes', heartbeatTimeout: '2 minutes' } as const;

export interface TeardownPlace {
  /** The claimed host's queue, rig-host-<host>. */
  hostQueue: string;
  /** How long one attempt there waits for that host's worker (the spec's workerWaitSeconds). */
  hostWait: string;
}

export interface TeardownFailing {
  /** Why the claimed host's attempts did not tear it down. */
  reason: string;
  /** Where it now retries without a cap. */
  queue: string;
}

/** Tears the rig down (see the header); `onFailing` is called once, when the uncapped retries begin. Returns the teardown's summary. */
export async function teardownFromAnywhere(input: TeardownInput, place: TeardownPlace, onFailing: (f: TeardownFailing) => void): Promise<StepSummary> {
  const onHost = proxyActivities<typeof activities>({ taskQueue: place.hostQueue, scheduleToStartTimeout: place.hostWait, retry: ON_HOST_RETRY, ...ATTEMPT });
  try {
    return await onHost.teardownRig(input);
  } catch (err) {
    const queue = tearsDownFromAnyHost(input.target) ? CONTROL_QUEUE : place.hostQueue;
    const reason = failureReason(err);
    log.warn(`teardown on ${place.hostQueue} did not finish (${reason}): retrying on ${queue} without a cap`);
    onFailing({ reason, queue });
    const anywhere = proxyActivities<typeof activities>({ taskQueue: queue, retry: UNCAPPED_RETRY, ...ATTEMPT });
    return anywhere.teardownRig(input);
  }
}

// Teardown, the compensation of provisioning (the protocol's teardown.sh, which must end CLEAN): it
// runs after success, failure and cancellation, in a scope a cancellation cannot interrupt (the top
// level's), unless `end` keeps the rig; then the clean-check after it. Clean: the watchdog is
// disarmed. Left dirty: it stays armed and tries again at its deadline. Given up: it is told to fire now.
import type { CampaignResult, CampaignStatus } from '../../lib/protocol/campaign-result';
import { EXISTING_SKIPPED } from '../../lib/protocol/existing-spec';
import { failureReason } from '../failures';
import { RigStatus } from '../search-attributes';
import { teardownFromAnywhere } from '../teardown';
import { cleanCheckAfter } from './clean-check';
import type { Campaign } from './context';
import { disarmWatchdog, fireWatchdog } from './watchdog';

/** What became of the rig: its state for the result, and what the clean-check after teardown said. */
export interface RigEnd {
  rigState: CampaignResult['rig'];
  cleanAfter?: string;
  dirtyAfter: boolean;
}

/** Tears the rig down (or keeps it, or leaves an existing deployment untouched) given how the campaign ended. */
export async function teardown(cx: Campaign, status: CampaignStatus): Promise<RigEnd> {
  const { spec, campaignId, progress } = cx;
  const end: RigEnd = { rigState: cx.provisioned ? 'destroyed' : 'not-provisioned', dirtyAfter: false };
  if (!cx.provisioned) return end;
  const keep = spec.end === 'keep' || (spec.end === 'keep-on-failure' && (status === 'failed' || status === 'cancelled'));
  if (spec.target === 'existing') {
    // The deployment was there before the campaign and stays (no watchdog to disarm: none was started).
    end.rigState = 'untouched';
    cx.skip('teardown', EXISTING_SKIPPED.teardown);
    return end;
  }
  if (keep) {
    end.rigState = 'kept';
    cx.skip('teardown', `kept (end: ${spec.end}); the watchdog tears it down at its deadline unless extended`);
    return end;
  }
  const teardownInput = { campaignId, target: spec.target, by: 'campaign' as const, ...(spec.aws ? { region: spec.aws.region } : {}) };
  // Teardown that no single machine can stop (workflows/teardown.ts): on the claimed host's queue with a
  // bounded wait for its worker (workerWaitSeconds), then retried without a cap (an AWS rig by any
  // worker, on the shared queue). While the uncapped retries run: searchable (RigStatus), in the
  // progress line, and the watchdog's.
  const failing = ({ reason, queue }: { reason: string; queue: string }) => {
    progress.waitingFor = `the teardown, failing (${reason}): retrying on ${queue} without a cap`;
    cx.setSearchAttributes([{ key: RigStatus, value: 'teardown-failing' }]);
  };
  const tearDown = async () => {
    let wasFailing = false;
    const r = await teardownFromAnywhere(teardownInput, { hostQueue: cx.hostQueue, hostWait: cx.workerWait }, (f) => {
      wasFailing = true;
      failing(f);
    });
    if (wasFailing) {
      progress.waitingFor = undefined;
      cx.setSearchAttributes([{ key: RigStatus, value: 'running' }]);
    }
    return r;
  };
  let tornDown = false;
  try {
    await cx.step('teardown', tearDown, (r) => r.summary);
    tornDown = true;
    const after = await cleanCheckAfter(cx);
    end.cleanAfter = after.summary;
    end.dirtyAfter = !after.clean;
    // Left dirty, the watchdog stays armed: it tries again at its deadline.
    if (after.clean) await disarmWatchdog(cx);
  } catch (err) {
    end.rigState = 'teardown-failed';
    end.cleanAfter ??= `not checked: ${failureReason(err)}`;
    // Given up (or the clean-check after it could not run): the ledger stays open, and the watchdog
    // (its own retries, perhaps on another worker) is told to tear down now, not at its deadline.
    if (!tornDown) await fireWatchdog(cx, `the campaign's teardown gave up: ${failureReason(err)}`);
  }
  return end;
}

// The account (or host) must be clean before a rig is made, and is looked at again after teardown:
// `teardown.sh --check` of the protocol. An existing deployment (target "existing") is not the rig's:
// nothing to find clean.
import { log } from '@temporalio/workflow';
import type { CleanCheckOutput } from '../../activities/contract';
import { EXISTING_SKIPPED } from '../../lib/protocol/existing-spec';
import { tearsDownFromAnyHost } from '../../lib/protocol/spec';
import { failureReason } from '../failures';
import { control, type Campaign } from './context';

// Only campaigns on the existing target branch here, and none was recorded before it existed, so
// local and aws histories issue the same commands as before and need no patch.
export async function cleanCheckBefore(cx: Campaign): Promise<void> {
  if (cx.spec.target === 'existing') cx.skip('clean-check', EXISTING_SKIPPED['clean-check']);
  else await cx.step('clean-check', () => cx.machine({}).cleanCheck({ campaignId: cx.campaignId, target: cx.spec.target, phase: 'before' }), (r) => r.summary);
}

/** After teardown; an AWS rig is looked for by tag from any worker when the claimed host's does not answer. */
export async function cleanCheckAfter(cx: Campaign): Promise<CleanCheckOutput> {
  return cx.step(
    'clean-check-after',
    async () => {
      const input = { campaignId: cx.campaignId, target: cx.spec.target, phase: 'after' as const };
      if (!tearsDownFromAnyHost(cx.spec.target)) return cx.machine({}).cleanCheck(input);
      try {
        return await cx.machine({}).cleanCheck(input);
      } catch (err) {
        log.warn(`the clean-check after teardown did not run on ${cx.hostQueue} (${failureReason(err)}): any worker looks by tag`);
        return control({}).cleanCheck(input);
      }
    },
    (r) => r.summary,
  );
}

// Before a configuration's first repeat (a ladder's first rung): its own rate and batch against the
// target, unmeasured, then a cool-down. A warm-up that shows a broken target refuses (WarmupRefusal)
// and stops the campaign before any measured repeat.
import { ActivityCancellationType } from '@temporalio/workflow';
import type { ConfigurationSpec } from '../../lib/protocol/spec';
import type { Campaign } from './context';

export async function warmUp(cx: Campaign, configuration: ConfigurationSpec, seconds: number, maxInFlight: number, cooldownSeconds: number): Promise<void> {
  if (seconds <= 0) return;
  const progress = cx.progress;
  progress.configuration = configuration.name;
  progress.repeat = undefined;
  progress.phase = 'warm-up';
  const acts = cx.data({
    startToCloseTimeout: `${seconds + 300} seconds`,
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumAttempts: 3 },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const rig = cx.theRig;
  await cx.step('warm-up', () => acts.warmUp({ campaignId: cx.campaignId, rig, configuration, seconds, maxInFlight }), (r) => r.summary, true);
  if (cooldownSeconds > 0 && !cx.aborting) await cx.coolDown(cooldownSeconds);
}

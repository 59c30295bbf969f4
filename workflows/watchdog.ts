// rigWatchdog: a separate workflow, started at provisioning with parent-close policy ABANDON, so it
// outlives a campaign that crashed, was terminated or lost its worker. At the deadline it tears down
// everything that carries the campaign's id, unless the campaign disarmed it after a clean teardown.
// A kept rig (end: keep) stays under its watchdog: billing never runs unattended.
import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type * as activities from '../activities';
import { disarmSignal, extendSignal, watchdogQuery, type WatchdogState } from './messages';

const { teardownRig } = proxyActivities<typeof activities>({
  startToCloseTimeout: '15 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20 },
});

export interface WatchdogInput {
  campaignId: string;
  target: 'local';
  /** Epoch milliseconds. */
  deadlineMs: number;
}

export async function rigWatchdog(input: WatchdogInput): Promise<WatchdogState> {
  let deadlineMs = input.deadlineMs;
  let disarmed = false;
  let changed = false;
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
  setHandler(watchdogQuery, state);
  for (;;) {
    changed = false;
    const left = deadlineMs - Date.now();
    if (left <= 0) break;
    await condition(() => disarmed || changed, left);
    if (disarmed) return state();
  }
  await teardownRig({ campaignId: input.campaignId, target: input.target, by: 'watchdog' });
  return { deadline: new Date(deadlineMs).toISOString(), state: 'fired' };
}

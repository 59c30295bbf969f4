// Options for the activities that are nothing but a call to Temporal itself: requestLease (signal-
// with-start and a query of the host's lease) and campaignRunState (a describe). A cluster failover
// or a rolling restart makes such a call fail for a minute or two; with a count of attempts (3 over
// about 6 s, before) that window failed a campaign before it measured. They retry through it instead,
// 1 s doubling to 15 s between attempts, bounded by schedule-to-close: the time a failover may take,
// not a number of attempts. Retries of an activity add no events to the history.
import type { ActivityOptions } from '@temporalio/workflow';

/** Each attempt is one short call; the whole is bounded by `window` (schedule-to-close). */
export function temporalCallOptions(window: ActivityOptions['scheduleToCloseTimeout']): ActivityOptions {
  return {
    startToCloseTimeout: '30 seconds',
    scheduleToCloseTimeout: window,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '15 seconds' },
  };
}

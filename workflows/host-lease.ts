// hostLease: one measurement per load host at a time. A campaign takes its host's lease before it
// calibrates and gives it back after its teardown (and the clean-check after it): a second campaign
// started during an overnight series waits, saying for whom, instead of loading the machine during
// one of the first one's repeats, or being refused by a clean-check that sees the first one's rig.
//
// One workflow per host (id rig-lease-<host>), started by the first request (signal-with-start, from
// the requestLease activity). Requests queue in arrival order; each grant is a signal to the campaign.
// A holder that closes without giving the lease back (terminated, timed out) is found on a durable
// timer and passed over once its watchdog has torn its rig down. With no holder and nobody waiting
// the workflow completes; the next request starts it again.
import { temporalCallOptions } from './temporal-calls';
import { condition, continueAsNew, getExternalWorkflowHandle, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type * as activities from '../activities';
import { leaseGrantedSignal, leaseQuery, leaseReleaseSignal, leaseRequestSignal, type LeaseState } from './messages';

/** How often the holder is looked at: a holder that closed without releasing is passed over within this. */
export const HOLDER_CHECK_MS = 2 * 60_000;

/** Through a failover (workflows/temporal-calls.ts); a look that still fails changes nothing, the next one comes. */
const { campaignRunState } = proxyActivities<typeof activities>(temporalCallOptions('5 minutes'));

export interface HostLeaseInput {
  host: string;
  /** Carried over continue-as-new. */
  state?: LeaseState;
  /** How often the holder is looked at (the starting campaign's watchdogCheckSeconds); absent: HOLDER_CHECK_MS. */
  holderCheckMs?: number;
}

export async function hostLease(input: HostLeaseInput): Promise<LeaseState> {
  const state: LeaseState = input.state ?? { host: input.host, waiting: [] };
  /** A grant whose signal has not been sent yet (a new holder, or a holder that asked again). */
  let grantPending = false;
  setHandler(leaseRequestSignal, (workflowId: string) => {
    if (state.holder?.workflowId === workflowId) grantPending = true; // asked again (a retried request): grant again
    else if (!state.waiting.includes(workflowId)) state.waiting.push(workflowId);
  });
  setHandler(leaseReleaseSignal, (workflowId: string) => {
    if (state.holder?.workflowId === workflowId) state.holder = undefined;
    state.waiting = state.waiting.filter((w) => w !== workflowId);
  });
  setHandler(leaseQuery, () => state);

  for (;;) {
    if (!state.holder && state.waiting.length > 0) {
      state.holder = { workflowId: state.waiting.shift()!, since: new Date().toISOString() };
      grantPending = true;
    }
    if (state.holder && grantPending) {
      grantPending = false;
      try {
        await getExternalWorkflowHandle(state.holder.workflowId).signal(leaseGrantedSignal, state.host);
        log.info('lease granted', { host: state.host, holder: state.holder.workflowId, waiting: state.waiting.length });
      } catch (err) {
        // The campaign closed while it waited: the next one in line gets the lease.
        log.warn('the lease could not be granted: its campaign has closed', { holder: state.holder.workflowId, error: String(err) });
        state.holder = undefined;
        continue;
      }
    }
    if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof hostLease>({ host: state.host, state, ...(input.holderCheckMs ? { holderCheckMs: input.holderCheckMs } : {}) });
    // Nobody holds it and nobody waits: done. The next request starts it again (signal-with-start); no
    // idle timer is left running (on the time-skipping server an idle workflow bound to a stopped
    // worker's sticky queue holds time still).
    if (!state.holder) return state;
    const holder = state.holder.workflowId;
    const changed = await condition(() => state.holder?.workflowId !== holder || grantPending, input.holderCheckMs ?? HOLDER_CHECK_MS);
    if (changed) continue;
    try {
      const { status } = await campaignRunState({ workflowId: holder });
      if (status !== 'RUNNING' && state.holder?.workflowId === holder) {
        // Closed without its own end (terminated, timed out): its watchdog tears its rig down within
        // one of its checks. The next campaign gets the host once that is done, not before (its
        // clean-check would find the rig and refuse).
        const watchdog = await campaignRunState({ workflowId: `${holder}.watchdog` });
        if (watchdog.status !== 'RUNNING') {
          log.warn('the lease holder closed without giving the lease back: passed over', { holder, status });
          state.holder = undefined;
        }
      }
    } catch (err) {
      // Nothing known: the holder keeps the lease until the next look.
      log.warn('could not read the lease holder\'s state', { holder, error: String(err) });
    }
  }
}

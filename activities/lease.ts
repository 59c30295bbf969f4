// requestLease: asks a host's lease workflow for the campaign's turn to measure there (starting the
// lease workflow when none runs: signal-with-start), and says who holds the lease now, for the line
// the waiting campaign shows. The grant itself comes later, as a signal to the campaign.
// Safe to run twice: the lease keeps one place in line per workflow id, and a holder that asks again
// is granted again.
import { CONTROL_QUEUE, leaseWorkflowId } from '../lib/temporal/queues';
import { leaseQuery, leaseRequestSignal } from '../workflows/messages';
import type { LeaseRequestInput, LeaseRequestOutput } from './contract';
import { workerClient } from './context';

export async function requestLease(input: LeaseRequestInput): Promise<LeaseRequestOutput> {
  const client = workerClient();
  if (!client) throw new Error("requestLease runs only inside a worker (it signals through the worker's Temporal client)");
  const handle = await client.workflow.signalWithStart('hostLease', {
    workflowId: leaseWorkflowId(input.host),
    taskQueue: CONTROL_QUEUE,
    // Only a lease this request starts takes its interval; a running one keeps the one it started with.
    args: [{ host: input.host, ...(input.holderCheckMs ? { holderCheckMs: input.holderCheckMs } : {}) }],
    signal: leaseRequestSignal,
    signalArgs: [input.workflowId],
  });
  try {
    const state = await handle.query(leaseQuery);
    const holder = state.holder;
    return holder && holder.workflowId !== input.workflowId ? { heldBy: holder.workflowId, since: holder.since, waiting: state.waiting.length } : {};
  } catch {
    return {}; // who holds it is only for the waiting line; the grant does not depend on it
  }
}

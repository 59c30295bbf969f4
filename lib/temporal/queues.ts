// The rig's task queues, named in one place. Work that acts on one machine's disk and processes goes
// to that machine's own queue (the worker-specific task queue pattern of Temporal's samples): with two
// `rig worker`s on two hosts, a teardown taken by the host that has nothing would report "removed 0,
// clean" while the other host's rig runs on. Pure names (workflows import this file): the host name
// itself comes from lib/tools/host-name.ts.

/** Shared by every worker: the workflows, and activities that may run on any host. */
export const CONTROL_QUEUE = 'rig';

/** Machine-bound control steps (calibrate, clean-check, provision, teardown, report) of one host. */
export function hostQueue(host: string): string {
  return `rig-host-${host}`;
}

/** The data plane (load, samplers, seeding, pgbench) of one host. */
export function dataQueue(host: string): string {
  return `rig-data-${host}`;
}

/**
 * An AWS rig's data plane: the worker on its load node (user data starts it with this name). Derived
 * from the campaign id alone, so the workflow knows it when provisioning returns and a retried
 * provision, the watchdog and an operator all name the same queue. Campaign ids are 1-80 characters
 * of letters, digits, '.', '_' and '-' (lib/targets/local/rig-paths.ts), all legal in a queue name.
 */
export function awsLoadQueue(campaignId: string): string {
  return `rig-aws-load-${campaignId}`;
}

/** An AWS rig's app node: the worker that runs the service under test and its host sampler. */
export function awsAppQueue(campaignId: string): string {
  return `rig-aws-app-${campaignId}`;
}

/** The host a host or data queue belongs to (undefined for any other queue). */
export function hostOfQueue(queue: string): string | undefined {
  const m = /^rig-(?:host|data)-(.+)$/.exec(queue);
  return m?.[1];
}

/** The workflow that holds a host's measuring lease (workflows/host-lease.ts). */
export function leaseWorkflowId(host: string): string {
  return `rig-lease-${host}`;
}

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

/** The host a host or data queue belongs to (undefined for any other queue). */
export function hostOfQueue(queue: string): string | undefined {
  const m = /^rig-(?:host|data)-(.+)$/.exec(queue);
  return m?.[1];
}

/** The workflow that holds a host's measuring lease (workflows/host-lease.ts). */
export function leaseWorkflowId(host: string): string {
  return `rig-lease-${host}`;
}

// The rig's task queues, named in one place. Work that acts on one machine's disk and processes goes
// to that machine's own queue (the worker-specific task queue pattern of Temporal's samples): with two
// `rig worker`s on two hosts, a teardown taken by the host that has nothing would report "removed 0,
// clean" while the other host's rig runs on. Pure names (workflows import this file): the host name
// itself comes from lib/tools/host-name.ts.
import { campaignSlug } from '../protocol/campaign-id';

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
 * A short, stable hash of a campaign id: FNV-1a 32-bit, hex. Not node:crypto, because workflows
 * import this file and the workflow sandbox has no Node modules; the slug beside it is for people,
 * the hash keeps two campaigns whose slugs collide apart.
 */
function campaignTag(campaignId: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < campaignId.length; i++) {
    h ^= campaignId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  const slug = campaignSlug(campaignId);
  return `${slug ? `${slug}-` : ''}${h.toString(16).padStart(8, '0')}`;
}

/**
 * An AWS campaign's data plane (calibration, roles and migrations, bring-up, seed, repeats,
 * denominator, samplers), served by the worker on its load node: the database is reachable only from
 * there. Derived from the campaign id alone, so the workflow knows it before any node exists. The
 * prefix is `rig-aws-`, never `rig-data-`/`rig-host-`: no host name can make a queue that reads as a
 * campaign's, nor the other way round (hostOfQueue gives undefined for it).
 */
export function awsDataQueue(campaignId: string): string {
  return `rig-aws-data-${campaignTag(campaignId)}`;
}

/** An AWS campaign's app node: the service and its host sampler. Named like awsDataQueue. */
export function awsAppQueue(campaignId: string): string {
  return `rig-aws-app-${campaignTag(campaignId)}`;
}

/** The host a host or data queue belongs to (undefined for any other queue, a campaign's AWS queues among them). */
export function hostOfQueue(queue: string): string | undefined {
  const m = /^rig-(?:host|data)-(.+)$/.exec(queue);
  return m?.[1];
}

/** The workflow that holds a host's measuring lease (workflows/host-lease.ts). */
export function leaseWorkflowId(host: string): string {
  return `rig-lease-${host}`;
}

/**
 * Load node i of a campaign that splits its schedule over several load hosts (issue 37): the queue its
 * own worker polls (runNodeLoad, its calibration). From the campaign id alone, as awsDataQueue, so the
 * workflow and the node's worker agree on it before the node exists; `rig-load-`, never a host's.
 */
export function loadNodeQueue(campaignId: string, node: number): string {
  return `rig-load-${campaignTag(campaignId)}-n${node}`;
}

/**
 * Load node i of an AWS rig (issue 37): node 0 is the rig's own load node, whose worker already serves
 * the data plane (awsDataQueue) and sends node 0's share from there; node i >= 1 is an instance of its
 * own polling loadNodeQueue(campaign, i). Each node's queue is its own, per campaign and node.
 */
export function awsLoadNodeQueue(campaignId: string, node: number): string {
  return node === 0 ? awsDataQueue(campaignId) : loadNodeQueue(campaignId, node);
}

// A lost load node launched again (issue 37), in the load-nodes step on the control host
// (load-nodes.ts startLoadNodesAws), which the campaign runs again after an attempt in which a node
// failed (workflows/phases/load-nodes.ts, patched('load-nodes-replace-lost')). The decision is pure
// (lib/protocol/load-node-relaunch.ts: which node, which token); here it is carried out, node by node:
//   1. the lost node's stopped or stopping instances are terminated (a stopped instance still bills
//      its volume and address; TerminateInstances is idempotent);
//   2. the relaunch's entry, with its own ClientToken, its user data's deadline and build id, is
//      written to the rig's record (record.ts) BEFORE RunInstances, so that an attempt that dies
//      anywhere after the write is retried with the same token and the same parameters: on real EC2
//      one instance, never two (moto 5.2.5 ignores the token);
//   3. RunInstances, as provisioning launches a load node (launch-node.ts: same tags, Name, node
//      number, AMI, volume, profile, group), then the instance id into the entry and the expiry stamp.
// The replacement carries the campaign's tags like every node, so teardown, the reaper, the re-tag
// and the clean check take it by tag as they take the rest. Node 0 is never launched again here.
import { TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { relaunchPlan, UP_STATES, type LoadNodeRelaunch, type RelaunchDecision } from '../../protocol/load-node-relaunch';
import { resolveBuildId } from '../../tools/build-id';
import type { ProgressFn } from '../target';
import type { AwsClients } from './clients';
import { stampExpiry } from './expiry-stamp';
import type { FoundResource } from './find';
import { architectureOf } from './instance-architecture';
import { runNode } from './launch-node';
import { CREATED_TAG, EXPIRES_TAG, rigNames } from './names';
import { readAwsRecord, writeAwsRecord, type AwsRigRecord } from './record';
import { rigTags } from './tags';

/** A relaunch decided again once, when RunInstances answered with an instance already lost (a token reused after its instance died). */
const MAX_PASSES = 2;

/**
 * Launches again every load node 1..nodes-1 that is lost, and returns `found` with the replacements
 * in (and the lost instances out): what loadNodeHandles reads. Nothing lost: `found` as it is, no call.
 */
export async function relaunchLostLoadNodes(c: AwsClients, campaignId: string, nodes: number, found: readonly FoundResource[], onProgress: ProgressFn, now: () => Date = () => new Date()): Promise<FoundResource[]> {
  let current = [...found];
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const rec = readAwsRecord(campaignId);
    const plan = relaunchPlan({
      nodes,
      instances: current.filter((r) => r.kind === 'load-node').map((r) => ({ id: r.id, state: r.state, node: r.loadNode ?? 0 })),
      relaunches: rec?.relaunches ?? [],
      nodeToken: (i) => rigNames(campaignId).extraLoadNode(i).clientToken,
      suffix: rec?.loadLaunch?.tokenSuffix ?? '',
    });
    // An attempt died after its RunInstances and before it recorded the instance: found now, by its tags.
    for (const s of plan.settle) setInstance(campaignId, s.node, s.k, s.instanceId);
    if (!plan.relaunch.length) return current;
    if (!rec?.loadLaunch || !rec.bootstrap) {
      // A record written before relaunches were (or none on this host): loadNodeHandles names the lost nodes.
      onProgress(`load node(s) ${plan.relaunch.map((d) => d.node).join(', ')} lost, and ${rec ? 'the rig record holds no launch parameters (provisioned by an older rig)' : 'this host has no record of the rig'}: not launched again`);
      return current;
    }
    let lostAgain = false;
    for (const d of plan.relaunch) {
      const launched = await relaunchOne(c, campaignId, d, current, onProgress, now());
      current = [...current.filter((r) => !(r.kind === 'load-node' && r.loadNode === d.node && d.replaces.includes(r.id))), launched];
      if (!UP_STATES.includes(launched.state)) lostAgain = true;
    }
    if (!lostAgain) return current;
  }
  return current;
}

async function relaunchOne(c: AwsClients, campaignId: string, d: RelaunchDecision, found: readonly FoundResource[], onProgress: ProgressFn, now: Date): Promise<FoundResource> {
  const name = rigNames(campaignId).extraLoadNode(d.node).name;
  if (d.terminate.length) {
    onProgress(`load node ${d.node} (${name}): terminating ${d.terminate.join(', ')} (${found.filter((r) => d.terminate.includes(r.id)).map((r) => r.state).join(', ')}) before its replacement`);
    await c.ec2.send(new TerminateInstancesCommand({ InstanceIds: d.terminate }));
  }
  // The campaign's deadline as the nodes carry it now (the re-tag moves it on every node).
  const expiresAt = found.filter((r) => (r.kind === 'load-node' || r.kind === 'app-node') && r.expiresAt).map((r) => r.expiresAt!).sort().at(-1);
  if (!expiresAt) throw new Error(`load node ${d.node} (${name}) is lost and no node of the rig carries ${EXPIRES_TAG}: cannot give its replacement a deadline`);
  const entry: LoadNodeRelaunch = d.pending ?? {
    node: d.node,
    k: d.k,
    clientToken: d.clientToken,
    replaces: d.replaces,
    decidedAt: now.toISOString(),
    lifetimeMinutes: Math.max(1, Math.ceil((Date.parse(expiresAt) - now.getTime()) / 60_000)),
    buildId: (await resolveBuildId()).buildId,
  };
  // Before RunInstances: a retry after a crash from here on sends this token again.
  if (!d.pending) updateRecord(campaignId, (rec) => ({ ...rec, relaunches: [...(rec.relaunches ?? []), entry] }));
  const rec = readAwsRecord(campaignId)!;
  const launch = rec.loadLaunch!;
  const group = found.find((r) => r.kind === 'nodes-security-group');
  if (!group) throw new Error(`load node ${d.node} (${name}): the rig's nodes' security group is not found by its tags`);
  const image = rec.nodeImages?.[architectureOf(launch.instanceType)];
  if (!image) throw new Error(`load node ${d.node} (${name}): the rig record holds no AMI for ${launch.instanceType}`);
  onProgress(`load node ${d.node} (${name}) lost (${d.replaces.length ? found.filter((r) => d.replaces.includes(r.id)).map((r) => `${r.id} ${r.state}`).join(', ') : 'terminated'}): relaunch ${entry.k} with its own ClientToken ${entry.clientToken}${d.pending ? ' (recorded by an earlier attempt)' : ''}`);
  const tags = rigTags(campaignId, 'load-node', name, expiresAt, now).filter((t) => t.Key !== CREATED_TAG && t.Key !== EXPIRES_TAG);
  const launched = await runNode(c, {
    campaignId, region: rec.region, zone: rec.zone, kind: 'load-node', name, instanceType: launch.instanceType, clientToken: entry.clientToken,
    loadNode: d.node, tags, boot: rec.bootstrap!, docker: false, lifetimeMinutes: entry.lifetimeMinutes, buildId: entry.buildId,
    image, rootVolumeGb: launch.rootVolumeGb, securityGroupId: group.id,
  }, onProgress);
  setInstance(campaignId, entry.node, entry.k, launched.id);
  if (!UP_STATES.includes(launched.state)) {
    // The token's instance was launched by an attempt that died, and is lost already: the next pass gives the node a new token.
    onProgress(`load node ${d.node}: ${entry.clientToken} names ${launched.id}, ${launched.state}`);
  } else {
    await stampExpiry(c.ec2, launched.id, { expiresAt, createdAt: now.toISOString() }, onProgress);
  }
  return { kind: 'load-node', id: launched.id, campaignId, state: launched.state, expiresAt, size: launch.instanceType, loadNode: d.node, ...(launched.address ? { address: launched.address } : {}) };
}

/** Relaunch k of `node` is instance `instanceId` (a later loss of it gets a new token). */
function setInstance(campaignId: string, node: number, k: number, instanceId: string): void {
  updateRecord(campaignId, (r) => ({ ...r, relaunches: (r.relaunches ?? []).map((x) => (x.node === node && x.k === k ? { ...x, instanceId } : x)) }));
}

function updateRecord(campaignId: string, change: (rec: AwsRigRecord) => AwsRigRecord): void {
  const rec = readAwsRecord(campaignId);
  if (!rec) throw new Error(`no aws rig recorded for ${campaignId}`);
  writeAwsRecord(change(rec));
}

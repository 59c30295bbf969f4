// An AWS rig's load nodes (issue 37, `load.nodes: N` > 1). Provisioning launches them (provision.ts):
// the rig's own load node is node 0 (its worker already serves the data plane, awsDataQueue, and sends
// node 0's share from there), and N - 1 more instances of its type, each tagged with its node number
// (LOAD_NODE_TAG), booted from the load node's user data with its own queue (awsLoadNodeQueue) and its
// own name for the evidence it ships (load-n<i>). Teardown and the reaper take them by tag as they take
// any node. Here, what the campaign asks of them once the rig is up:
// - startLoadNodesAws (the control host): the nodes' handles, from AWS's own answer (each node running,
//   its private address). A node i >= 1 that is lost (terminated, shutting-down, stopped, stopping) is
//   launched again first (relaunch.ts: its own ClientToken, recorded before RunInstances; a stopped one
//   terminated before), which is what the campaign's step, run again after an attempt with a failed
//   node, asks for. Node 0, the data plane's, is never launched again: lost, it is an error naming it.
// - fetchLoadNodeEvidence (the data-plane node, before a merge): the stream and node.json a node
//   shipped to the bucket under its name, into this node's folder.
// - fixtureCustomersAws (a node beyond the data plane's, before its first load): the fixtures'
//   customers from the database, which the nodes' security group reaches.
//
// The clock (activities/node-repeat.ts checks it before any load). A node cannot read the control
// host's clock: the control host is wherever the operator runs it (often outside AWS, behind NAT),
// no rule lets a node reach it, and across the internet half a round trip alone (tens of ms) is past the
// instrument's bound (5 ms without a p99 limit), so every node would refuse. Every node reads the local
// Amazon Time Sync Service instead, over NTP at the link-local 169.254.169.123 (EC2 User Guide, "Set
// the time reference on your EC2 instance to use the local Amazon Time Sync Service": reachable from
// every instance, no VPC change, and AL2023 already keeps its clock with it through chrony). That is
// one reference for all the nodes, as the control host's clock is one for the local target's: each
// node within the bound of it, the offsets between nodes are bounded as there. Its NTP endpoint smears
// leap seconds, the same smear for every node. The workflow still chooses the start instant on its own
// clock: an error of the control host's clock moves every node's start alike (their start_late shows it)
// and never the nodes against each other. RIG_AWS_TIME_SYNC (host:port) names another server (a test's,
// honoured only under RIG_TESTING=1 and refused outside it: lib/tools/test-switch.ts); under the emulator
// without it, the nodes are this machine's processes on one clock: not measured.
import { GetObjectCommand } from '@aws-sdk/client-s3';
import path from 'node:path';
import { writeAtomic } from '../../evidence/atomic';
import { campaignDir } from '../../evidence/layout';
import { awsLoadNodeQueue } from '../../temporal/queues';
import { testOnlySwitch } from '../../tools/test-switch';
import { UP_STATES } from '../../protocol/load-node-relaunch';
import { readFixtureCustomers } from '../bringup/fixtures';
import type { LoadNodeHandle, ProgressFn } from '../target';
import { artifactsBucket, evidencePrefix, loadNodeShipName } from './evidence-sync';
import { awsDbUrls, withClients } from './data-plane';
import { emulatorMap } from './emulator-map';
import { isNamed } from './errors';
import { findRigResources, type FoundResource } from './find';
import { rigNames } from './names';
import { relaunchLostLoadNodes } from './relaunch';

/** The local Amazon Time Sync Service's NTP endpoint on every EC2 instance. */
export const AMAZON_TIME_SYNC = '169.254.169.123:123';
export const TIME_SYNC_ENV = 'RIG_AWS_TIME_SYNC';

/**
 * What the nodes read their clocks against (the header says why): null under the emulator unless a test
 * names a server. A server named outside the test suite is refused (TestSwitchRefusal): on real AWS it
 * would replace Amazon Time Sync as the one reference every node's clock is judged by.
 */
export function timeSyncUrl(env: NodeJS.ProcessEnv = process.env, emulated = emulatorMap(env) !== undefined): string | null {
  const named = testOnlySwitch(TIME_SYNC_ENV, `replaces Amazon Time Sync, ${AMAZON_TIME_SYNC}, as the clock every load node is held to`, env);
  if (named) return `ntp://${named}`;
  return emulated ? null : `ntp://${AMAZON_TIME_SYNC}`;
}

/** The handles of the campaign's `nodes` load nodes from what AWS lists of it (pure): throws naming each node that is not up. */
export function loadNodeHandles(campaignId: string, nodes: number, found: readonly FoundResource[], clockUrl: string | null): LoadNodeHandle[] {
  const n = rigNames(campaignId);
  const handles: LoadNodeHandle[] = [];
  const missing: string[] = [];
  for (let node = 0; node < nodes; node++) {
    // An up instance first: a replaced node's lost instance may still be listed beside its replacement (shutting-down).
    const mine = found.filter((r) => r.kind === 'load-node' && (node === 0 ? r.loadNode === undefined : r.loadNode === node));
    const inst = mine.find((r) => UP_STATES.includes(r.state)) ?? mine[0];
    const name = node === 0 ? n.loadNode : n.extraLoadNode(node).name;
    if (!inst || !UP_STATES.includes(inst.state)) missing.push(`node ${node} (${name}: ${inst ? inst.state : 'not launched'})`);
    else handles.push({ node, queue: awsLoadNodeQueue(campaignId, node), clockUrl, address: inst.address ?? '' });
  }
  if (missing.length) {
    throw new Error(`the rig has ${nodes - missing.length} of its ${nodes} load nodes up; not up: ${missing.join(', ')}. A node that stopped is lost (its repeat would be a merge of survivors): nodes 1 and up are launched again by this step, node 0 (the data plane's) is not`);
  }
  return handles;
}

/** The aws target's startLoadNodes: on the control host, right after provisioning (and the rig's own calibration); launches a lost node again (relaunch.ts), so safe to run twice. */
export async function startLoadNodesAws(campaignId: string, nodes: number, onProgress: ProgressFn = () => {}): Promise<LoadNodeHandle[]> {
  // The clock first: a refused RIG_AWS_TIME_SYNC launches nothing.
  const clockUrl = timeSyncUrl();
  const found = await withClients(campaignId, async (c) => relaunchLostLoadNodes(c, campaignId, nodes, await findRigResources(c, campaignId), onProgress));
  const handles = loadNodeHandles(campaignId, nodes, found, clockUrl);
  onProgress(`load nodes: ${handles.map((h) => `node ${h.node} at ${h.address || '?'} on ${h.queue}`).join('; ')}; clocks against ${handles[0]?.clockUrl ?? 'nothing (one machine)'}`);
  return handles;
}

/** The data-plane node's fetch of what load node `node` shipped (Target.nodes.fetchLoadNodeEvidence); a file it never shipped is skipped. */
export async function fetchLoadNodeEvidence(campaignId: string, node: number, rels: readonly string[], onProgress: ProgressFn = () => {}): Promise<number> {
  const bucket = artifactsBucket(campaignId);
  const from = `${evidencePrefix(campaignId)}${loadNodeShipName(node)}/`;
  let got = 0;
  await withClients(campaignId, async (c) => {
    for (const rel of rels) {
      if (rel.split('/').some((p) => p === '..' || p === '.' || p === '')) throw new Error(`not a campaign folder path: ${rel}`);
      try {
        const body = await (await c.s3.send(new GetObjectCommand({ Bucket: bucket, Key: `${from}${rel}` }))).Body!.transformToByteArray();
        writeAtomic(path.join(campaignDir(campaignId), ...rel.split('/')), body);
        got++;
      } catch (err) {
        if (!isNamed(err, 'NoSuchKey')) throw err;
      }
    }
  });
  onProgress(`load node ${node}: ${got} of ${rels.length} file(s) from s3://${bucket}/${from}`);
  return got;
}

/** A load node's fixtures' customers, from the database (Target.nodes.fixtureCustomers). */
export async function fixtureCustomersAws(campaignId: string): Promise<string[]> {
  return readFixtureCustomers((await awsDbUrls(campaignId)).ownerUrl);
}

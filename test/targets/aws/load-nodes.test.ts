// test-mode: unit
// An AWS rig's load nodes (issue 37, load.nodes N > 1), their pure parts: each node's queue, Name and
// RunInstances token its own; the handles from what AWS lists (a node not up is named); the user data
// of a node beyond the rig's own load node; the nodes' policy reading the shipped streams only then;
// the cost of N load nodes; the vCPU quota's arithmetic; and the clock: what the nodes read theirs
// against, and one SNTP exchange's arithmetic, over loopback against a server whose clock is skewed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { campaignLoadNodes } from '../../../lib/protocol/load-nodes';
import { answers, ntpExchange, ntpRequest, NTP_PACKET_BYTES, parseNtpReply, readNtpTimestamp, writeNtpTimestamp } from '../../../lib/protocol/ntp-time';
import { checkClock, ClockRefusal } from '../../../lib/protocol/clock-offset';
import { measureNtpOffset, startNtpServer } from '../../../lib/loadgen/ntp-clock';
import { nodeUserDataInput } from '../../../lib/targets/aws/bootstrap';
import { awsCampaignCost, campaignCost } from '../../../lib/targets/aws/campaign-cost';
import { rigCost } from '../../../lib/targets/aws/cost';
import type { FoundResource } from '../../../lib/targets/aws/find';
import { nodePolicyDocument } from '../../../lib/targets/aws/iam';
import { loadNodeHandles, timeSyncUrl } from '../../../lib/targets/aws/load-nodes';
import { rigNames } from '../../../lib/targets/aws/names';
import { awsPlan } from '../../../lib/targets/aws/plan';
import { quotaNodes, vcpuNeed } from '../../../lib/targets/aws/preflight-quota';
import { renderUserData } from '../../../lib/targets/aws/user-data';
import { awsAppQueue, awsDataQueue, awsLoadNodeQueue, hostOfQueue } from '../../../lib/temporal/queues';
import type { AwsSpec } from '../../../lib/protocol/aws-spec';
import { parseCampaignSpec } from '../../../lib/protocol/spec';
import { TestSwitchRefusal } from '../../../lib/tools/test-switch';
import { sampleBootstrap } from '../../harness/node-bootstrap';

const ID = 'aws-nodes-unit';
const exampleSpec = parseCampaignSpec(JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'examples', 'aws.json'), 'utf8')));
const exampleAws = exampleSpec.aws as AwsSpec;

test('each load node has a queue of its own, per campaign and node: node 0 is the data plane\'s, the others never a host\'s', () => {
  assert.equal(awsLoadNodeQueue(ID, 0), awsDataQueue(ID), "node 0 is the rig's own load node, on the data plane's queue");
  const queues = [0, 1, 2, 3].map((i) => awsLoadNodeQueue(ID, i));
  const other = [0, 1, 2, 3].map((i) => awsLoadNodeQueue(`${ID}-b`, i));
  assert.equal(new Set([...queues, ...other, awsAppQueue(ID)]).size, 9, JSON.stringify(queues));
  assert.match(awsLoadNodeQueue(ID, 2), /^rig-load-aws-nodes-unit-[0-9a-f]{8}-n2$/);
  for (const q of queues) assert.equal(hostOfQueue(q), undefined, `${q} reads as no host's`);
  assert.equal(awsLoadNodeQueue(ID, 1), awsLoadNodeQueue(ID, 1), 'from the campaign and node alone');
});

test('each load node has its own Name and RunInstances token, within EC2\'s 64 characters with the secret\'s suffix', () => {
  const long = `campaign-${'x'.repeat(120)}`;
  for (const id of [ID, long]) {
    const n = rigNames(id);
    const nodes = [1, 2, 63].map((i) => n.extraLoadNode(i));
    assert.equal(new Set([n.loadNode, ...nodes.map((x) => x.name)]).size, 4);
    assert.equal(new Set([n.loadClientToken, n.appClientToken, ...nodes.map((x) => x.clientToken)]).size, 5);
    for (const x of nodes) assert.ok(`${x.clientToken}-abcdef`.length <= 64, x.clientToken);
  }
});

test('the handles come from what AWS lists: node 0 the rig\'s load node, node i the one tagged i; a node not up is named', () => {
  const n = rigNames(ID);
  const inst = (state: string, address: string, loadNode?: number): FoundResource => ({ kind: 'load-node', id: `i-${address}`, campaignId: ID, state, address, ...(loadNode ? { loadNode } : {}) });
  const found = [inst('running', '10.0.0.3', 2), inst('running', '10.0.0.1'), inst('pending', '10.0.0.2', 1), { ...inst('running', '10.0.0.9'), kind: 'app-node' as const }];
  assert.deepEqual(loadNodeHandles(ID, 3, found, 'ntp://169.254.169.123:123'), [
    { node: 0, queue: awsDataQueue(ID), clockUrl: 'ntp://169.254.169.123:123', address: '10.0.0.1' },
    { node: 1, queue: awsLoadNodeQueue(ID, 1), clockUrl: 'ntp://169.254.169.123:123', address: '10.0.0.2' },
    { node: 2, queue: awsLoadNodeQueue(ID, 2), clockUrl: 'ntp://169.254.169.123:123', address: '10.0.0.3' },
  ]);
  assert.throws(() => loadNodeHandles(ID, 4, found, null), new RegExp(`3 of its 4 load nodes up; not up: node 3 \\(${n.extraLoadNode(3).name}: not launched\\)`));
  assert.throws(() => loadNodeHandles(ID, 3, [found[0], found[1], inst('stopped', '10.0.0.2', 1)], null), /not up: node 1 \(.*-load-n1: stopped\)/);
  // A node launched again (relaunch.ts): its lost instance may still be listed (shutting-down) before its replacement; the replacement is the handle.
  const replaced = [found[0], found[1], inst('shutting-down', '10.0.0.2', 1), inst('pending', '10.0.0.7', 1)];
  assert.equal(loadNodeHandles(ID, 3, replaced, null)[1].address, '10.0.0.7');
});

test('a load node beyond the rig\'s own boots as the load node does, on its own queue, host name and evidence name; the rig\'s own is unchanged', () => {
  const boot = sampleBootstrap(ID, 'aws-nodes-unit', 'b');
  const opts = { lifetimeMinutes: 180, buildId: 'build-1' };
  const own = renderUserData(nodeUserDataInput(ID, 'us-east-1', 'load', boot, opts));
  assert.equal(renderUserData(nodeUserDataInput(ID, 'us-east-1', 'load', boot, { ...opts, loadNode: undefined })), own);
  assert.match(own, /Environment=RIG_AWS_NODE=load\n/);
  assert.ok(own.includes(`--task-queue ${awsDataQueue(ID)}\n`));
  const extra = renderUserData(nodeUserDataInput(ID, 'us-east-1', 'load', boot, { ...opts, loadNode: 2 }));
  assert.ok(extra.includes(`ExecStart=/usr/bin/node-22 /opt/rig/app/bin/rig.cjs worker --task-queue ${awsLoadNodeQueue(ID, 2)}\n`), extra);
  assert.match(extra, /Environment=RIG_AWS_NODE=load-n2\n/);
  assert.ok(extra.includes(`Environment=RIG_HOST=${rigNames(ID).extraLoadNode(2).name}\n`));
  assert.match(extra, /postgresql16-contrib/, 'the same packages as the load node');
  // Everything else is the load node's: the same script with its names swapped.
  const swapped = extra.replaceAll(awsLoadNodeQueue(ID, 2), awsDataQueue(ID)).replaceAll(rigNames(ID).extraLoadNode(2).name, rigNames(ID).loadNode).replaceAll('load-n2', 'load');
  assert.equal(swapped, own);
});

test('the nodes read the campaign\'s shipped evidence only when the data plane merges other load nodes\' streams', () => {
  const p = (loadNodes?: number) => JSON.parse(nodePolicyDocument({
    bucket: 'b', objectKeys: ['k'], secretArns: ['arn:s'],
    rig: { region: 'us-east-1', account: '123456789012', dbInstance: 'db', evidencePrefix: `evidence/${ID}/`, ...(loadNodes ? { loadNodes } : {}) },
  })) as { Statement: Array<{ Sid: string; Action: string; Resource: string; Condition?: unknown }> };
  const sids = (d: ReturnType<typeof p>) => d.Statement.map((s) => s.Sid);
  assert.deepEqual(sids(p()), sids(p(1)));
  assert.ok(!sids(p()).includes('ReadTheLoadNodesEvidence'));
  const two = p(2).Statement;
  assert.deepEqual(two.find((s) => s.Sid === 'ReadTheLoadNodesEvidence'), { Sid: 'ReadTheLoadNodesEvidence', Effect: 'Allow', Action: 's3:GetObject', Resource: `arn:aws:s3:::b/evidence/${ID}/*` });
  assert.deepEqual(two.find((s) => s.Sid === 'KnowWhatTheLoadNodesShipped')?.Condition, { StringLike: { 's3:prefix': `evidence/${ID}/*` } });
});

test('the cost of N load nodes: N times the load type, and an address and a root volume each', () => {
  const now = new Date('2026-12-05T00:00:00Z');
  const one = rigCost(exampleAws, now);
  const three = rigCost(exampleAws, now, 3);
  const load = one.items.find((i) => i.what === 'load node c7g.2xlarge')!.perHour;
  assert.deepEqual(three.items.find((i) => i.what.includes('load'))!, { what: '3 load nodes c7g.2xlarge', perHour: 3 * load, from: 'table' });
  assert.equal(three.perHour, Math.round((one.perHour! + 2 * load) * 1e4) / 1e4);
  assert.equal(three.protocolPerHour, one.protocolPerHour, "the protocol's $/hr counts no load generator");
  const withPrice = rigCost({ ...exampleAws, prices: { loadNodePerHour: 0.5 } }, now, 2);
  assert.equal(withPrice.items.find((i) => i.what === '2 load nodes c7g.2xlarge')!.perHour, 1, 'the override is per node');

  const input = { aws: exampleAws, planMinutes: 60, watchdogMinutes: 120, monitoringIntervalS: 1, rootVolumeGb: 30 };
  const c1 = campaignCost(input);
  const c3 = campaignCost({ ...input, loadNodes: 3 });
  assert.deepEqual(c3.extras.slice(0, 2).map((i) => i.what), ['4 public IPv4 addresses (one per node)', '4 node root volumes (gp3 30 GB each)']);
  const perNode = (c: typeof c1, i: number) => c.extras[i].perHour / (c === c1 ? 2 : 4);
  assert.ok(Math.abs(perNode(c1, 0) - perNode(c3, 0)) < 1e-12 && Math.abs(perNode(c1, 1) - perNode(c3, 1)) < 1e-12);
  const extraPerNode = load + perNode(c1, 0) + perNode(c1, 1);
  assert.ok(Math.abs(c3.perHour! - (c1.perHour! + 2 * extraPerNode)) < 1e-3, `${c3.perHour} = ${c1.perHour} + 2 x ${extraPerNode}`);
  // A spec's: its configurations' load.nodes.
  assert.equal(campaignLoadNodes({ ...exampleSpec, load: { nodes: 2 } }), 2);
  assert.equal(awsCampaignCost({ ...exampleSpec, aws: exampleAws, load: { nodes: 2 } }).extras[0].what, '3 public IPv4 addresses (one per node)');
  assert.equal(awsCampaignCost({ ...exampleSpec, aws: exampleAws }).extras[0].what, '2 public IPv4 addresses (one per node)');
});

test('the vCPU quota counts the app node and every load node', () => {
  const vcpus = new Map([['c7g.2xlarge', 8], ['m7g.large', 2]]);
  assert.deepEqual(vcpuNeed(quotaNodes(exampleAws), vcpus), { need: 16, parts: 'app c7g.2xlarge 8 + load c7g.2xlarge 8' });
  assert.deepEqual(vcpuNeed(quotaNodes(exampleAws, 8), vcpus), { need: 72, parts: 'app c7g.2xlarge 8 + 8 load nodes c7g.2xlarge 8 each' });
  assert.deepEqual(vcpuNeed(quotaNodes({ ...exampleAws, app: { ...exampleAws.app, instanceType: 'm7g.large' } }, 3), vcpus).need, 2 + 3 * 8);
});

test('the dry run\'s plan lists every load node with its own name and queue', () => {
  const rows = awsPlan(ID, { database: exampleSpec.database, aws: exampleAws }, 3).filter((r) => r.kind === 'load-node');
  assert.deepEqual(rows.map((r) => r.name), [rigNames(ID).loadNode, rigNames(ID).extraLoadNode(1).name, rigNames(ID).extraLoadNode(2).name]);
  assert.ok(rows[2].detail.includes(`worker on ${awsLoadNodeQueue(ID, 2)}, load node 2 of 3`), rows[2].detail);
  assert.equal(awsPlan(ID, { database: exampleSpec.database, aws: exampleAws }).filter((r) => r.kind === 'load-node').length, 1);
});

test('the nodes read their clocks against Amazon Time Sync; a test names its own server; under the emulator, nothing', () => {
  assert.equal(timeSyncUrl({}, false), 'ntp://169.254.169.123:123');
  assert.equal(timeSyncUrl({}, true), null);
  assert.equal(timeSyncUrl({ RIG_AWS_TIME_SYNC: '127.0.0.1:4123', RIG_TESTING: '1' }, true), 'ntp://127.0.0.1:4123');
  assert.equal(timeSyncUrl({ RIG_AWS_TIME_SYNC: '127.0.0.1:4123', RIG_TESTING: '1' }, false), 'ntp://127.0.0.1:4123');
});

test('RIG_AWS_TIME_SYNC outside the test suite is refused, naming it, on real AWS and under the emulator alike (issue 47, item 9)', () => {
  for (const emulated of [false, true]) {
    for (const testing of [undefined, '0', 'yes']) {
      assert.throws(
        () => timeSyncUrl({ RIG_AWS_TIME_SYNC: '10.0.0.5:123', ...(testing === undefined ? {} : { RIG_TESTING: testing }) }, emulated),
        (err: Error) => {
          assert.ok(err instanceof TestSwitchRefusal, String(err));
          assert.equal(err.variable, 'RIG_AWS_TIME_SYNC');
          assert.equal(
            err.message,
            'RIG_AWS_TIME_SYNC=10.0.0.5:123 is a test-only switch (it replaces Amazon Time Sync, 169.254.169.123:123, as the clock every load node is held to), honoured only when RIG_TESTING=1 (the test suite sets it): unset RIG_AWS_TIME_SYNC',
          );
          return true;
        },
      );
    }
  }
  // Unset (or empty), nothing is refused: Amazon Time Sync on AWS.
  assert.equal(timeSyncUrl({ RIG_AWS_TIME_SYNC: '' }, false), 'ntp://169.254.169.123:123');
});

test('an SNTP exchange: timestamps round-trip, the offset is node minus server, a server that cannot vouch for its time is refused', () => {
  const v = new DataView(new ArrayBuffer(8));
  for (const ms of [0, 1_765_000_000_123.456, 2_200_000_000_000.5]) {
    writeNtpTimestamp(v, 0, ms);
    assert.ok(Math.abs(readNtpTimestamp(v, 0) - ms) < 1e-3, `${ms}`);
  }
  const request = ntpRequest(1_000_000);
  const reply = (first: number, stratum: number, rx: number, tx: number, rootDelayS = 0.002, rootDispS = 0.001) => {
    const b = new Uint8Array(NTP_PACKET_BYTES);
    const d = new DataView(b.buffer);
    d.setUint8(0, first);
    d.setUint8(1, stratum);
    d.setInt32(4, rootDelayS * 65536);
    d.setUint32(8, rootDispS * 65536);
    b.set(request.slice(40, 48), 24);
    writeNtpTimestamp(d, 32, rx);
    writeNtpTimestamp(d, 40, tx);
    return parseNtpReply(b);
  };
  // Sent at 1,000,000, back at 1,000,010 on this node; the server (30 ms ahead) read 1,000,034 and answered at 1,000,036.
  const ok = reply(0x24, 3, 1_000_034, 1_000_036);
  assert.ok(answers(request, ok));
  const e = ntpExchange(1_000_000, 1_000_010, ok);
  // Half the root delay (2 ms) and the root dispersion (1 ms), as 16.16 fixed point carries them.
  assert.ok(Math.abs(e.serverErrorMs - 2) < 0.05, `${e.serverErrorMs}`);
  assert.ok(Math.abs((e.sample.sentMs + e.sample.receivedMs) / 2 - e.sample.controlMs + 30) < 1e-3, 'this node is 30 ms behind the server');
  assert.throws(() => ntpExchange(1_000_000, 1_000_010, reply(0x24, 0, 1, 2)), /stratum 0/);
  assert.throws(() => ntpExchange(1_000_000, 1_000_010, reply(0xe4, 3, 1, 2)), /not synchronised/);
  assert.throws(() => ntpExchange(1_000_000, 1_000_010, reply(0x23, 3, 1, 2)), /mode 3/);
  assert.ok(!answers(ntpRequest(2_000_000), ok), 'a reply to another request is not this one\'s');
});

test('over loopback against a server 40 ms ahead: the reading is -40 ms within its uncertainty, and a bound of 5 ms refuses the node naming the server', async () => {
  const server = await startNtpServer({ skewMs: 40 });
  try {
    const r = await measureNtpOffset(server.url, 4);
    assert.equal(r.exchanges, 4);
    assert.equal(r.reference, server.url);
    assert.ok(Math.abs(r.offset_ms + 40) <= r.uncertainty_ms + 1e-3, JSON.stringify(r));
    assert.throws(() => checkClock(1, r, 5), (err: unknown) => err instanceof ClockRefusal && err.message.includes(`off the time server's (${server.url})`) && err.message.startsWith('load node 1'));
  } finally {
    await server.close();
  }
});

// A lost AWS load node is launched again by the load-nodes step (issue 37; lib/targets/aws/relaunch.ts),
// against a real moto 5.2.5 with IAM enforced, as the rig's user holding nothing but the documented
// policy (docs/aws-iam-policy-*.json): a rig of 3 load nodes; node 1 terminated and node 2 stopped
// between two runs of the step; the second run launches exactly two replacements, each with a
// ClientToken of its own (neither provisioning's), recorded in the rig record, node 2's stopped
// instance terminated first; a third run launches nothing; teardown terminates every node by tag.
//
// The crash in between: a first try of the second run as a user whose policy lacks ec2:RunInstances
// fails at node 1's RunInstances, after its relaunch entry was written. The run that follows sends
// THAT token (not a new one) and adds no entry: on real EC2, one instance for it however often the
// step is retried (moto 5.2.5 reports the token an instance was launched with but never dedupes on it,
// so what is checked is the token sent: the record's, and DescribeInstances' ClientToken).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DescribeInstancesCommand, StopInstancesCommand, TerminateInstancesCommand, type Instance } from '@aws-sdk/client-ec2';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { readAwsRecord } from '../../../lib/targets/aws/record';
import { CAMPAIGN_TAG, CREATED_TAG, LOAD_NODE_TAG, RESOURCE_TAG, rigNames } from '../../../lib/targets/aws/names';
import { teardownAws } from '../../../lib/targets/aws/teardown';
import { targetFor } from '../../../lib/targets/registry';
import { exampleAws as aws, exampleSpec as spec, useMoto } from '../../harness/aws-env';
import { adminUser, asUser, documentedPolicies, enforce, userWithPolicies, withoutAction, type Keys } from '../../harness/iam-enforced';

const ID = 'aws-relaunch-1';
let rigKeys: Keys;
let noRunKeys: Keys;
let admin: Keys;

const env = useMoto({
  prefix: 'rig-aws-relaunch-',
  afterStart: async () => {
    await env.withClients(async (c) => {
      rigKeys = await userWithPolicies(c, 'rig-runner', documentedPolicies());
      noRunKeys = await userWithPolicies(c, 'rig-runner-no-run', withoutAction(documentedPolicies(), 'ec2:RunInstances'));
      admin = await adminUser(c);
    });
    await enforce(env.endpoint);
  },
});

/** A package stand-in: the nodes never boot under moto, and packing the project is not what is tested. */
const PKG = { tarball: Buffer.from('pkg'), lock: Buffer.from('{}'), sha256: 'a'.repeat(64) };
const params = () => ({ db: { ...spec.database }, aws: { spec: aws, expiresAt: new Date(Date.now() + spec.watchdogMinutes * 60_000).toISOString(), loadNodes: 3 } });
const step = () => targetFor('aws').startLoadNodes!(ID, 3, () => {});

const tag = (i: Instance, key: string) => i.Tags?.find((t) => t.Key === key)?.Value;
/** Every instance of the campaign, terminated ones too, as the admin sees them. */
const instances = () => asUser(admin, () => env.withClients(async (c) =>
  ((await c.ec2.send(new DescribeInstancesCommand({ Filters: [{ Name: `tag:${CAMPAIGN_TAG}`, Values: [ID] }] }))).Reservations ?? []).flatMap((r) => r.Instances ?? []),
));
const loadNodes = async (node: number) => (await instances()).filter((i) => tag(i, RESOURCE_TAG) === 'load-node' && (tag(i, LOAD_NODE_TAG) ?? '0') === String(node));
/** A node's tags but its creation time (which a replacement has its own of). */
const lasting = (i: Instance) => (i.Tags ?? []).filter((t) => t.Key !== CREATED_TAG).map((t) => `${t.Key}=${t.Value}`).sort();

test('node 1 terminated and node 2 stopped: the step launches two replacements with tokens of their own, recorded before the launch; again, nothing; teardown takes all', async () => {
  await asUser(rigKeys, () => provisionAws(ID, params(), () => {}, { pkg: PKG }));
  const first = await asUser(rigKeys, step);
  assert.deepEqual(first.map((h) => h.node), [0, 1, 2]);
  assert.equal(readAwsRecord(ID)!.relaunches, undefined, 'nothing lost, nothing launched again');
  const [n1] = await loadNodes(1);
  const [n2] = await loadNodes(2);
  const [n0] = await loadNodes(0);

  await asUser(admin, () => env.withClients(async (c) => {
    await c.ec2.send(new TerminateInstancesCommand({ InstanceIds: [n1.InstanceId!] }));
    await c.ec2.send(new StopInstancesCommand({ InstanceIds: [n2.InstanceId!] }));
  }));
  assert.deepEqual([(await loadNodes(1))[0].State?.Name, (await loadNodes(2))[0].State?.Name], ['terminated', 'stopped']);

  // The crash: node 1's entry is written, its RunInstances refused.
  await assert.rejects(asUser(noRunKeys, step), /not authorized to perform:? ec2:RunInstances/);
  const written = readAwsRecord(ID)!.relaunches!;
  assert.deepEqual(written.map((r) => [r.node, r.k, r.instanceId]), [[1, 1, undefined]], 'node 1\'s relaunch recorded before its RunInstances');
  assert.equal((await loadNodes(1)).length, 1, 'nothing launched by the refused try');

  const second = await asUser(rigKeys, step);
  const rec = readAwsRecord(ID)!;
  const suffix = rec.loadLaunch!.tokenSuffix;
  assert.deepEqual(rec.relaunches!.map((r) => [r.node, r.k]), [[1, 1], [2, 1]], 'one relaunch each, node 1\'s the entry the refused try wrote');
  const [r1, r2] = rec.relaunches!;
  assert.equal(r1.clientToken, written[0].clientToken, 'the retry sent the recorded token');
  assert.equal(r1.decidedAt, written[0].decidedAt);
  assert.deepEqual([r1.clientToken, r2.clientToken], [`${rigNames(ID).extraLoadNode(1).clientToken}-r1-${suffix}`, `${rigNames(ID).extraLoadNode(2).clientToken}-r1-${suffix}`]);
  for (const [i, r] of [[1, r1], [2, r2]] as const) assert.notEqual(r.clientToken, `${rigNames(ID).extraLoadNode(i).clientToken}-${suffix}`, `node ${i}'s relaunch does not reuse provisioning's token`);
  assert.deepEqual(r2.replaces, [n2.InstanceId], 'node 2 replaces its stopped instance');

  // Exactly two replacements, up, with the lost nodes' tags; node 2's stopped instance terminated; node 0 untouched.
  const after1 = await loadNodes(1);
  const after2 = await loadNodes(2);
  assert.equal(after1.length + after2.length, 4, 'two instances launched');
  const new1 = after1.find((i) => i.InstanceId !== n1.InstanceId)!;
  const new2 = after2.find((i) => i.InstanceId !== n2.InstanceId)!;
  assert.deepEqual([new1.InstanceId, new2.InstanceId], [r1.instanceId, r2.instanceId], 'the record names the replacements');
  assert.deepEqual([new1.State?.Name, new2.State?.Name].map((s) => ['pending', 'running'].includes(s!)), [true, true]);
  assert.equal(after2.find((i) => i.InstanceId === n2.InstanceId)!.State?.Name, 'terminated', 'the stopped node terminated, not left to bill');
  assert.deepEqual(lasting(new1), lasting(n1));
  assert.deepEqual(lasting(new2), lasting(n2));
  assert.ok(tag(new1, CREATED_TAG), 'stamped with its own creation time');
  assert.deepEqual([new1.InstanceType, new1.ImageId], [n1.InstanceType, n1.ImageId]);
  // The token each was launched with, as DescribeInstances reports it (moto keeps it, though it does not dedupe on it): the recorded ones, not provisioning's.
  assert.deepEqual([new1.ClientToken, new2.ClientToken], [r1.clientToken, r2.clientToken]);
  assert.deepEqual([n1.ClientToken, n2.ClientToken], [1, 2].map((i) => `${rigNames(ID).extraLoadNode(i).clientToken}-${suffix}`));
  assert.deepEqual((await loadNodes(0)).map((i) => [i.InstanceId, i.State?.Name]), [[n0.InstanceId, 'running']]);
  assert.deepEqual(second.map((h) => [h.node, h.address]), [[0, first[0].address], [1, new1.PrivateIpAddress], [2, new2.PrivateIpAddress]]);

  // Again: nothing lost, nothing launched, the record as it was.
  const third = await asUser(rigKeys, step);
  assert.deepEqual(third, second);
  assert.equal((await instances()).length, 1 + 3 + 2, 'the app node, the three load nodes, the two replacements');
  assert.deepEqual(readAwsRecord(ID)!.relaunches, rec.relaunches);

  // Teardown by tag: the replacements with the rest.
  const down = await asUser(rigKeys, () => teardownAws(ID));
  assert.deepEqual(down.removed.filter((r) => r.startsWith('load-node ')).length, 3, down.removed.join(', '));
  assert.ok(down.removed.some((r) => r.includes(r1.instanceId!)) && down.removed.some((r) => r.includes(r2.instanceId!)), down.removed.join(', '));
  assert.deepEqual((await instances()).map((i) => i.State?.Name), Array(6).fill('terminated'));
  assert.deepEqual(await asUser(admin, () => env.rigResources(ID)), []);
});

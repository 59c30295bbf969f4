// `rig check --target aws --reap` against a real moto 5.2.5: two campaigns provisioned, one expired
// (rig:expires an hour ago) and one not. The reap removes every resource of the expired one (and an
// expired rig-* DB subnet group of it) and leaves the unexpired one, a resource with no readable
// rig:expires, and resources that are not the rig's wholly alone; a tagging-API hit whose instance is
// already terminated (moto, like AWS, keeps listing it) is skipped as gone. Exit codes: 0 nothing
// expired left (and again on a second run), 69 COULD NOT LOOK on a closed port (client/exit-codes.ts
// UNREACHABLE), 1 (something expired not reaped) through the confirm step's unit tests, since moto's
// tagging API never lags its services.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CreateSecurityGroupCommand, DescribeSecurityGroupsCommand, DescribeSubnetsCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateDBParameterGroupCommand, CreateDBSubnetGroupCommand, DescribeDBParameterGroupsCommand } from '@aws-sdk/client-rds';
import { findRigResources } from '../../../lib/targets/aws/find';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { confirmHit, parseRigArn, type ReapResult } from '../../../lib/targets/aws/reap';
import { reapExitCode } from '../../../client/commands/check';
import { teardownAws } from '../../../lib/targets/aws/teardown';
import { freePort } from '../../../lib/tools/free-port';
import { exampleAws as aws, exampleSpec as spec, useMoto } from '../../harness/aws-env';
import { rig } from '../../harness/rig-cli';
import { timeSkippingEnv } from '../../harness/temporal';

const env = useMoto({ prefix: 'rig-aws-reap-' });
const { cliEnv, withClients } = env;
const resources = (campaignId: string) =>
  withClients(async (c) => (await findRigResources(c, campaignId)).map((r) => `${r.kind} ${r.id} ${r.expiresAt}`).sort());

test('--reap removes every resource of the expired campaign and nothing else; exit 0, again 0; a closed port is exit 69', { timeout: 180_000 }, async () => {
  const past = new Date(Date.now() - 60 * 60_000).toISOString();
  const future = new Date(Date.now() + 60 * 60_000).toISOString();
  // Two campaigns' rigs, provisioned side by side (each finds its own by its tag).
  await Promise.all([
    provisionAws('reap-old', { db: { ...spec.database }, aws: { spec: aws, expiresAt: past } }),
    provisionAws('reap-new', { db: { ...spec.database }, aws: { spec: aws, expiresAt: future } }),
  ]);
  const expiredTags = (campaign?: string, expires: string | undefined = past) => [
    ...(campaign ? [{ Key: 'rig:campaign', Value: campaign }] : []),
    ...(expires ? [{ Key: 'rig:expires', Value: expires }] : []),
  ];
  // Beside them: a rig-* DB subnet group of the expired campaign (the tagging API does not list it);
  // an expired-looking security group and parameter group that are not the rig's (no rig:campaign);
  // a rig security group with no rig:expires at all.
  const others = await withClients(async (c) => {
    const subnets = (await c.ec2.send(new DescribeSubnetsCommand({}))).Subnets!.map((s) => s.SubnetId!);
    await c.rds.send(new CreateDBSubnetGroupCommand({ DBSubnetGroupName: 'rig-reap-old-sn', DBSubnetGroupDescription: 'x', SubnetIds: subnets.slice(0, 2), Tags: [...expiredTags('reap-old'), { Key: 'rig:created', Value: new Date().toISOString() }] }));
    await c.rds.send(new CreateDBParameterGroupCommand({ DBParameterGroupName: 'rig-not-ours-pg', DBParameterGroupFamily: 'postgres16', Description: 'x', Tags: expiredTags() }));
    const notOurs = (await c.ec2.send(new CreateSecurityGroupCommand({ GroupName: 'not-ours', Description: 'x', TagSpecifications: [{ ResourceType: 'security-group', Tags: expiredTags() }] }))).GroupId!;
    const noExpiry = (await c.ec2.send(new CreateSecurityGroupCommand({ GroupName: 'rig-no-expiry', Description: 'x', TagSpecifications: [{ ResourceType: 'security-group', Tags: expiredTags('reap-odd', '') }] }))).GroupId!;
    return { notOurs, noExpiry };
  });
  // The expired campaign's load node is already terminated: the tagging API still lists it.
  const oldBefore = await withClients((c) => findRigResources(c, 'reap-old'));
  const load = oldBefore.find((r) => r.kind === 'load-node')!.id;
  await withClients((c) => c.ec2.send(new TerminateInstancesCommand({ InstanceIds: [load] })));
  const newBefore = await resources('reap-new');
  assert.equal(newBefore.length, 12);
  assert.equal(
    (await resources('reap-old')).length,
    12,
    'app node, db, parameter and subnet groups, two security groups (the load node is terminated), and what the nodes boot with: bucket, two secrets, two roles, instance profile',
  );

  // No Temporal answers (a closed port): a resource without rig:expires is then skipped, saying why.
  const noTemporal = { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`, RIG_TEMPORAL_CONNECT_TIMEOUT_MS: '2000' };
  // Beside the reap, the two runs that reach no rig: a closed AWS endpoint and the local target (a usage error).
  const closed = await freePort();
  const [r, down, local] = await Promise.all([
    rig(['check', '--target', 'aws', '--reap'], cliEnv(noTemporal)),
    rig(['check', '--target', 'aws', '--reap'], cliEnv({ ...noTemporal, RIG_AWS_ENDPOINT: `http://127.0.0.1:${closed}` })),
    rig(['check', '--target', 'local', '--reap'], cliEnv()),
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const out = r.stdout;
  assert.match(out, /^REAPED: 12 reaped, 0 expired not reaped, 2 skipped, 12 unexpired left alone \(looked at: the tagging API for ec2:instance, ec2:security-group, rds:db/m);
  for (const kind of ['app-node', 'db-instance', 'db-parameter-group', 'db-subnet-group', 'db-security-group', 'nodes-security-group', 'artifacts-bucket', 'temporal-secret', 'rig-secret', 'node-role', 'node-instance-profile', 'monitoring-role']) {
    assert.match(out, new RegExp(`^  reaped +${kind} +campaign reap-old +\\d+s old +expires ${past.replace(/\./g, '\\.')}  \\S+$`, 'm'), `${kind} reaped with campaign, age and expiry`);
  }
  assert.match(out, new RegExp(`^  skipped +load-node +campaign reap-old .* ${load}: gone: terminated`, 'm'));
  assert.match(out, new RegExp(`^  skipped +nodes-security-group +campaign reap-odd .* ${others.noExpiry}: no readable rig:expires tag \\(null\\): its campaign's state is unknown \\(Temporal not asked or not answering\\); never reaped then`, 'm'));
  assert.doesNotMatch(out, /reap-new|not-ours/, 'the unexpired campaign and what is not the rig\'s are not even listed');

  assert.deepEqual(await resources('reap-old'), [], 'nothing of the expired campaign is left');
  assert.deepEqual(await resources('reap-new'), newBefore, 'the unexpired campaign wholly alone, expiries unchanged');
  await withClients(async (c) => {
    const groups = (await c.ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [others.notOurs, others.noExpiry] }))).SecurityGroups ?? [];
    assert.equal(groups.length, 2, 'the security group that is not the rig\'s and the one with no expiry are still there');
    const pgs = (await c.rds.send(new DescribeDBParameterGroupsCommand({ DBParameterGroupName: 'rig-not-ours-pg' }))).DBParameterGroups ?? [];
    assert.equal(pgs.length, 1, 'a rig-* parameter group without rig:campaign is not the rig\'s');
  });

  const again = await rig(['check', '--target', 'aws', '--reap', '--json'], cliEnv(noTemporal));
  assert.equal(again.code, 0, again.stdout + again.stderr);
  const j = JSON.parse(again.stdout) as ReapResult;
  assert.deepEqual([j.status, j.reaped.length, j.notReaped.length, j.unexpired], ['done', 0, 0, 12]);
  // Both of its nodes are terminated now, and the tagging API (moto's as AWS's) still lists them.
  assert.deepEqual(j.skipped.map((s) => `${s.kind} ${s.why.split(':')[0]}`).sort(), ['app-node gone', 'load-node gone', 'nodes-security-group no readable rig'], 'the terminated nodes and the group with no expiry, again');

  assert.equal(down.code, 69, down.stdout + down.stderr);
  assert.match(down.stderr, /^COULD NOT LOOK: us-east-1 at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/m);
  assert.equal(local.code, 2, 'a usage error');
  assert.match(local.stderr, /--reap is for --target aws/);

  await teardownAws('reap-new');
  assert.deepEqual(await resources('reap-new'), []);
});

test('the confirm step: reaped only when the service still has the hit with the same campaign and expiry', () => {
  const now = new Date('2026-06-01T12:00:00Z');
  const hit = { campaignId: 'c1', expiresAt: '2026-06-01T10:00:00.000Z' };
  const tags = (campaign: string | undefined, expires: string | undefined) => [
    ...(campaign ? [{ Key: 'rig:campaign', Value: campaign }] : []),
    ...(expires ? [{ Key: 'rig:expires', Value: expires }] : []),
  ];
  assert.deepEqual(confirmHit(hit, { tags: tags('c1', hit.expiresAt) }, now), { ok: true });
  assert.deepEqual(confirmHit(hit, { gone: 'DBInstanceNotFound' }, now), { ok: false, why: 'gone: DBInstanceNotFound', stillExpired: false });
  // The watchdog re-tagged it since the index was read: later expiry, not reaped, not a failure.
  const moved = confirmHit(hit, { tags: tags('c1', '2026-06-01T14:00:00.000Z') }, now);
  assert.deepEqual(moved, {
    ok: false,
    why: 'tags differ: the tagging API said rig:campaign=c1 rig:expires=2026-06-01T10:00:00.000Z, the service says rig:campaign=c1 rig:expires=2026-06-01T14:00:00.000Z',
    stillExpired: false,
  });
  // Different but still expired there: not reaped on the index's word, and counted (exit 1: run again).
  const stale = confirmHit(hit, { tags: tags('c1', '2026-06-01T11:00:00.000Z') }, now);
  assert.equal(stale.ok, false);
  assert.equal(!stale.ok && stale.stillExpired, true);
  assert.match(!stale.ok ? stale.why : '', /still expired there: run --reap again$/);
  // The campaign tag is gone there: not the rig's any more.
  assert.deepEqual(confirmHit(hit, { tags: tags(undefined, hit.expiresAt) }, now), {
    ok: false,
    why: 'tags differ: the tagging API said rig:campaign=c1 rig:expires=2026-06-01T10:00:00.000Z, the service says rig:campaign=(none) rig:expires=2026-06-01T10:00:00.000Z',
    stillExpired: false,
  });

  const base: ReapResult = { status: 'done', reaped: [], skipped: [], notReaped: [], unexpired: 0, looked: [] };
  assert.equal(reapExitCode(base), 0);
  assert.equal(reapExitCode({ ...base, status: 'incomplete', notReaped: [{ kind: 'db-instance', id: 'x', campaignId: 'c1', why: 'not reaped: AccessDenied' }] }), 1);
  assert.equal(reapExitCode({ ...base, status: 'could-not-look', reason: 'x' }), 69);

  assert.deepEqual(parseRigArn('arn:aws:ec2:us-east-1:123456789012:instance/i-0abc'), { service: 'ec2', type: 'instance', id: 'i-0abc' });
  assert.deepEqual(parseRigArn('arn:aws:ec2:us-east-1:123456789012:security-group/sg-1'), { service: 'ec2', type: 'security-group', id: 'sg-1' });
  assert.deepEqual(parseRigArn('arn:aws:rds:us-east-1:123456789012:db:rig-x'), { service: 'rds', type: 'db', id: 'rig-x' });
  assert.equal(parseRigArn('arn:aws:ec2:us-east-1:123456789012:volume/vol-1'), undefined);
});

test('a rig resource without rig:expires is reaped once its campaign\'s workflow is closed, and left while it runs (Temporal asked by the CLI)', { timeout: 120_000 }, async () => {
  const temporal = await timeSkippingEnv();
  try {
    // Two campaigns' workflows: one closed (terminated), one running (no worker takes it: it stays open).
    for (const id of ['reap-closed', 'reap-running']) await temporal.client.workflow.start('benchCampaign', { taskQueue: 'rig-nobody', workflowId: id, args: [{}] });
    await temporal.client.workflow.getHandle('reap-closed').terminate('test: the campaign is over');
    // Each with a rig security group whose expiry stamp never landed.
    const groups = await withClients(async (c) => {
      const make = async (campaign: string) =>
        (await c.ec2.send(new CreateSecurityGroupCommand({ GroupName: `rig-${campaign}-unstamped`, Description: 'x', TagSpecifications: [{ ResourceType: 'security-group', Tags: [{ Key: 'rig:campaign', Value: campaign }, { Key: 'rig:resource', Value: 'nodes-security-group' }] }] }))).GroupId!;
      return { closed: await make('reap-closed'), running: await make('reap-running') };
    });
    const r = await rig(['check', '--target', 'aws', '--reap', '--json'], cliEnv({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default' }));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const j = JSON.parse(r.stdout) as ReapResult;
    const reaped = j.reaped.find((e) => e.id === groups.closed);
    assert.match(reaped?.why ?? '', /^no readable rig:expires tag \(null\), and its campaign's workflow is closed \(TERMINATED\)$/);
    const left = j.skipped.find((e) => e.id === groups.running);
    assert.match(left?.why ?? '', /its campaign's workflow is RUNNING, not closed; never reaped then/);
    const still = await withClients(async (c) => ((await c.ec2.send(new DescribeSecurityGroupsCommand({ Filters: [{ Name: 'tag:rig:campaign', Values: ['reap-closed', 'reap-running'] }] }))).SecurityGroups ?? []).map((g) => g.GroupId));
    assert.deepEqual(still, [groups.running]);
  } finally {
    await temporal.teardown();
  }
});

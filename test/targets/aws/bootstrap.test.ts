// What the AWS nodes boot with, against a real moto 5.2.5: provisioning makes the artifacts bucket
// with the package (tarball + lock under one sha256 key), the Temporal secret (holding this process's
// TEMPORAL_* connection, which appears nowhere else: not in the result, the record, the progress
// lines or the user data), the nodes' role with a policy naming only those objects and the two
// secrets, the instance profile, and the Enhanced Monitoring role the database names; the instances
// carry the profile and user data that decodes to the render. A second provision uploads nothing and
// keeps the same secret. `rig check` is dirty (1) listing the new kinds, teardown removes every one
// of them, and the check is clean (0) after. A rig-shaped bucket left untagged is still reported.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { DescribeInstanceAttributeCommand, DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { GetInstanceProfileCommand, GetRoleCommand, GetRolePolicyCommand, ListAttachedRolePoliciesCommand } from '@aws-sdk/client-iam';
import { DescribeDBInstancesCommand } from '@aws-sdk/client-rds';
import { CreateBucketCommand, DeleteBucketCommand, GetBucketTaggingCommand, HeadBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DescribeSecretCommand, GetSecretValueCommand, ListSecretVersionIdsCommand } from '@aws-sdk/client-secrets-manager';
import { nodeUserDataInput } from '../../../lib/targets/aws/bootstrap';
import { awsClients, type AwsClients } from '../../../lib/targets/aws/clients';
import { ENHANCED_MONITORING_POLICY_ARN, NODE_POLICY_NAME } from '../../../lib/targets/aws/iam';
import { rigNames } from '../../../lib/targets/aws/names';
import { rigSecretName } from '../../../lib/targets/aws/secrets';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { readAwsRecord } from '../../../lib/targets/aws/record';
import { teardownAws } from '../../../lib/targets/aws/teardown';
import { renderUserData } from '../../../lib/targets/aws/user-data';
import { resolveBuildId } from '../../../lib/tools/build-id';
import { awsAppQueue, awsDataQueue } from '../../../lib/temporal/queues';
import { exampleAws as aws, exampleSpec as spec, useMoto } from '../../harness/aws-env';
import { rig } from '../../harness/rig-cli';

const CAMPAIGN = 'aws-boot-1';
const SENTINEL = 'SENTINEL-TEMPORAL-KEY-41c9';

const TEMPORAL = { TEMPORAL_ADDRESS: 'temporal.example.internal:7233', TEMPORAL_NAMESPACE: 'rig-boot', TEMPORAL_API_KEY: SENTINEL };

let c: AwsClients;
const env = useMoto({ prefix: 'rig-aws-boot-', extraEnv: TEMPORAL, afterStart: () => (c = awsClients(aws.region)), beforeStop: () => c?.destroy() });

const cliEnv = env.cliEnv;
const params = () => ({ db: { ...spec.database }, aws: { spec: aws, expiresAt: new Date(Date.now() + spec.watchdogMinutes * 60_000).toISOString(), lifetimeMinutes: spec.watchdogMinutes } });
const n = rigNames(CAMPAIGN);
const gone = async (call: () => Promise<unknown>) =>
  call().then(
    () => false,
    () => true,
  );

test('provision makes the bucket + package, secret, roles and profile; the nodes boot from them; a retry makes nothing new; teardown removes them all', async () => {
  const lines: string[] = [];
  const first = await provisionAws(CAMPAIGN, params(), (l) => lines.push(l));
  const rec = readAwsRecord(CAMPAIGN)!;
  const boot = rec.bootstrap!;
  assert.ok(boot, 'the record keeps what the nodes were given');
  assert.equal(boot.dataQueue, awsDataQueue(CAMPAIGN));
  assert.equal(boot.appQueue, awsAppQueue(CAMPAIGN));

  // The secret holds the connection; nothing else the rig keeps or says does.
  for (const [what, text] of [['provision result', JSON.stringify(first)], ['record', fs.readFileSync(path.join(env.state, 'aws-rigs', `${CAMPAIGN}.json`), 'utf8')], ['progress', lines.join('\n')]]) {
    assert.doesNotMatch(text, new RegExp(SENTINEL), `${what} holds no Temporal key`);
  }
  const secret = JSON.parse((await c.secrets.send(new GetSecretValueCommand({ SecretId: n.temporalSecret }))).SecretString!);
  assert.deepEqual(secret, { address: TEMPORAL.TEMPORAL_ADDRESS, namespace: TEMPORAL.TEMPORAL_NAMESPACE, apiKey: SENTINEL, tls: true });
  const described = await c.secrets.send(new DescribeSecretCommand({ SecretId: n.temporalSecret }));
  assert.equal(described.ARN, boot.temporalSecretArn);
  assert.ok(described.Tags?.some((t) => t.Key === 'rig:campaign' && t.Value === CAMPAIGN));

  // The bucket: tagged, holding exactly the tarball and the lock under the sha256 key.
  assert.match(boot.bucket, /^rig-aws-boot-1-[0-9a-f]{8}-\d{12}$/);
  const tagSet = (await c.s3.send(new GetBucketTaggingCommand({ Bucket: boot.bucket }))).TagSet ?? [];
  assert.deepEqual(tagSet.filter((t) => t.Key?.startsWith('rig:')).map((t) => t.Key).sort(), ['rig:campaign', 'rig:created', 'rig:expires', 'rig:resource']);
  const objects = async () => ((await c.s3.send(new ListObjectsV2Command({ Bucket: boot.bucket }))).Contents ?? []).map((o) => `${o.Key} ${o.LastModified?.toISOString()}`).sort();
  const before = await objects();
  assert.deepEqual(before.map((o) => o.split(' ')[0]), [boot.lockKey, boot.tarballKey].sort());
  assert.equal(boot.tarballKey, `packages/${boot.packageSha256}/rig.tgz`);
  assert.equal(lines.filter((l) => l.startsWith('uploading ')).length, 2);

  // The nodes' role: exactly the two objects and the three secrets (the Temporal one, RDS's master one
  // and the rig's own, which the load node also writes: bring-up keeps the API key there).
  const rigSecretArn = (await c.secrets.send(new DescribeSecretCommand({ SecretId: rigSecretName(CAMPAIGN) }))).ARN!;
  const db = (await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: n.dbInstance }))).DBInstances![0];
  const policy = JSON.parse(decodeURIComponent((await c.iam.send(new GetRolePolicyCommand({ RoleName: n.nodeRole, PolicyName: NODE_POLICY_NAME }))).PolicyDocument!));
  assert.deepEqual(policy.Statement, [
    { Sid: 'ReadThePackage', Effect: 'Allow', Action: 's3:GetObject', Resource: [`arn:aws:s3:::${boot.bucket}/${boot.tarballKey}`, `arn:aws:s3:::${boot.bucket}/${boot.lockKey}`] },
    { Sid: 'ReadTheSecrets', Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: [boot.temporalSecretArn, db.MasterUserSecret!.SecretArn, rigSecretArn] },
    { Sid: 'KeepTheApiKey', Effect: 'Allow', Action: 'secretsmanager:PutSecretValue', Resource: rigSecretArn },
    // What the load node's steps read of their own rig, and where they ship their evidence.
    { Sid: 'ShipTheEvidence', Effect: 'Allow', Action: 's3:PutObject', Resource: `arn:aws:s3:::${boot.bucket}/evidence/${CAMPAIGN}/*` },
    { Sid: 'ReadTheDatabase', Effect: 'Allow', Action: ['rds:DescribeDBInstances', 'rds:DescribeDBLogFiles', 'rds:DownloadDBLogFilePortion'], Resource: db.DBInstanceArn },
    { Sid: 'ReadTheRigAndItsMetrics', Effect: 'Allow', Action: ['ec2:DescribeInstances', 'cloudwatch:GetMetricData'], Resource: '*' },
    { Sid: 'ReadEnhancedMonitoring', Effect: 'Allow', Action: 'logs:FilterLogEvents', Resource: 'arn:aws:logs:us-east-1:123456789012:log-group:RDSOSMetrics:*' },
    { Sid: 'ReadDbLoad', Effect: 'Allow', Action: 'pi:GetResourceMetrics', Resource: 'arn:aws:pi:us-east-1:123456789012:metrics/rds/*' },
  ]);
  const nodeRole = (await c.iam.send(new GetRoleCommand({ RoleName: n.nodeRole }))).Role!;
  assert.match(decodeURIComponent(nodeRole.AssumeRolePolicyDocument!), /ec2\.amazonaws\.com/);
  const profile = (await c.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: n.nodeInstanceProfile }))).InstanceProfile!;
  assert.equal(profile.Arn, boot.instanceProfileArn);
  assert.deepEqual(profile.Roles?.map((r) => r.RoleName), [n.nodeRole]);

  // Enhanced Monitoring every second through its own role (moto does not echo Performance Insights).
  const monitoring = (await c.iam.send(new GetRoleCommand({ RoleName: n.monitoringRole }))).Role!;
  assert.match(decodeURIComponent(monitoring.AssumeRolePolicyDocument!), /monitoring\.rds\.amazonaws\.com/);
  assert.deepEqual((await c.iam.send(new ListAttachedRolePoliciesCommand({ RoleName: n.monitoringRole }))).AttachedPolicies?.map((p) => p.PolicyArn), [ENHANCED_MONITORING_POLICY_ARN]);
  assert.equal(db.MonitoringInterval, 1);
  assert.equal(db.MonitoringRoleArn, monitoring.Arn);

  // The instances: the profile, and user data that decodes to the render (and holds no secret).
  const instances = (await c.ec2.send(new DescribeInstancesCommand({ Filters: [{ Name: 'tag:rig:campaign', Values: [CAMPAIGN] }] }))).Reservations!.flatMap((r) => r.Instances ?? []);
  assert.equal(instances.length, 2);
  // The nodes' workers poll as the provisioning worker's build (the campaign is pinned to it).
  const { buildId } = await resolveBuildId();
  for (const inst of instances) {
    const kind = inst.Tags?.find((t) => t.Key === 'rig:resource')?.Value;
    assert.equal(inst.IamInstanceProfile?.Arn, boot.instanceProfileArn, `${kind} carries the profile`);
    const attr = await c.ec2.send(new DescribeInstanceAttributeCommand({ InstanceId: inst.InstanceId!, Attribute: 'userData' }));
    const userData = Buffer.from(attr.UserData!.Value!, 'base64').toString('utf8');
    assert.equal(userData, renderUserData(nodeUserDataInput(CAMPAIGN, aws.region, kind === 'load-node' ? 'load' : 'app', boot, { lifetimeMinutes: spec.watchdogMinutes, buildId })), `${kind}'s user data`);
    // Its own end: a poweroff from inside terminates it (the deadline check reads its tags from metadata).
    const shutdown = await c.ec2.send(new DescribeInstanceAttributeCommand({ InstanceId: inst.InstanceId!, Attribute: 'instanceInitiatedShutdownBehavior' }));
    assert.equal(shutdown.InstanceInitiatedShutdownBehavior?.Value, 'terminate', `${kind} terminates on shutdown`);
    assert.equal(inst.MetadataOptions?.InstanceMetadataTags, 'enabled', `${kind} sees its tags in instance metadata`);
    assert.equal(inst.MetadataOptions?.HttpTokens, 'required', `${kind}: IMDSv2 only`);
    assert.match(userData, new RegExp(`--task-queue ${kind === 'load-node' ? boot.dataQueue : boot.appQueue}$`, 'm'));
    assert.doesNotMatch(userData, new RegExp(SENTINEL));
  }

  // A second provision: no upload, the same secret (and no new version of it), the same roles.
  const versions = async () => (await c.secrets.send(new ListSecretVersionIdsCommand({ SecretId: n.temporalSecret }))).Versions?.length;
  const versionsBefore = await versions();
  const again: string[] = [];
  await provisionAws(CAMPAIGN, params(), (l) => again.push(l));
  assert.deepEqual(again.filter((l) => l.startsWith('uploading ')), [], 'nothing uploaded twice');
  assert.deepEqual(await objects(), before, 'the same two objects, untouched');
  assert.equal(readAwsRecord(CAMPAIGN)!.bootstrap!.temporalSecretArn, boot.temporalSecretArn);
  assert.equal(await versions(), versionsBefore, 'the same value makes no new secret version');

  const dirty = await rig(['check', '--target', 'aws'], cliEnv());
  assert.equal(dirty.code, 1, dirty.stdout + dirty.stderr);
  for (const kind of ['artifacts-bucket', 'temporal-secret', 'node-role', 'node-instance-profile', 'monitoring-role']) {
    assert.match(dirty.stderr, new RegExp(`^\\s*${kind}\\s+campaign ${CAMPAIGN}\\s+\\d+s old`, 'm'), `rig check lists the ${kind}`);
  }

  const down = await teardownAws(CAMPAIGN);
  for (const kind of ['node-instance-profile', 'node-role', 'monitoring-role', 'artifacts-bucket', 'temporal-secret']) assert.ok(down.removed.some((r) => r.startsWith(`${kind} `)), `teardown removed the ${kind}`);
  // Dependency order: the profile before the role it carries, the nodes before both, the DB before its monitoring role.
  const at = (kind: string) => down.removed.findIndex((r) => r.startsWith(`${kind} `));
  assert.ok(at('load-node') < at('node-instance-profile') && at('node-instance-profile') < at('node-role'));
  assert.ok(at('db-instance') < at('monitoring-role'));
  assert.ok(await gone(() => c.s3.send(new HeadBucketCommand({ Bucket: boot.bucket }))), 'bucket gone');
  assert.ok(await gone(() => c.secrets.send(new DescribeSecretCommand({ SecretId: n.temporalSecret }))), 'secret gone');
  for (const role of [n.nodeRole, n.monitoringRole]) assert.ok(await gone(() => c.iam.send(new GetRoleCommand({ RoleName: role }))), `${role} gone`);
  assert.ok(await gone(() => c.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: n.nodeInstanceProfile }))), 'profile gone');
  const clean = await rig(['check', '--target', 'aws'], cliEnv());
  assert.equal(clean.code, 0, clean.stdout + clean.stderr);
});

test('a rig-shaped bucket left untagged (an attempt died between CreateBucket and tagging) is reported, never a false clean', async () => {
  const name = rigNames('aws-boot-2').artifactsBucket('123456789012');
  await c.s3.send(new CreateBucketCommand({ Bucket: name }));
  try {
    const r = await rig(['check', '--target', 'aws'], cliEnv());
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, new RegExp(`artifacts-bucket\\s+campaign \\?.*${name} untagged`));
  } finally {
    await c.s3.send(new DeleteBucketCommand({ Bucket: name }));
  }
});

// The AWS preflight against a real moto 5.2.5, with what moto does not model (engine versions,
// orderable options by zone, EC2's vCPU quota) replayed from AWS API reference shapes through the
// clients' one seam (lib/targets/aws/replay.ts; test/targets/aws/replayed/README.md). moto itself
// answers the zone names and IDs, the instance type offerings by zone ID, the vCPUs, the
// service-linked role and the default VPC.
//
// Why: a first real campaign learnt each of these only after RDS was billing (issue 23). Each
// refusal here goes through provisionAws, as the campaign's provision activity does, and must leave
// nothing in moto: no DB instance, no EC2 instance, no rig resource at all.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { DescribeInstancesCommand, DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { DeleteRoleCommand } from '@aws-sdk/client-iam';
import { DescribeDBInstancesCommand, DescribeDBParameterGroupsCommand } from '@aws-sdk/client-rds';
import type { AwsSpec } from '../../../lib/protocol/aws-spec';
import { findRigResources } from '../../../lib/targets/aws/find';
import { awsTarget } from '../../../lib/targets/aws';
import { rigNames } from '../../../lib/targets/aws/names';
import { preflightAws } from '../../../lib/targets/aws/preflight';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { nodeRootVolumeGb } from '../../../lib/targets/aws/node-volume';
import { rdsWindows } from '../../../lib/targets/aws/rds-windows';
import { teardownAws } from '../../../lib/targets/aws/teardown';
import { PreflightRefusal } from '../../../lib/targets/preflight-refusal';
import { exampleAws, exampleSpec as spec, prepareAccount, REPLAYED, useMoto } from '../../harness/aws-env';
import { rig } from '../../harness/rig-cli';

const env = useMoto({ prefix: 'rig-aws-preflight-', beforeStop: () => teardownAws('preflight-ok').catch(() => undefined) });
const { withClients } = env;

const withAws = (change: (a: AwsSpec) => void): AwsSpec => {
  const a = structuredClone(exampleAws);
  change(a);
  return a;
};

/** provisionAws must refuse naming `check`, and nothing may exist in moto afterwards. */
async function refusedBeforeAnyCreate(campaignId: string, aws: AwsSpec, check: string, message: RegExp, alsoFailed: string[] = [], loadNodes = 1): Promise<void> {
  const lines: string[] = [];
  const expiresAt = new Date(Date.now() + 3600_000).toISOString();
  await assert.rejects(provisionAws(campaignId, { db: { ...spec.database }, aws: { spec: aws, expiresAt, ...(loadNodes > 1 ? { loadNodes } : {}) } }, (l) => lines.push(l)), (err: unknown) => {
    assert.ok(err instanceof PreflightRefusal, String(err));
    assert.deepEqual(err.failed, [check, ...alsoFailed]);
    assert.match(err.message, message);
    return true;
  });
  assert.ok(lines.some((l) => l.startsWith(`preflight ${check}: REFUSED, `)), lines.join('\n'));
  await withClients(async (c) => {
    assert.deepEqual((await c.rds.send(new DescribeDBInstancesCommand({}))).DBInstances ?? [], [], 'no DB instance was created');
    const running = ((await c.ec2.send(new DescribeInstancesCommand({}))).Reservations ?? []).flatMap((r) => r.Instances ?? []);
    assert.deepEqual(running, [], 'no EC2 instance was launched');
    assert.deepEqual(await findRigResources(c, campaignId), [], 'nothing of the rig was made');
  });
}

test('a passing preflight prints each verdict and resolves the major to its default minor and family', async () => {
  const lines: string[] = [];
  const r = await withClients((c) => preflightAws(c, exampleAws, (l) => lines.push(l)));
  assert.deepEqual(r.engine, { version: '16.9', family: 'postgres16' });
  assert.equal(r.zoneId, 'use1-az6', 'moto maps us-east-1a to use1-az6');
  assert.deepEqual(lines, [
    'preflight engine-lifecycle: ok, PostgreSQL 16 is in standard support until 2029-02-28; created with Extended Support disabled',
    lines[1],
    'preflight engine-version: ok, PostgreSQL 16 is 16.9 (the major\'s default minor), parameter group family postgres16',
    'preflight db-instance-class: ok, db.m7g.2xlarge PostgreSQL 16.9 with gp3 100 GB is orderable in us-east-1a',
    'preflight zone: ok, us-east-1a is zone ID use1-az6 in this account',
    'preflight instance-types: ok, c7g.2xlarge offered in us-east-1a (use1-az6)',
    'preflight vcpu-quota: ok, Running On-Demand Standard instances (L-1216C47A) in us-east-1 is 64 vCPUs, the nodes need 16 (app c7g.2xlarge 8 + load c7g.2xlarge 8); instances already running count against it too',
    lines[7],
    lines[8],
    'preflight: all 9 checks passed',
  ]);
  assert.match(lines[1], /^preflight rds-ca-bundle: ok, the vendored bundle \(.*rds-global-bundle\.pem\) holds "Amazon RDS us-east-1 Root CA RSA2048 G1" \(sha256 [0-9a-f]{12}\)$/);
  assert.match(lines[7], /^preflight rds-service-linked-role: ok, AWSServiceRoleForRDS exists \(arn:aws:iam::\d+:role\/aws-service-role\/rds\.amazonaws\.com\/AWSServiceRoleForRDS\)$/);
  assert.match(lines[8], /^preflight default-vpc: ok, default VPC vpc-\w+, subnet subnet-\w+ in us-east-1a with public addresses$/);
});

test('load.nodes: the quota and the offerings count every load node, and a quota too small for them is refused before any create, naming load.nodes', async () => {
  const lines: string[] = [];
  await withClients((c) => preflightAws(c, exampleAws, (l) => lines.push(l), { loadNodes: 7 }));
  assert.ok(lines.includes('preflight instance-types: ok, c7g.2xlarge offered in us-east-1a (use1-az6) (the app node and 7 load nodes of c7g.2xlarge)'), lines.join('\n'));
  assert.ok(lines.includes('preflight vcpu-quota: ok, Running On-Demand Standard instances (L-1216C47A) in us-east-1 is 64 vCPUs, the nodes need 64 (app c7g.2xlarge 8 + 7 load nodes c7g.2xlarge 8 each); instances already running count against it too'), lines.join('\n'));
  // One more node is 72 vCPUs, past the 64 of the account.
  await refusedBeforeAnyCreate('preflight-nodes-quota', exampleAws, 'vcpu-quota', /is 64 vCPUs; the nodes need 72 \(app c7g\.2xlarge 8 \+ 8 load nodes c7g\.2xlarge 8 each\); fix: .*--desired-value 72, or smaller aws\.app\/load\.instanceType, or fewer load\.nodes \(8 asked: 8 load nodes of c7g\.2xlarge\)/, [], 8);
});

test('a class not orderable in the zone is refused before any create, naming the zones that have it', async () => {
  await refusedBeforeAnyCreate('preflight-class', withAws((a) => (a.database.instanceClass = 'db.x2g.large')), 'db-instance-class', /db\.x2g\.large PostgreSQL 16\.9 with gp3 is not orderable in us-east-1a \(it is in: us-east-1b, us-east-1c\); fix: set aws\.zone to one of us-east-1b, us-east-1c/);
});

test('an EC2 type not offered in the zone (by zone ID) is refused before any create', async () => {
  await refusedBeforeAnyCreate('preflight-type', withAws((a) => (a.load.instanceType = 'vt1.3xlarge')), 'instance-types', /vt1\.3xlarge not offered in us-east-1a \(use1-az6\); offered in vt1\.3xlarge: us-east-1b, us-east-1c; fix: set aws\.load\.instanceType/);
});

test('a version RDS no longer offers is refused before any create, listing the offered ones', async () => {
  await refusedBeforeAnyCreate('preflight-version', withAws((a) => (a.database.engineVersion = '16.4')), 'engine-version', /PostgreSQL 16\.4 is not offered by RDS in us-east-1 \(DescribeDBEngineVersions\); offered in major 16: 16\.6, 16\.8, 16\.9; fix: set aws\.database\.engineVersion to one of those, or to the major alone \(e\.g\. "16"\)/, [
    // The class's check needs a version: not checked, so not passed either.
    'db-instance-class',
  ]);
});

test('too small a vCPU quota is refused before any create, naming the quota increase', async () => {
  const was = process.env.RIG_AWS_REPLAY;
  process.env.RIG_AWS_REPLAY = [path.join(REPLAYED, 'small-quota'), was].join(path.delimiter);
  try {
    await refusedBeforeAnyCreate('preflight-quota', exampleAws, 'vcpu-quota', /is 8 vCPUs; the nodes need 16 \(app c7g\.2xlarge 8 \+ load c7g\.2xlarge 8\); fix: .*--service-code ec2 --quota-code L-1216C47A --desired-value 16/);
  } finally {
    process.env.RIG_AWS_REPLAY = was;
  }
});

test('no RDS service-linked role: the dry run says provisioning makes it; provisioning\'s preflight makes it (CreateServiceLinkedRole)', async () => {
  await withClients((c) => c.iam.send(new DeleteRoleCommand({ RoleName: 'AWSServiceRoleForRDS' })));
  try {
    const dry: string[] = [];
    await withClients((c) => preflightAws(c, exampleAws, (l) => dry.push(l)));
    assert.ok(dry.includes('preflight rds-service-linked-role: ok, AWSServiceRoleForRDS does not exist yet: provisioning makes it first (iam:CreateServiceLinkedRole for rds.amazonaws.com)'), dry.join('\n'));
    const made: string[] = [];
    await withClients((c) => preflightAws(c, exampleAws, (l) => made.push(l), { makeServiceLinkedRole: true }));
    // moto 5.2.5 names the role it makes AWSServiceRoleForRds (AWS: AWSServiceRoleForRDS); the ARN is what it answered.
    assert.ok(made.some((l) => /^preflight rds-service-linked-role: ok, AWSServiceRoleForRDS did not exist: made it \(arn:aws:iam::\d+:role\/aws-service-role\/rds\.amazonaws\.com\/AWSServiceRoleFor/.test(l)), made.join('\n'));
  } finally {
    await withClients(prepareAccount);
  }
});

test('rig campaign start --dry-run --preflight: the verdicts, exit 0; a refused spec exits 1', async () => {
  const ok = await rig(['campaign', 'start', 'examples/aws.json', '--id', 'preflight-cli', '--dry-run', '--preflight'], env.cliEnv());
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /^DRY RUN of campaign preflight-cli \(aws\): nothing is created, the account is only read \(--preflight\)$/m);
  assert.match(ok.stdout, /^PREFLIGHT against the AWS account in us-east-1 \(read-only\):$/m);
  for (const check of ['engine-lifecycle', 'rds-ca-bundle', 'engine-version', 'db-instance-class', 'zone', 'instance-types', 'vcpu-quota', 'rds-service-linked-role', 'default-vpc']) assert.match(ok.stdout, new RegExp(`^preflight ${check}: ok, `, 'm'));
  assert.match(ok.stdout, /^preflight: all 9 checks passed$/m);
  const small = await rig(['campaign', 'start', 'examples/aws.json', '--dry-run', '--preflight'], env.cliEnv({ RIG_AWS_REPLAY: [path.join(REPLAYED, 'small-quota'), path.join(REPLAYED, 'account')].join(path.delimiter) }));
  assert.equal(small.code, 1, small.stdout + small.stderr);
  assert.match(small.stdout, /^preflight vcpu-quota: REFUSED, /m);
  assert.match(small.stderr, /refused by the preflight \(vcpu-quota\); nothing was created/);
});

test('a provisioned database is set up for measuring: resolved version and family, backups off, windows after the plan; nodes get a gp3 root sized for the plan\'s evidence', async () => {
  const campaignId = 'preflight-ok';
  const start = new Date();
  const expiresAt = new Date(start.getTime() + spec.watchdogMinutes * 60_000).toISOString();
  // A plan that writes 40 GiB of evidence: the volumes grow past their 30-GB floor to hold it twice.
  const evidenceBytes = 40 * 1024 ** 3;
  await provisionAws(campaignId, { db: { ...spec.database }, aws: { spec: exampleAws, expiresAt, evidenceBytes } });
  const n = rigNames(campaignId);
  await withClients(async (c) => {
    const db = (await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: n.dbInstance }))).DBInstances![0];
    assert.equal(db.EngineVersion, '16.9');
    assert.equal(db.BackupRetentionPeriod, 0);
    assert.equal(db.AutoMinorVersionUpgrade, false);
    assert.equal(db.DeletionProtection, false);
    // Computed at provisioning (a second or so after `start`): the same minutes, or the next.
    const w = rdsWindows(start, new Date(expiresAt));
    const w2 = rdsWindows(new Date(start.getTime() + 60_000), new Date(expiresAt));
    assert.ok([w.backup, w2.backup].includes(db.PreferredBackupWindow!), db.PreferredBackupWindow);
    assert.ok([w.maintenance, w2.maintenance].includes(db.PreferredMaintenanceWindow!), db.PreferredMaintenanceWindow);
    const pg = (await c.rds.send(new DescribeDBParameterGroupsCommand({ DBParameterGroupName: n.dbParameterGroup }))).DBParameterGroups![0];
    assert.equal(pg.DBParameterGroupFamily, 'postgres16');
    const nodes = ((await c.ec2.send(new DescribeInstancesCommand({ Filters: [{ Name: 'tag:rig:campaign', Values: [campaignId] }] }))).Reservations ?? []).flatMap((r) => r.Instances ?? []);
    assert.equal(nodes.length, 2);
    for (const i of nodes) {
      const volumeId = i.BlockDeviceMappings?.[0]?.Ebs?.VolumeId;
      assert.ok(volumeId, JSON.stringify(i.BlockDeviceMappings));
      const v = (await c.ec2.send(new DescribeVolumesCommand({ VolumeIds: [volumeId] }))).Volumes![0];
      assert.equal(v.Size, nodeRootVolumeGb(evidenceBytes));
      assert.equal(v.Size, 92, '12 GB of base and twice the 40 GiB');
      assert.equal(v.VolumeType, 'gp3');
    }
  });
  const hw = awsTarget.hardware(campaignId, { description: 'aws', costPerHour: 0 });
  assert.match(hw.line, /PostgreSQL 16\.9 .*; RDS set up for measuring: backups off \(retention 0\), auto minor version upgrade off, deletion protection off, backup window \d\d:\d\d-\d\d:\d\d and maintenance window [a-z]{3}:\d\d:\d\d-[a-z]{3}:\d\d:\d\d UTC \(placed after the plan\), deleted with no final snapshot and its automated backups/);
  await teardownAws(campaignId);
});

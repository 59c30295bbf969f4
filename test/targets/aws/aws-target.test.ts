// The AWS target against a real moto 5.2.5: provision -> `rig check --target aws` dirty (1) ->
// teardown -> clean (0); a second provision makes nothing new; no credentials, refused credentials
// and a closed port are each COULD NOT LOOK (2), never clean. moto's RDS is available at once and
// deletes at once, and it ignores RunInstances' ClientToken (the tag lookup is what stops a second node).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DescribeImagesCommand, DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { DescribeDBParametersCommand } from '@aws-sdk/client-rds';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { awsClients } from '../../../lib/targets/aws/clients';
import { findRigResources } from '../../../lib/targets/aws/find';
import { CAMPAIGN_TAG, rigNames } from '../../../lib/targets/aws/names';
import { al2023Parameter } from '../../../lib/targets/aws/node-image';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { readAwsRecord, writeAwsRecord, type AwsRigRecord } from '../../../lib/targets/aws/record';
import { teardownAws } from '../../../lib/targets/aws/teardown';
import { targetFor } from '../../../lib/targets/registry';
import { awsDataQueue, awsLoadNodeQueue } from '../../../lib/temporal/queues';
import { freePort } from '../../../lib/tools/free-port';
import { exampleAws as aws, exampleSpec as spec, useMoto, MADE_KINDS } from '../../harness/aws-env';
import { startMoto } from '../../harness/moto';
import { rig } from '../../harness/rig-cli';
import { bundleWithRegionRoot } from '../../harness/rds-root';

const CAMPAIGN = 'aws-moto-1';

const env = useMoto({ prefix: 'rig-aws-state-' });
const cliEnv = env.cliEnv;
const params = () => ({ db: { ...spec.database }, aws: { spec: aws, expiresAt: new Date(Date.now() + spec.watchdogMinutes * 60_000).toISOString() } });

/** The parameters the rig set on its DB parameter group (Source user), as name=value, sorted. */
async function userParameters(campaignId: string): Promise<string[]> {
  const c = awsClients(aws.region);
  try {
    const r = await c.rds.send(new DescribeDBParametersCommand({ DBParameterGroupName: rigNames(campaignId).dbParameterGroup, Source: 'user' }));
    return (r.Parameters ?? []).map((p) => `${p.ParameterName}=${p.ParameterValue}`).sort();
  } finally {
    c.destroy();
  }
}

/** What moto 5.2.5's SSM public parameter al2023-ami-kernel-default-arm64 names (its DescribeImages knows it). */
const SSM_ARM64_AMI = 'ami-065b1b834d2a83a7a';

/** The ImageId each of the campaign's instances was launched with, sorted. */
async function launchedImages(campaignId: string): Promise<string[]> {
  const c = awsClients(aws.region);
  try {
    const r = await c.ec2.send(new DescribeInstancesCommand({ Filters: [{ Name: `tag:${CAMPAIGN_TAG}`, Values: [campaignId] }] }));
    return (r.Reservations ?? []).flatMap((x) => x.Instances ?? []).map((i) => i.ImageId!).sort();
  } finally {
    c.destroy();
  }
}

async function resources() {
  return (await env.rigResources(CAMPAIGN)).sort();
}

test('provision -> rig check dirty (exit 1) -> provision again makes nothing new -> teardown -> clean (exit 0)', async () => {
  assert.equal(targetFor('aws').name, 'aws');
  const before = await rig(['check', '--target', 'aws'], cliEnv());
  assert.equal(before.code, 0, before.stderr);
  assert.match(before.stdout, /^CLEAN/m);

  const first = await provisionAws(CAMPAIGN, params());
  assert.equal(first.reused, false);
  // The parameter group holds what examples/aws.json names, and the marker logging (parameters.ts).
  assert.deepEqual(await userParameters(CAMPAIGN), ['autovacuum_vacuum_insert_scale_factor=0.02', 'log_autovacuum_min_duration=0', 'log_checkpoints=1', 'max_wal_size=32768', 'min_wal_size=16384', 'shared_buffers=1048576']);
  assert.equal(first.target, 'aws');
  assert.doesNotMatch(JSON.stringify(first), /password/i);
  const made = await resources();
  assert.deepEqual(made.map((r) => r.split(' ')[0]), MADE_KINDS);
  // The AMI is the SSM public parameter's (node-image.ts), kept in the record, named on the hardware line.
  const rec = readAwsRecord(CAMPAIGN)!;
  assert.equal(rec.nodeImages?.arm64?.imageId, SSM_ARM64_AMI);
  assert.equal(rec.nodeImages?.arm64?.parameter, al2023Parameter('arm64'));
  assert.match(rec.hardwareLine, new RegExp(`; node AMI ${SSM_ARM64_AMI} \\(al2023-ami-2023\\.[^)]*-kernel-[^)]*-arm64\\); `));
  assert.deepEqual(await launchedImages(CAMPAIGN), [SSM_ARM64_AMI, SSM_ARM64_AMI]);

  const dirty = await rig(['check', '--target', 'aws'], cliEnv());
  assert.equal(dirty.code, 1, dirty.stdout + dirty.stderr);
  assert.match(dirty.stderr, /^DIRTY: 12 leftover\(s\)/m);
  assert.match(dirty.stderr, /db-instance\s+campaign aws-moto-1\s+\d+s old\s+rig-aws-moto-1-[0-9a-f]{8} available, expires \S+, ~\$\d+\.\d\d so far \(db\.m7g\.2xlarge\)/);
  assert.match(dirty.stderr, /app-node\s+campaign aws-moto-1 .* running, expires .* so far \(c7g\.2xlarge\)/);

  const again = await provisionAws(CAMPAIGN, params());
  assert.equal(again.reused, true);
  assert.deepEqual(await resources(), made, 'a second provision creates nothing new');

  const down = await teardownAws(CAMPAIGN);
  assert.equal(down.removed.length, 12);
  assert.deepEqual(await resources(), []);
  const clean = await rig(['check', '--target', 'aws'], cliEnv());
  assert.equal(clean.code, 0, clean.stdout + clean.stderr);
  assert.match(
    clean.stdout,
    /^CLEAN \(looked at: EC2 instances, security groups, RDS instances, DB parameter groups, S3 buckets and Secrets Manager secrets tagged rig:campaign in us-east-1 at http:\/\/127\.0\.0\.1:\d+, and IAM roles and instance profiles under \/rig\/\)/m,
  );
  const twice = await teardownAws(CAMPAIGN);
  assert.deepEqual(twice.removed, []);
});

test('no credentials at all: COULD NOT LOOK (exit 69)', async () => {
  const r = await rig(['check', '--target', 'aws'], cliEnv({ AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' }));
  assert.equal(r.code, 69, r.stdout + r.stderr);
  assert.match(r.stderr, /^COULD NOT LOOK: us-east-1 at http:\/\/127\.0\.0\.1:\d+: CredentialsProviderError: /m);
});

test('credentials the endpoint refuses (moto enforcing auth): COULD NOT LOOK (exit 69)', async () => {
  const strict = await startMoto({ INITIAL_NO_AUTH_ACTION_COUNT: '0' });
  const r = await rig(['check', '--target', 'aws'], cliEnv({ RIG_AWS_ENDPOINT: strict.endpoint })).finally(() => strict.stop());
  assert.equal(r.code, 69, r.stdout + r.stderr);
  assert.match(r.stderr, /^COULD NOT LOOK: us-east-1 at http:\/\/127\.0\.0\.1:\d+: /m);
});

test('an endpoint that does not answer: COULD NOT LOOK (exit 69); no region: COULD NOT LOOK too (69)', async () => {
  const closed = await freePort();
  const r = await rig(['check', '--target', 'aws'], cliEnv({ RIG_AWS_ENDPOINT: `http://127.0.0.1:${closed}` }));
  assert.equal(r.code, 69, r.stdout + r.stderr);
  assert.match(r.stderr, /^COULD NOT LOOK: us-east-1 at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/m);
  const noRegion = await rig(['check', '--target', 'aws'], cliEnv({ AWS_REGION: '', AWS_DEFAULT_REGION: '' }));
  assert.equal(noRegion.code, 69);
  assert.match(noRegion.stderr, /COULD NOT LOOK: no AWS region/);
});

test('load.nodes 3: provisioning launches the load node and two more of its type, each tagged with its node; a second provision launches none; the handles name all three; the cost counts them; teardown terminates every one', async () => {
  const id = 'aws-moto-nodes';
  const p = { ...params(), aws: { ...params().aws, loadNodes: 3 } };
  await provisionAws(id, p);
  const loads = () => env.withClients(async (c) => (await findRigResources(c, id)).filter((r) => r.kind === 'load-node').map((r) => `n${r.loadNode ?? 0} ${r.size}`).sort());
  const three = ['n0 c7g.2xlarge', 'n1 c7g.2xlarge', 'n2 c7g.2xlarge'];
  assert.deepEqual(await loads(), three);
  await provisionAws(id, p);
  assert.deepEqual(await loads(), three, 'found by their tags: none launched again');
  assert.equal((await launchedImages(id)).length, 4, 'the app node and three load nodes, each launched once');
  const handles = await targetFor('aws').startLoadNodes!(id, 3, () => {});
  assert.deepEqual(handles.map((h) => [h.node, h.queue, h.clockUrl]), [0, 1, 2].map((i) => [i, awsLoadNodeQueue(id, i), 'ntp://169.254.169.123:123']));
  assert.equal(handles[0].queue, awsDataQueue(id));
  assert.ok(handles.every((h) => /^\d+\.\d+\.\d+\.\d+$/.test(h.address)), JSON.stringify(handles));
  const hw = targetFor('aws').hardware(id, { description: 'AWS', costPerHour: 0 });
  assert.match(hw.priceCovers ?? '', /the app node and the 3 load nodes, their public IPv4 addresses and root volumes/);
  assert.ok(hw.costNotes?.some((l) => l.startsWith('4 public IPv4 addresses')), JSON.stringify(hw.costNotes));
  assert.match(hw.line, /, load 3 x c7g\.2xlarge, /);
  const down = await teardownAws(id);
  assert.equal(down.removed.filter((r) => r.startsWith('load-node ')).length, 3, down.removed.join(', '));
  assert.deepEqual(await env.rigResources(id), []);
});

test('provision with the database waited for apart: it returns once made and launched; awaitDatabase completes the record with the endpoint and the version', async () => {
  const id = 'aws-moto-apart';
  // An earlier attempt resolved the AMI and recorded it, then died before its launches; since then the
  // SSM parameter names another image (moto's cannot be changed: PutParameter on /aws/service is
  // refused, so the recorded image is one the parameter does not name). The retried launch uses the
  // recorded one: the record, not the parameter, decides once it has an AMI.
  const older = await env.withClients(async (c) => (await c.ec2.send(new DescribeImagesCommand({ Owners: ['amazon'], Filters: [{ Name: 'architecture', Values: ['arm64'] }] }))).Images!.find((i) => i.ImageId !== SSM_ARM64_AMI && i.RootDeviceName)!);
  const recorded = { imageId: older.ImageId!, name: older.Name!, rootDevice: older.RootDeviceName!, parameter: al2023Parameter('arm64') };
  writeAwsRecord({ campaignId: id, region: aws.region, zone: aws.zone, nodeImages: { arm64: recorded } } as AwsRigRecord);
  const made = await provisionAws(id, { ...params(), aws: { ...params().aws, waitForDatabase: false } });
  assert.deepEqual(await launchedImages(id), [recorded.imageId, recorded.imageId]);
  assert.deepEqual(readAwsRecord(id)!.nodeImages, { arm64: recorded });
  assert.equal(made.reused, false);
  const before = readAwsRecord(id)!;
  assert.equal(before.dbEndpoint, '', 'no endpoint before the instance is available');
  assert.equal(before.rdsSettings, undefined);
  const ready = await targetFor('aws').awaitDatabase!(id, 10, () => {});
  const after = readAwsRecord(id)!;
  assert.match(after.dbEndpoint, /^.+:\d+$/);
  assert.match(after.hardwareLine, /^RDS db\.m7g\.2xlarge PostgreSQL 16\.\d+ \(gp3/);
  assert.match(after.rdsSettings ?? '', /^backups off/);
  assert.equal(after.resources['db-instance'], before.resources['db-instance'] ?? after.resources['db-instance']);
  assert.equal(ready.target, 'aws');
  // A second wait (a retried attempt) changes nothing.
  await targetFor('aws').awaitDatabase!(id, 10, () => {});
  assert.deepEqual(readAwsRecord(id), after);
  // The page's hardware row names the AMI the nodes ran, by id and name.
  const hw = targetFor('aws').hardware!(id, { description: 'AWS', costPerHour: 0 });
  assert.ok(hw.line.includes(`node AMI ${recorded.imageId} (${recorded.name})`), hw.line);
  await teardownAws(id);
});

test('a spec naming no database setting, with RIG_RDS_CA_BUNDLE: the parameter group gets the logging set only, the nodes\' package holds the given bundle, and its sha256 is on the hardware line', async () => {
  const id = 'aws-moto-stock';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-ca-bundle-'));
  const bundle = bundleWithRegionRoot(dir, 'il-central-1');
  const before = process.env.RIG_RDS_CA_BUNDLE;
  process.env.RIG_RDS_CA_BUNDLE = bundle;
  try {
    await provisionAws(id, { ...params(), db: {} });
    assert.deepEqual(await userParameters(id), ['log_autovacuum_min_duration=0', 'log_checkpoints=1']);
    const rec = readAwsRecord(id)!;
    const sha = createHash('sha256').update(fs.readFileSync(bundle)).digest('hex');
    assert.match(rec.hardwareLine, new RegExp(`RDS CA bundle from RIG_RDS_CA_BUNDLE sha256 ${sha}$`));
    // What a node downloads: the tarball from the artifacts bucket, with the given bundle in the vendored one's place.
    const c = awsClients(aws.region);
    try {
      const obj = await c.s3.send(new GetObjectCommand({ Bucket: rec.bootstrap!.bucket, Key: rec.bootstrap!.tarballKey }));
      const tgz = Buffer.from(await obj.Body!.transformToByteArray());
      const inPackage = execFileSync('tar', ['-xzOf', '-', 'package/lib/targets/aws/rds-global-bundle.pem'], { input: tgz });
      assert.equal(createHash('sha256').update(inPackage).digest('hex'), sha);
    } finally {
      c.destroy();
    }
  } finally {
    if (before === undefined) delete process.env.RIG_RDS_CA_BUNDLE;
    else process.env.RIG_RDS_CA_BUNDLE = before;
    fs.rmSync(dir, { recursive: true, force: true });
    await teardownAws(id);
  }
});

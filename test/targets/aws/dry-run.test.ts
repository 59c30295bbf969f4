// `rig campaign start SPEC --dry-run`: the plan from the spec alone. Run as a user would, with the
// Temporal address and the AWS endpoint both pointing at a closed port and no AWS credentials: it must
// print the plan, exit 0, and leave nothing behind.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { resolveSpec } from '../../../activities/resolve-spec';
import { freePort } from '../../../lib/tools/free-port';
import { rig } from '../../harness/rig-cli';
import { bundleWithRegionRoot } from '../../harness/rds-root';

async function offlineEnv(): Promise<{ env: NodeJS.ProcessEnv; state: string }> {
  const closed = await freePort();
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-dry-run-'));
  fs.rmSync(state, { recursive: true });
  return {
    state,
    env: {
      TEMPORAL_ADDRESS: `127.0.0.1:${closed}`,
      RIG_TEMPORAL_CONNECT_TIMEOUT_MS: '500',
      RIG_AWS_ENDPOINT: `http://127.0.0.1:${closed}`,
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      AWS_PROFILE: 'rig-dry-run-no-such-profile',
      RIG_STATE_DIR: state,
      RIG_RESULTS: path.join(state, 'results'),
    },
  };
}

test('the AWS dry run prints resources named from the campaign id, the zone, parameters, $/hour and the watchdog; needs no server', async () => {
  const { env, state } = await offlineEnv();
  const r = await rig(['campaign', 'start', 'examples/aws.json', '--id', 'nightly-1', '--dry-run'], env);
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout;
  assert.match(out, /^DRY RUN of campaign nightly-1 \(aws\): nothing is created, nothing is contacted$/m);
  assert.match(out, /region us-east-1, zone us-east-1a/);
  for (const name of ['rig-nightly-1-e9673773-nodes', 'rig-nightly-1-e9673773-db', 'rig-nightly-1-e9673773-pg', 'rig-nightly-1-e9673773-app', 'rig-nightly-1-e9673773-load']) {
    assert.match(out, new RegExp(`\\b${name}\\b`));
  }
  assert.match(out, /RDS instance\s+rig-nightly-1-e9673773\s+db\.m7g\.2xlarge, PostgreSQL 16 \(its default minor, resolved by the preflight\), EngineLifecycleSupport open-source-rds-extended-support-disabled, backups off, no auto minor upgrade, windows after the plan, gp3 100 GB 3000 IOPS 125 MiB\/s, single-AZ in us-east-1a, not publicly accessible/);
  assert.match(out, /sends log_autovacuum_min_duration=0, log_checkpoints=1, shared_buffers=1048576, min_wal_size=16384, max_wal_size=32768, autovacuum_vacuum_insert_scale_factor=0\.02 \(RDS units/);
  assert.match(out, /the whole rig: \$1\.2678\/hour/);
  assert.match(out, /prices: AWS on-demand price pages .* to be checked/);
  // What else the bill holds (lib/targets/aws/campaign-cost.ts): the addresses, the monitoring, the plan, the worst case, RDS's minimum.
  assert.match(out, /^  2 public IPv4 addresses \(one per node\): \$0\.0100\/hour$/m);
  assert.match(out, /^  Enhanced Monitoring every 1 s \(~0\.036 GB\/hour into CloudWatch Logs\): \$0\.0180\/hour$/m);
  assert.match(out, /^  expected \(\d+(\.\d)? min from provisioning to the report, each step's typical time\): \$\d+\.\d\d$/m);
  assert.match(out, /^  the plan as allowed \(\d+(\.\d)? min from provisioning to the report, what the watchdog covers\): \$\d+\.\d\d at \$1\.3024\/hour for everything above$/m);
  assert.match(out, /^  worst case, teardown failing and the rig running to its watchdog deadline \(600 min\): \$13\.02;/m);
  assert.match(out, /^  RDS bills at least 10 minutes of the instance once created/m);
  assert.match(out, /watchdog deadline: 600 min after provisioning/);
  assert.equal(fs.existsSync(state), false, 'the dry run wrote nothing');
});

test('the local dry run too, and a bad spec is still refused first', async () => {
  const { env } = await offlineEnv();
  const r = await rig(['campaign', 'start', 'examples/rehearsal.json', '--dry-run'], env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^target local: a PostgreSQL cluster/m);
  assert.match(r.stdout, /^watchdog 60 min; plan/m);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-dry-run-spec-'));
  const bad = path.join(dir, 'bad.json');
  const ex = JSON.parse(fs.readFileSync('examples/aws.json', 'utf8')) as { aws: { zone: string } };
  ex.aws.zone = 'eu-west-1a';
  fs.writeFileSync(bad, JSON.stringify(ex));
  const refused = await rig(['campaign', 'start', bad, '--dry-run'], env);
  fs.rmSync(dir, { recursive: true });
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /aws\.zone: zone eu-west-1a is not in region us-east-1/);
});

test('load.nodes 2 on aws: the dry run lists both load nodes, each on its own queue, and its cost counts both', async () => {
  const { env, state } = await offlineEnv();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-dry-run-spec-'));
  const file = path.join(dir, 'aws-2.json');
  fs.writeFileSync(file, JSON.stringify({ ...(JSON.parse(fs.readFileSync('examples/aws.json', 'utf8')) as object), $schema: undefined, load: { nodes: 2 } }));
  const r = await rig(['campaign', 'start', file, '--id', 'nightly-2', '--dry-run'], env);
  fs.rmSync(dir, { recursive: true });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /zone us-east-1a \(the database, the app node and 2 load nodes\)/);
  assert.match(r.stdout, /rig-nightly-2-[0-9a-f]{8}-load +c7g\.2xlarge .*worker on rig-aws-data-nightly-2-[0-9a-f]{8}, load node 0 of 2$/m);
  assert.match(r.stdout, /rig-nightly-2-[0-9a-f]{8}-load-n1 +c7g\.2xlarge .*ClientToken rig-[0-9a-f]{8}-load-n1-<secret suffix>\), worker on rig-load-nightly-2-[0-9a-f]{8}-n1, load node 1 of 2$/m);
  assert.match(r.stdout, /^ {2}2 load nodes c7g\.2xlarge +\$0\.5800\/hour$/m);
  assert.match(r.stdout, /^ {2}3 public IPv4 addresses \(one per node\): \$0\.0150\/hour$/m);
  assert.match(r.stdout, /^ {2}3 node root volumes \(gp3 \d+ GB each\)/m);
  assert.equal(fs.existsSync(state), false, 'the dry run wrote nothing');
});

test('a campaign on aws passes the spec checks like a local one: rig campaign start, rig rehearse and rig schedule create go on to connect to Temporal', async () => {
  const { env } = await offlineEnv();
  for (const argv of [['campaign', 'start', 'examples/aws.json'], ['rehearse', 'examples/aws.json'], ['schedule', 'create', 'weekly-aws', 'examples/aws.json', '--every', '7d']]) {
    const r = await rig(argv, { ...env, RIG_AWS_ENDPOINT: '' });
    assert.doesNotMatch(r.stderr, /cannot run a campaign|invalid campaign spec/, r.stderr);
    assert.match(r.stderr, /cannot reach Temporal|nothing answers at TEMPORAL_ADDRESS/, `rig ${argv.join(' ')}: ${r.stderr}`);
  }
  const spec = JSON.parse(fs.readFileSync('examples/aws.json', 'utf8')) as Parameters<typeof resolveSpec>[0];
  assert.equal((await resolveSpec(spec)).target, 'aws');
});

/** examples/aws.json with `change` applied, written to a temporary file. */
function awsSpecFile(change: (s: { database?: object; aws: { region: string; zone: string; database: { engineVersion: string; extendedSupport?: boolean; storage: object } } }) => void): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-dry-run-aws-'));
  const ex = JSON.parse(fs.readFileSync('examples/aws.json', 'utf8')) as Parameters<typeof change>[0];
  change(ex);
  const file = path.join(dir, 'spec.json');
  fs.writeFileSync(file, JSON.stringify(ex));
  return file;
}

test('an AWS spec with no database settings: the parameter group gets the logging set only; one naming shared_buffers gets that too', async () => {
  const { env } = await offlineEnv();
  const none = await rig(['campaign', 'start', awsSpecFile((s) => delete s.database), '--id', 'stock-1', '--dry-run'], env);
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout, /DB parameter group .* sends log_autovacuum_min_duration=0, log_checkpoints=1 \(RDS units: the spec's database block and the marker logging; everything else the family's defaults\)/);
  const one = await rig(['campaign', 'start', awsSpecFile((s) => (s.database = { shared_buffers: '8GB' })), '--id', 'stock-2', '--dry-run'], env);
  assert.equal(one.code, 0, one.stderr);
  assert.match(one.stdout, /sends log_autovacuum_min_duration=0, log_checkpoints=1, shared_buffers=1048576 \(RDS units/);
});

test('refused before anything is made (exit 2), naming the field and the fix: il-central-1 with the shipped CA bundle, engine 13 without the opt-in, wal_compression zstd on 14, gp3 above 0.25 MiB/s per IOPS', async () => {
  const { env } = await offlineEnv();
  const region = await rig(['campaign', 'start', awsSpecFile((s) => ((s.aws.region = 'il-central-1'), (s.aws.zone = 'il-central-1a'))), '--dry-run'], env);
  assert.equal(region.code, 2, region.stdout + region.stderr);
  assert.match(region.stderr, /rds-ca-bundle: the vendored bundle .* has no valid "Amazon RDS il-central-1 Root CA RSA2048 G1".*fix: download AWS's bundle \(https:\/\/truststore\.pki\.rds\.amazonaws\.com\/global\/global-bundle\.pem\) and set RIG_RDS_CA_BUNDLE=\/path\/to\/global-bundle\.pem/);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-dry-run-ca-'));
  const covered = await rig(['campaign', 'start', awsSpecFile((s) => ((s.aws.region = 'il-central-1'), (s.aws.zone = 'il-central-1a'))), '--dry-run'], { ...env, RIG_RDS_CA_BUNDLE: bundleWithRegionRoot(dir, 'il-central-1') });
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(covered.code, 0, covered.stderr);

  const thirteen = await rig(['campaign', 'start', awsSpecFile((s) => (s.aws.database.engineVersion = '13')), '--dry-run'], env);
  assert.equal(thirteen.code, 2, thirteen.stdout + thirteen.stderr);
  assert.match(thirteen.stderr, /engine-lifecycle: RDS for PostgreSQL 13 is past its end of standard support \(2026-02-28\).*fix: set aws\.database\.engineVersion to a major in standard support .*, or aws\.database\.extendedSupport to true/);
  const optedIn = await rig(['campaign', 'start', awsSpecFile((s) => ((s.aws.database.engineVersion = '13'), (s.aws.database.extendedSupport = true))), '--dry-run'], env);
  assert.equal(optedIn.code, 0, optedIn.stderr);
  assert.match(optedIn.stdout, /EngineLifecycleSupport open-source-rds-extended-support,/);
  assert.match(optedIn.stdout, /RDS Extended Support, PostgreSQL 13 \(8 vCPU\)\s+\$0\.8000\/hour/);

  const zstd = await rig(['campaign', 'start', awsSpecFile((s) => ((s.aws.database.engineVersion = '14'), (s.database = { wal_compression: 'zstd' }))), '--dry-run'], env);
  assert.equal(zstd.code, 2);
  assert.match(zstd.stderr, /database\.wal_compression: wal_compression "zstd" needs PostgreSQL 15 or later/);
  const ratio = await rig(['campaign', 'start', awsSpecFile((s) => (s.aws.database.storage = { type: 'gp3', sizeGb: 400, iops: 12000, throughputMiBps: 4000 })), '--dry-run'], env);
  assert.equal(ratio.code, 2);
  assert.match(ratio.stderr, /aws\.database\.storage\.throughputMiBps: throughputMiBps 4000 at 12000 IOPS is 0\.333 MiB\/s per IOPS: RDS gp3 allows at most 0\.25/);
});

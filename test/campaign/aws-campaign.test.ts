// One whole campaign with target "aws", every step run: a real moto 5.2.5 for AWS's control plane
// (EC2, RDS, Secrets Manager), a real Temporal dev server, this machine's workers serving the control
// queues and the AWS rig's own queues (the load node's and the app node's, derived from the campaign),
// and, through the test-only RIG_AWS_EMULATOR_MAP (lib/targets/aws/emulator-map.ts), a real local
// PostgreSQL cluster standing in for the RDS endpoint moto returns (nothing listens there). The
// cluster trusts loopback connections: the passwords the rig reads from Secrets Manager (the master's
// from RDS's own secret, the roles' from the rig's) are sent and not checked, which no test here can
// change (moto's master secret holds a canned password).
//
// What it shows: the campaign provisions on AWS (tagged, in the spec's zone), prepares the database
// from the load node's queue, starts the service on the app node's queue, calibrates there (after
// provisioning, not on the control host), brings up, seeds, measures, runs the ceiling and the
// denominator, tears everything down by tag (moto holds nothing of it after) and stops the service
// (the local clean check finds nothing), and the report re-derives its figures.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import type { CampaignSpecInput } from '../../lib/protocol/spec';
import { awsClients } from '../../lib/targets/aws/clients';
import { EMULATOR_MAP_ENV } from '../../lib/targets/aws/emulator-map';
import { findRigResources } from '../../lib/targets/aws/find';
import { awsAppQueue, awsDataQueue } from '../../lib/temporal/queues';
import { campaignEnv, tinySpec } from '../harness/campaign';
import { startMoto, type Moto } from '../harness/moto';
import { throwAwayCluster } from '../harness/pg';

const root = path.resolve(__dirname, '..', '..');
const awsBlock = (JSON.parse(fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8')) as CampaignSpecInput).aws!;
const NO_AMBIENT = { AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/rig-test', AWS_CONFIG_FILE: '/nonexistent/rig-test', AWS_EC2_METADATA_DISABLED: 'true', AWS_PROFILE: '' };

let moto: Moto;
before(async () => {
  moto = await startMoto();
  Object.assign(process.env, NO_AMBIENT, { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing', AWS_REGION: awsBlock.region, RIG_AWS_ENDPOINT: moto.endpoint });
});
after(async () => {
  delete process.env[EMULATOR_MAP_ENV];
  await moto?.stop();
});

async function rigResources(campaignId: string): Promise<string[]> {
  const c = awsClients(awsBlock.region);
  try {
    return (await findRigResources(c, campaignId)).map((r) => `${r.kind} ${r.id}`);
  } finally {
    c.destroy();
  }
}

test('a whole campaign on the aws target runs every step on the rig\'s own queues and leaves nothing behind', async () => {
  const id = 'aws-whole';
  // RDS's master user is rig_admin (provision.ts); the stand-in cluster has it as its superuser.
  // (Both helpers register their own `after`: they are called here, in the test, not in a `before` hook.)
  const db = await throwAwayCluster({ superuser: 'rig_admin', parameters: { log_checkpoints: 'on', log_autovacuum_min_duration: 0 } });
  process.env[EMULATOR_MAP_ENV] = JSON.stringify({ db: `${db.host}:${db.port}`, postgresLog: db.logFile });
  const env = await campaignEnv();
  await env.inProcessWorker();
  // This machine plays both nodes: the workers their user data would start, on the queues derived from the campaign.
  await env.inProcessWorker([awsDataQueue(id), awsAppQueue(id)]);
  const spec = tinySpec({
    target: 'aws',
    aws: awsBlock,
    calibrate: true,
    seed: { customers: 20, historyRows: 2000 },
    sustained: { ...tinySpec().sustained!, repeats: 2, warmupSeconds: 2, cooldownSeconds: 1 },
    ceiling: { workers: 2, batch: 50, seconds: 3 },
    denominator: { batch: 50, clients: 2, seconds: 3 },
  });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] });
  const result = (await handle.result()) as CampaignResult;

  const steps = result.steps.map((s) => `${s.step}:${s.status}`);
  const order = result.steps.map((s) => s.step);
  for (const s of ['clean-check', 'provision', 'prepare', 'service', 'calibrate', 'bring-up', 'seed', 'sustained', 'ceiling', 'denominator', 'teardown', 'clean-check-after', 'report']) {
    assert.ok(steps.includes(`${s}:ok`), `${s} ran and was ok: ${JSON.stringify(result.steps.map((x) => [x.step, x.status, x.summary]))}`);
  }
  assert.ok(order.indexOf('provision') < order.indexOf('calibrate'), 'an aws rig is calibrated on its load node, after provisioning');
  assert.ok(order.indexOf('service') < order.indexOf('bring-up'));

  // The rig was AWS's: tagged resources, the data plane on the load node's queue.
  const provision = result.steps.find((s) => s.step === 'provision')!;
  assert.match(provision.summary, /RDS db\.m7g\.2xlarge PostgreSQL 16\.4 .* us-east-1a/);
  assert.match(provision.summary, /rig-aws-whole-[0-9a-f]{8}\.aaaaaaaaaa\.us-east-1\.rds\.amazonaws\.com:5432\/hardcount/);
  const log = fs.readFileSync(path.join(result.resultsDir, 'campaign.log'), 'utf8');
  assert.match(log, /database prepared on the load node/);
  assert.match(log, /service started on the app node at http:\/\/127\.0\.0\.1:\d+/);
  assert.match(log, /bring-up check availability-zone: app and database both in us-east-1a/);

  // Every repeat judged, its evidence (the stand-in cluster's Postgres log slice included) on disk.
  assert.equal(result.repeats.length, 2);
  for (const r of result.repeats) {
    const dir = path.join(result.resultsDir, 'repeats', r.configuration, `r${r.index}-a${r.attempt}`);
    assert.ok(fs.existsSync(path.join(dir, 'verdict.json')), `${dir}/verdict.json`);
    assert.ok(fs.existsSync(path.join(dir, 'postgres.log')), `${dir}/postgres.log`);
  }
  assert.ok(fs.existsSync(path.join(result.resultsDir, 'report.md')));

  // Nothing left: not on AWS (by tag), not on this machine (the emulated app node's service).
  assert.deepEqual(await rigResources(id), []);
  await env.assertClean();
});

// test-mode: alone
// Alone: its two repeats must both count (countedRepeats), and the instrument gate judges a repeat
// invalid when this host's generator runs late; beside other files (load average 22), one of the two
// was invalid twice and not counted. (Its calibration, the other reason it was alone, is a stand-in.)
// One whole campaign with target "aws", every step run: a real moto 5.2.5 for AWS's control plane
// (EC2, RDS, Secrets Manager, S3, IAM), a real Temporal dev server, the control host's worker in this
// process, and the two nodes' workers as `rig worker --task-queue Q` child processes, each with its
// own state and results folders as a node has (so the evidence they write reaches the control host
// only through the campaign's bucket, lib/targets/aws/evidence-sync.ts), and, through the test-only RIG_AWS_EMULATOR_MAP (lib/targets/aws/emulator-map.ts), a real local
// PostgreSQL cluster standing in for the RDS endpoint moto returns (nothing listens there). The
// cluster trusts loopback connections: the passwords the rig reads from Secrets Manager (the master's
// from RDS's own secret, the roles' from the rig's) are sent and not checked, which no test here can
// change (moto's master secret holds a canned password).
//
// With moto's IAM enforcement on (issue 23), each part as the identity it has in the cloud
// (test/harness/aws-campaign.ts): the control host's worker as an IAM user holding only the documented
// policies (docs/aws-iam-policy-*.json), the nodes' workers as a user holding only the inline policy the
// campaign's provisioning put on the nodes' role (read back from moto, so it is what a node really gets;
// the keys reach the child processes only through their environment), and the test's own looks as an
// admin. What moto checks is the action of every call and, for S3 alone, the resource
// (test/harness/iam-enforced.ts): it forgives what AWS would refuse by resource ARN or condition (the
// `rig:campaign` tag conditions, the secrets' and the database's ARNs, iam:PassRole's
// iam:PassedToService), so those are still proven only against the documentation. What it does prove
// is that no call of a whole campaign, the nodes' included, needs an action their policy lacks, and
// that the nodes write their evidence only under the S3 prefix their policy names. Not reached here: the
// nodes' user data (the package's GetObject, the Temporal secret's read: the workers are started
// directly), the RDS log-file reads (the stand-in's log is read from its file) and Performance
// Insights (moto does not serve it; its file records that error, which is shown, not failed on).
// aws-campaign-iam.test.ts removes one action and shows the failure.
//
// The calibrate step runs where an AWS rig runs it (on the load node's queue, after provisioning), but
// what it records is a test's stand-in (test/harness/calibration-stand-in.ts, honoured only under
// RIG_TESTING=1): a real calibration judges this host's timing, so this file needed the host to itself
// (beside other files, a late generator refused it: schedule lag p99 26 ms > 25 ms), and what it shows
// is the AWS campaign, not the instrument (calibration-activity.test.ts and calibrate-command.test.ts
// show a real one). The stand-in's calibration.json is still written by the load node's worker in its
// own folder and reaches the control host through the bucket.
//
// What it shows: the campaign provisions on AWS (tagged, in the spec's zone), prepares the database
// from the load node's queue, starts the service on the app node's queue, calibrates there (after
// provisioning, not on the control host), brings up, seeds, measures, runs the ceiling and the
// denominator, tears everything down by tag (moto holds nothing of it after) and stops the service
// (the local clean check finds nothing), and the report, on the control host, sees every repeat the
// load node measured.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { DeleteDBInstanceCommand } from '@aws-sdk/client-rds';
import { temporal } from '@temporalio/proto';
import { CALIBRATION_FILE, CLOUD_FILES } from '../../lib/evidence/layout';
import { buildReportModel, loadEvidence } from '../../lib/evidence/report';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { EMULATOR_MAP_ENV } from '../../lib/targets/aws/emulator-map';
import { findRigResources } from '../../lib/targets/aws/find';
import { rigNames } from '../../lib/targets/aws/names';
import { awsAppQueue, awsDataQueue } from '../../lib/temporal/queues';
import { exampleInput, standInDatabase, TEST_CREDS, useMoto } from '../harness/aws-env';
import { campaignEnv, saveHistory, tinySpec } from '../harness/campaign';
import { standInCalibrationEnv } from '../harness/calibration-stand-in';
import { campaignIdentities, grantNodePolicy, MOTO_ACCOUNT, nodeFolders, nodeWorker, rigResourcesAs, withClientsAs, type CampaignIdentities } from '../harness/aws-campaign';
import type { PolicyStatement } from '../harness/iam-enforced';
import { countedRepeats } from '../../lib/protocol/repeat-validity';

const awsBlock = exampleInput.aws!;
let who: CampaignIdentities;
// RIG_STATE_DIR is campaignEnv()'s. Once moto answers: the three users, enforcement on, and this
// process's keys the control host's (its worker reads them; campaignEnv() copies them into childEnv,
// which the nodes' workers override with their own).
const moto = useMoto({
  stateDir: false,
  clearEnv: [EMULATOR_MAP_ENV],
  afterStart: async () => {
    who = await moto.withClients((c) => campaignIdentities(c, moto.endpoint));
    Object.assign(process.env, who.control);
  },
});
const rigResources = (id: string) => rigResourcesAs(who.admin, moto.region, moto.endpoint, id);

const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

test('a whole campaign on the aws target runs every step on the rig\'s own queues, the report sees what the load node measured, and nothing is left behind', async (t) => {
  const id = 'aws-whole';
  // RDS's master user is rig_admin (provision.ts); the stand-in cluster (RDS-fidelity mode) has it as a non-superuser admin and requires TLS.
  // (Both helpers register their own `after`: they are called here, in the test, not in a `before` hook.)
  const { map } = await standInDatabase({ parameters: { log_checkpoints: 'on', log_autovacuum_min_duration: 0 } });
  const appFolders = nodeFolders('app');
  const env = await campaignEnv();
  // The control host's worker (this process) knows where the emulated app node keeps its service.
  process.env[EMULATOR_MAP_ENV] = JSON.stringify({ ...map, appNodeStateDir: appFolders.stateDir });
  await env.inProcessWorker();
  const nodeEnv = {
    ...env.childEnv,
    ...who.node,
    [EMULATOR_MAP_ENV]: JSON.stringify(map),
    RIG_AWS_ARTIFACTS_BUCKET: rigNames(id).artifactsBucket(MOTO_ACCOUNT),
    // The load node's worker records the calibrate step's stand-in (the header says why).
    ...standInCalibrationEnv('test/campaign/aws-campaign.test.ts: what is shown is where the AWS rig calibrates, not the instrument'),
  };
  const spec = tinySpec({
    target: 'aws',
    aws: awsBlock,
    calibrate: true,
    seed: { customers: 20, historyRows: 2000 },
    sustained: { ...tinySpec().sustained!, repeats: 2, warmupSeconds: 2, cooldownSeconds: 1 },
    ceiling: { workers: 2, batch: 50, seconds: 2 },
    denominator: { batch: 50, clients: 2, seconds: 2 },
  });
  // Enforcement is on: moto's default credentials (those of every other AWS test here) are not even a user.
  await assert.rejects(withClientsAs(TEST_CREDS, moto.region, moto.endpoint, (c) => findRigResources(c, id)), { name: 'AuthFailure' });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] });
  // The nodes boot once provisioning has launched them, their role's policy already in place: their
  // workers start with that policy on their user (their queues hold the campaign's tasks until then).
  const nodePolicy = await grantNodePolicy(who.admin, moto.region, moto.endpoint, handle);
  const [load] = await Promise.all([nodeWorker('load', awsDataQueue(id), nodeEnv, children), nodeWorker('app', awsAppQueue(id), nodeEnv, children, appFolders)]);
  const result = (await handle.result()) as CampaignResult;

  const steps = result.steps.map((s) => `${s.step}:${s.status}`);
  const order = result.steps.map((s) => s.step);
  for (const s of ['clean-check', 'provision', 'database', 'prepare', 'service', 'calibrate', 'bring-up', 'seed', 'sustained', 'ceiling', 'denominator', 'teardown', 'clean-check-after', 'report']) {
    assert.ok(steps.includes(`${s}:ok`), `${s} ran and was ok: ${JSON.stringify(result.steps.map((x) => [x.step, x.status, x.summary]))}`);
  }
  assert.ok(order.indexOf('provision') < order.indexOf('calibrate'), 'an aws rig is calibrated on its load node, after provisioning');
  assert.ok(order.indexOf('service') < order.indexOf('bring-up'));

  assert.ok(order.indexOf('provision') < order.indexOf('database') && order.indexOf('database') < order.indexOf('prepare'), 'RDS is waited for in its own step, between provisioning and prepare');

  // The rig was AWS's: tagged resources, the data plane on the load node's queue. Provisioning made and
  // launched; the database step waited for RDS and says what it became.
  assert.match(result.steps.find((s) => s.step === 'provision')!.summary, /; made and launched, the database waited for apart$/);
  const provision = result.steps.find((s) => s.step === 'database')!;
  assert.match(provision.summary, /RDS db\.m7g\.2xlarge PostgreSQL 16\.9 .* us-east-1a; node AMI ami-065b1b834d2a83a7a \(al2023-ami-2023\.[^)]*-arm64\); RDS CA bundle .* sha256 [0-9a-f]{64}; RDS set up for measuring: backups off \(retention 0\), auto minor version upgrade off, deletion protection off, /);
  assert.match(provision.summary, /rig-aws-whole-[0-9a-f]{8}\.aaaaaaaaaa\.us-east-1\.rds\.amazonaws\.com:5432\/hardcount/);
  const teardown = result.steps.find((s) => s.step === 'teardown')!;
  assert.match(teardown.summary, /the nodes' evidence: [1-9]\d* file\(s\) brought here/, teardown.summary);

  // What the nodes wrote in their own folders reached the control host's, through the bucket.
  assert.ok(result.resultsDir.startsWith(process.env.RIG_RESULTS!), 'the report is the control host\'s');
  const nodeDir = path.join(load.resultsDir, id);
  assert.ok(fs.existsSync(path.join(nodeDir, CALIBRATION_FILE)), 'the load node calibrated, in its own folder');
  assert.ok((JSON.parse(fs.readFileSync(path.join(nodeDir, CALIBRATION_FILE), 'utf8')) as { test_stand_in?: string }).test_stand_in, 'the stand-in, recorded by the load node\'s worker (the variable is in its environment alone)');
  assert.ok(fs.existsSync(path.join(result.resultsDir, CALIBRATION_FILE)), 'and the control host has its calibration');
  const log = fs.readFileSync(path.join(result.resultsDir, 'campaign.log'), 'utf8');
  assert.match(log, /database prepared on the load node/);
  assert.match(log, /service started on the app node at http:\/\/127\.0\.0\.1:\d+/);
  assert.match(log, /bring-up check availability-zone: app and database both in us-east-1a/);
  assert.ok(fs.existsSync(path.join(result.resultsDir, 'nodes', 'load', 'campaign.log')), 'the load node\'s own log, kept whole');
  assert.ok(fs.existsSync(path.join(result.resultsDir, 'nodes', 'app', 'campaign.log')), 'the app node\'s own log, kept whole');

  // Every repeat judged on the load node, its evidence (the stand-in cluster's Postgres log slice included) in the control host's folder.
  assert.equal(countedRepeats(result.repeats).length, 2, 'two counted repeats (one invalid on the host\'s account is kept and run again, issue 34)');
  for (const r of result.repeats) {
    const rel = path.join('repeats', r.configuration, `r${r.index}-a${r.attempt}`);
    for (const f of ['verdict.json', 'postgres.log']) {
      assert.ok(fs.existsSync(path.join(nodeDir, rel, f)), `written on the load node: ${rel}/${f}`);
      assert.ok(fs.existsSync(path.join(result.resultsDir, rel, f)), `gathered to the control host: ${rel}/${f}`);
    }
  }
  // The load node's cloud evidence reads (CloudWatch, Enhanced Monitoring, Performance Insights) never
  // fail a repeat: a refusal would only be an `{ error }` in its file. None is an authorization refusal
  // (what moto does not serve, Performance Insights, may be another error: shown, not failed on).
  for (const r of result.repeats) {
    for (const f of CLOUD_FILES) {
      const file = path.join(result.resultsDir, 'repeats', r.configuration, `r${r.index}-a${r.attempt}`, f);
      assert.ok(fs.existsSync(file), `the load node collected ${f} for r${r.index}`);
      const error = (JSON.parse(fs.readFileSync(file, 'utf8')) as { error?: string }).error;
      if (error) t.diagnostic(`r${r.index} ${f}: ${error}`);
      assert.doesNotMatch(error ?? '', /not authorized|AccessDenied|UnauthorizedOperation/i, `${f} of r${r.index}`);
    }
  }
  const page = fs.readFileSync(path.join(result.resultsDir, 'report.md'), 'utf8');
  for (const r of result.repeats) assert.match(page, new RegExp(`r${r.index}-a${r.attempt}`), `the page shows ${r.configuration} r${r.index}`);
  // The app node sampled its own host all campaign long; after every repeat its samples went home, and
  // the page shows each repeat's window of them beside the load node's.
  assert.ok(!result.steps.some((s) => s.step === 'app-node'), `no app node step failed: ${JSON.stringify(result.steps.filter((s) => s.step === 'app-node'))}`);
  assert.ok(fs.readdirSync(path.join(appFolders.resultsDir, id, 'app-node')).length >= 1, 'written on the app node');
  assert.ok(fs.readdirSync(path.join(result.resultsDir, 'app-node')).some((f) => /^host-samples-\d{8}T\d{2}\.jsonl$/.test(f)), 'gathered to the control host');
  const model = buildReportModel(await loadEvidence(result.resultsDir));
  for (const r of model.configurations.flatMap((c) => c.repeats)) {
    assert.ok(r.app_node && r.app_node.rows >= 1, `${r.id} has the app node's host samples of its window: ${JSON.stringify(r.app_node)}`);
  }
  assert.match(page, /app node CPU busy/);
  // The nodes' AMI, from the SSM public parameter (moto's al2023-ami-kernel-default-arm64), by id and name on the page's hardware row.
  assert.match(page, /node AMI ami-065b1b834d2a83a7a \(al2023-ami-2023\.[^)]*-kernel-[^)]*-arm64\)/);
  // The cost is the rig's as the price table gives it (the spec's hardware block names no price), with its source and what it covers.
  assert.match(page, /\$1\.30\/hour \(prices: AWS on-demand price pages .*as of \d{4}-\d{2}-\d{2}/);
  assert.match(page, /it covers the RDS instance, its gp3 storage, the app node and the load node, their public IPv4 addresses and root volumes, and Enhanced Monitoring's log ingestion/);
  // ... and what else the bill holds: the plan's total, the worst case at the watchdog deadline, RDS's minimum.
  assert.match(page, /expected \([\d.]+ min from provisioning to the report, each step's typical time\): \$[\d.]+/);
  assert.match(page, /the plan as allowed \([\d.]+ min from provisioning to the report, what the watchdog covers\): \$[\d.]+ at \$1\.3024\/hour/);
  assert.match(page, /worst case, teardown failing and the rig running to its watchdog deadline \(\d+ min\): \$[\d.]+/);
  assert.match(page, /RDS bills at least 10 minutes/);

  // Every connection was TLS, verified against the stand-in's CA: it refuses plaintext, so a step that
  // tried would have failed; none was even attempted.
  assert.doesNotMatch(fs.readFileSync(map.postgresLog, 'utf8'), /no pg_hba\.conf entry/);

  // The nodes ran on their role's policy alone: the package and secrets it names, their own database's
  // reads, and evidence written only under the campaign's prefix (S3's resource is checked by moto).
  const nodeActions = nodePolicy.Statement.flatMap((st: PolicyStatement) => (Array.isArray(st.Action) ? st.Action : [st.Action]));
  for (const a of ['s3:PutObject', 'secretsmanager:GetSecretValue', 'rds:DescribeDBInstances']) assert.ok(nodeActions.includes(a), `the nodes' policy grants ${a}: ${nodeActions.join(', ')}`);
  assert.ok(!nodeActions.some((a) => /^(ec2:(Run|Terminate)|rds:(Create|Delete)|iam:)/.test(a)), `the nodes may not make or remove the rig: ${nodeActions.join(', ')}`);
  // ... and moto held the nodes' user to it: what the policy does not name is refused.
  await assert.rejects(withClientsAs(who.node, moto.region, moto.endpoint, (c) => c.rds.send(new DeleteDBInstanceCommand({ DBInstanceIdentifier: rigNames(id).dbInstance, SkipFinalSnapshot: true }))), /not authorized to perform:? rds:DeleteDBInstance\b/);

  // The keys reached the workers only through their environment: no IAM user's key id or secret is
  // anywhere in the campaign's history (its payloads are JSON, kept as bytes in the encoded history).
  const history = Buffer.from(temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish()).toString('latin1');
  for (const k of [who.control, who.node, who.admin]) assert.ok(!history.includes(k.AWS_ACCESS_KEY_ID) && !history.includes(k.AWS_SECRET_ACCESS_KEY), 'no AWS key in the workflow history');
  assert.ok(history.includes(id), 'the history searched is the campaign\'s');

  // Nothing left: not on AWS (by tag), not on this machine (the emulated app node's service).
  assert.deepEqual(await rigResources(id), []);
  await env.assertClean();
  // The path recorded and replayed against the code that made it (test/harness/recorded-replay.ts).
  await saveHistory(env.address, id);
});

// test-mode: alone
// Alone: the campaign calibrates the instrument on the (emulated) load node, and a calibration judges
// this host's timing (beside other files, a late generator refused it: schedule lag p99 26 ms > 25 ms).
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
// What it shows: the campaign provisions on AWS (tagged, in the spec's zone), prepares the database
// from the load node's queue, starts the service on the app node's queue, calibrates there (after
// provisioning, not on the control host), brings up, seeds, measures, runs the ceiling and the
// denominator, tears everything down by tag (moto holds nothing of it after) and stops the service
// (the local clean check finds nothing), and the report, on the control host, sees every repeat the
// load node measured.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { CALIBRATION_FILE } from '../../lib/evidence/layout';
import { buildReportModel, loadEvidence } from '../../lib/evidence/report';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { EMULATOR_MAP_ENV } from '../../lib/targets/aws/emulator-map';
import { rigNames } from '../../lib/targets/aws/names';
import { awsAppQueue, awsDataQueue } from '../../lib/temporal/queues';
import { exampleInput, standInDatabase, useMoto } from '../harness/aws-env';
import { campaignEnv, saveHistory, tinySpec } from '../harness/campaign';
import { spawnRigWorker } from '../harness/worker-process';

const awsBlock = exampleInput.aws!;
// RIG_STATE_DIR is campaignEnv()'s.
const { rigResources } = useMoto({ stateDir: false, clearEnv: [EMULATOR_MAP_ENV] });

/** moto's account: the artifacts bucket's name carries it. */
const MOTO_ACCOUNT = '123456789012';
const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

/** A node's own state and results folders. */
function nodeFolders(node: 'load' | 'app'): { stateDir: string; resultsDir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rig-aws-${node}-node-`));
  return { stateDir: path.join(dir, 'state'), resultsDir: path.join(dir, 'state', 'results') };
}

/** A node's worker: `rig worker --task-queue Q` in a child process, with the node's own folders and the settings its user data gives it. */
async function nodeWorker(node: 'load' | 'app', queue: string, env: NodeJS.ProcessEnv, folders = nodeFolders(node)): Promise<{ stateDir: string; resultsDir: string }> {
  await spawnRigWorker({
    env: { ...env, RIG_STATE_DIR: folders.stateDir, RIG_RESULTS: folders.resultsDir, RIG_AWS_NODE: node },
    args: ['--task-queue', queue],
    children,
    name: `the ${node} node's worker`,
  });
  return folders;
}

test('a whole campaign on the aws target runs every step on the rig\'s own queues, the report sees what the load node measured, and nothing is left behind', async () => {
  const id = 'aws-whole';
  // RDS's master user is rig_admin (provision.ts); the stand-in cluster (RDS-fidelity mode) has it as a non-superuser admin and requires TLS.
  // (Both helpers register their own `after`: they are called here, in the test, not in a `before` hook.)
  const { map } = await standInDatabase({ parameters: { log_checkpoints: 'on', log_autovacuum_min_duration: 0 } });
  const appFolders = nodeFolders('app');
  const env = await campaignEnv();
  // The control host's worker (this process) knows where the emulated app node keeps its service.
  process.env[EMULATOR_MAP_ENV] = JSON.stringify({ ...map, appNodeStateDir: appFolders.stateDir });
  await env.inProcessWorker();
  const nodeEnv = { ...env.childEnv, [EMULATOR_MAP_ENV]: JSON.stringify(map), RIG_AWS_ARTIFACTS_BUCKET: rigNames(id).artifactsBucket(MOTO_ACCOUNT) };
  const load = await nodeWorker('load', awsDataQueue(id), nodeEnv);
  await nodeWorker('app', awsAppQueue(id), nodeEnv, appFolders);
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
  assert.match(provision.summary, /RDS db\.m7g\.2xlarge PostgreSQL 16\.9 .* us-east-1a; RDS set up for measuring: backups off \(retention 0\), auto minor version upgrade off, deletion protection off, /);
  assert.match(provision.summary, /rig-aws-whole-[0-9a-f]{8}\.aaaaaaaaaa\.us-east-1\.rds\.amazonaws\.com:5432\/hardcount/);
  const teardown = result.steps.find((s) => s.step === 'teardown')!;
  assert.match(teardown.summary, /the nodes' evidence: [1-9]\d* file\(s\) brought here/, teardown.summary);

  // What the nodes wrote in their own folders reached the control host's, through the bucket.
  assert.ok(result.resultsDir.startsWith(process.env.RIG_RESULTS!), 'the report is the control host\'s');
  const nodeDir = path.join(load.resultsDir, id);
  assert.ok(fs.existsSync(path.join(nodeDir, CALIBRATION_FILE)), 'the load node calibrated, in its own folder');
  assert.ok(fs.existsSync(path.join(result.resultsDir, CALIBRATION_FILE)), 'and the control host has its calibration');
  const log = fs.readFileSync(path.join(result.resultsDir, 'campaign.log'), 'utf8');
  assert.match(log, /database prepared on the load node/);
  assert.match(log, /service started on the app node at http:\/\/127\.0\.0\.1:\d+/);
  assert.match(log, /bring-up check availability-zone: app and database both in us-east-1a/);
  assert.ok(fs.existsSync(path.join(result.resultsDir, 'nodes', 'load', 'campaign.log')), 'the load node\'s own log, kept whole');
  assert.ok(fs.existsSync(path.join(result.resultsDir, 'nodes', 'app', 'campaign.log')), 'the app node\'s own log, kept whole');

  // Every repeat judged on the load node, its evidence (the stand-in cluster's Postgres log slice included) in the control host's folder.
  assert.equal(result.repeats.length, 2);
  for (const r of result.repeats) {
    const rel = path.join('repeats', r.configuration, `r${r.index}-a${r.attempt}`);
    for (const f of ['verdict.json', 'postgres.log']) {
      assert.ok(fs.existsSync(path.join(nodeDir, rel, f)), `written on the load node: ${rel}/${f}`);
      assert.ok(fs.existsSync(path.join(result.resultsDir, rel, f)), `gathered to the control host: ${rel}/${f}`);
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
  // The cost is the rig's as the price table gives it (the spec's hardware block names no price), with its source and what it covers.
  assert.match(page, /\$1\.30\/hour \(prices: AWS on-demand price pages .*as of \d{4}-\d{2}-\d{2}/);
  assert.match(page, /it covers the RDS instance, its gp3 storage, the app node and the load node, their public IPv4 addresses and root volumes, and Enhanced Monitoring's log ingestion/);
  // ... and what else the bill holds: the plan's total, the worst case at the watchdog deadline, RDS's minimum.
  assert.match(page, /the plan \([\d.]+ min from provisioning to the report\): \$[\d.]+ at \$1\.3024\/hour/);
  assert.match(page, /worst case, teardown failing and the rig running to its watchdog deadline \(\d+ min\): \$[\d.]+/);
  assert.match(page, /RDS bills at least 10 minutes/);

  // Every connection was TLS, verified against the stand-in's CA: it refuses plaintext, so a step that
  // tried would have failed; none was even attempted.
  assert.doesNotMatch(fs.readFileSync(map.postgresLog, 'utf8'), /no pg_hba\.conf entry/);

  // Nothing left: not on AWS (by tag), not on this machine (the emulated app node's service).
  assert.deepEqual(await rigResources(id), []);
  await env.assertClean();
  // The path recorded and replayed against the code that made it (test/harness/recorded-replay.ts).
  await saveHistory(env.address, id);
});

// An AWS campaign whose claimed host's worker is gone for good is torn down by another worker: a real
// Temporal dev server, a real moto 5.2.5, a real local PostgreSQL cluster standing in for the RDS
// endpoint (RIG_AWS_EMULATOR_MAP), and two `rig worker` child processes for two hosts: "alpha", to
// which the campaign is pinned (the spec's host: its claim is taken from alpha's own queue) and which
// is killed with SIGKILL once the campaign measures, and "beta", polling the shared queue from the
// start with its own state and results folders (another machine). This process plays the rig's two
// nodes (their workers on the campaign's own queues), as in aws-watchdog.test.ts.
//
// Why: a teardown bound to the claimed host's queue waits for a worker that never comes back, and an
// AWS rig bills meanwhile. workflows/teardown.ts gives the host's queue workerWaitSeconds (10 s here),
// then sends an AWS rig's teardown, which finds everything by the campaign's tag, to the shared queue.
// What it asserts: the rig was up when alpha died; the campaign's teardown was done by beta (its
// summary names the host), RigStatus read teardown-failing while it retried off the host's queue
// (the history's upserts), the clean-check after it ran there too, nothing of the rig is left in moto,
// and the emulated app node's service is stopped. The report, whose evidence is on alpha's disk,
// cannot be written and says so, naming alpha's queue. Then the watchdog's own path: a campaign
// pinned to "gamma" is terminated after gamma's worker is killed; its watchdog sees it closed, gives
// gamma's queue 10 s, and "delta" (another machine) tears the rig down from the shared queue.
//
// The second campaign starts once the first's clean check after teardown has run (the AWS clean check
// looks at the whole region: a second rig in moto would make the other's dirty), while the first waits
// out alpha's queue for its report; this machine's clean check comes after both. Each other machine's
// worker starts beside the claimed host's, before its campaign does (pinned, the campaign cannot be
// claimed by it; until its hand-over nothing the campaign sends to the shared queue is the host's), so
// the kill comes as soon as the series starts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { EMULATOR_MAP_ENV } from '../../lib/targets/aws/emulator-map';
import { awsAppQueue, awsDataQueue } from '../../lib/temporal/queues';
import { exampleInput, standInDatabase, useMoto } from '../harness/aws-env';
import { campaignEnv, saveHistory, tinySpec, waitFor, waitForProgress, type CampaignEnv } from '../harness/campaign';
import { progressQuery, type WatchdogState } from '../../workflows/messages';
import { spawnRigWorker } from '../harness/worker-process';

const awsBlock = exampleInput.aws!;
// RIG_STATE_DIR is campaignEnv()'s.
const { rigResources } = useMoto({ stateDir: false, clearEnv: [EMULATOR_MAP_ENV] });

/** The file's environment: a dev server, the stand-in database, the workers' environment. */
interface Setup {
  env: CampaignEnv;
  workerEnv: NodeJS.ProcessEnv;
  /** The hosts' workers, killed at the end, and their folders, removed. */
  children: Set<ChildProcess>;
  dirs: string[];
}
const CAMPAIGN = 'aws-teardown-anywhere';
const WATCHDOG_CAMPAIGN = 'aws-watchdog-anywhere';

async function setUp(children: Set<ChildProcess>, dirs: string[]): Promise<Setup> {
  const { map } = await standInDatabase();
  const env = await campaignEnv();
  // Every worker stops the emulated app node's service where this process (the node) keeps it.
  process.env[EMULATOR_MAP_ENV] = JSON.stringify({ ...map, appNodeStateDir: process.env.RIG_STATE_DIR! });
  // This process plays both campaigns' nodes: the workers their user data would start, on the queues derived from each campaign.
  await env.inProcessWorker([CAMPAIGN, WATCHDOG_CAMPAIGN].flatMap((id) => [awsDataQueue(id), awsAppQueue(id)]));
  return { env, workerEnv: { ...env.childEnv, [EMULATOR_MAP_ENV]: process.env[EMULATOR_MAP_ENV] }, children, dirs };
}

/**
 * `rig worker` for `host`: the claimed host keeps this machine's state (where the nodes this process
 * plays find the rig's record); another machine has its own state and results folders (no record of the rig).
 */
async function machine({ workerEnv, children, dirs }: Setup, host: string, own: boolean): Promise<ChildProcess> {
  let folders = {};
  if (own) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rig-host-${host}-`));
    dirs.push(dir);
    folders = { RIG_STATE_DIR: path.join(dir, 'state'), RIG_RESULTS: path.join(dir, 'results') };
  }
  return spawnRigWorker({ env: { ...workerEnv, RIG_HOST: host, ...folders }, children, name: `host ${host}'s worker` });
}

const awsSpec = (host: string) =>
  tinySpec({
    target: 'aws',
    aws: awsBlock,
    calibrate: false,
    // Pinned: the claim is taken from the host's own queue, whatever else polls the shared one.
    host,
    // The claimed host's queue is given 10 s before the teardown goes to any worker (600 by default).
    workerWaitSeconds: 10,
    watchdogCheckSeconds: 10,
    // The other machine polls before the campaign starts: the claimed host dies as the series starts, 14 s before it ends.
    sustained: { ...tinySpec().sustained!, repeats: 2, repeatSeconds: 6, cooldownSeconds: 2 },
  });

// One test for both paths: campaignEnv() and standInDatabase() register their `after` on the test that
// calls them, so a second test() would find the server gone.
test('an AWS rig whose claimed host\'s worker is gone for good is torn down by another host\'s worker: by its campaign, and by its watchdog', { timeout: 15 * 60_000 }, async () => {
  const setup = await setUp(new Set(), []);
  try {
    // The campaign's own teardown: pinned to alpha, beta (another machine) already polling, alpha killed as the series starts.
    const [alpha, beta] = await Promise.all([machine(setup, 'alpha', false), machine(setup, 'beta', true)]);
    const first = await measuringOn(setup, CAMPAIGN, 'alpha', alpha);
    // The region is clean again once its clean check after teardown has run: the second campaign may
    // start while the first waits out alpha's queue for its report. Beta's part is over (it tore the
    // rig down): gone before the second campaign's teardown reaches the shared queue.
    await waitFor('the first campaign\'s clean check after its teardown', async () => (await first.describe()).status.name !== 'RUNNING' || (await first.query(progressQuery)).step === 'report', 5 * 60_000);
    beta.kill('SIGKILL');
    // The watchdog's: pinned to gamma, delta (another machine) polling, gamma killed, and the campaign terminated.
    const secondMeasuring = async () => {
      const [gamma] = await Promise.all([machine(setup, 'gamma', false), machine(setup, 'delta', true)]);
      return measuringOn(setup, WATCHDOG_CAMPAIGN, 'gamma', gamma);
    };
    const [second] = await Promise.all([secondMeasuring(), campaignTearsDownAnywhere(setup, first)]);
    await watchdogTearsDownAnywhere(setup, second);
    // Nothing left on this machine either: the emulated app node's service of each campaign is stopped.
    await setup.env.assertClean();
  } finally {
    for (const c of setup.children) c.kill('SIGKILL');
    for (const d of setup.dirs) fs.rmSync(d, { recursive: true, force: true });
  }
});

/**
 * The campaign `id`, pinned to `host` and measuring on its provisioned rig; then `host`'s worker is
 * killed for good (SIGKILL).
 */
async function measuringOn({ env }: Setup, id: string, host: string, hostWorker: ChildProcess): Promise<WorkflowHandle> {
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [awsSpec(host)] });
  await waitForProgress(handle, `${host} to claim the campaign and measure on the provisioned rig`, (p) => p.host === host && p.step === 'sustained', 5 * 60_000);
  assert.equal((await rigResources(id)).length, 12, 'the whole rig is up');
  const gone = new Promise((r) => hostWorker.once('exit', r));
  hostWorker.kill('SIGKILL');
  await gone;
  return handle;
}

/** The campaign's own teardown, after its host's worker died mid-series. */
async function campaignTearsDownAnywhere({ env }: Setup, handle: WorkflowHandle): Promise<void> {
  const id = handle.workflowId;
  const outcome = await handle.result().then(
    (r) => r as CampaignResult,
    (e: unknown) => {
      if (!(e instanceof WorkflowFailedError)) throw e;
      return (e.cause as { details?: unknown[] }).details?.[0] as CampaignResult;
    },
  );
  const steps = Object.fromEntries(outcome.steps.map((s) => [s.step, s]));
  const all = JSON.stringify(outcome.steps.map((s) => [s.step, s.status, s.summary]));
  assert.equal(steps.teardown?.status, 'ok', all);
  assert.match(steps.teardown!.summary, /^removed 13 \(.*app-node .*load-node .*db-instance .*; by the worker of host beta$/, 'torn down by beta');
  assert.equal(steps['clean-check-after']?.status, 'ok', all);
  assert.equal(steps['clean-check-after']!.summary, 'clean');
  assert.equal(outcome.rig, 'destroyed');
  // The evidence folder is on alpha's disk: the page cannot be made elsewhere, and the campaign says why.
  assert.equal(outcome.status, 'failed');
  assert.match(outcome.error ?? '', /report failed: no worker took finishCampaign from the task queue rig-host-alpha within 10 seconds/);

  // While it retried off alpha's queue, RigStatus read teardown-failing; then the campaign's end.
  const upserts: string[] = [];
  for (const ev of (await handle.fetchHistory()).events ?? []) {
    const fields = ev.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    const status = fields?.RigStatus?.data;
    if (status) upserts.push(JSON.parse(Buffer.from(status).toString()) as string);
  }
  assert.deepEqual(upserts, ['running', 'teardown-failing', 'running', 'failed']);

  // Nothing left on AWS (by tag); on this machine (the emulated app node's service), the test's end looks.
  assert.deepEqual(await rigResources(id), []);
  // The path recorded and replayed against the code that made it (test/harness/recorded-replay.ts).
  await saveHistory(env.address, id);
}

/** The watchdog's teardown, after both its campaign (terminated) and the campaign's host's worker are gone. */
async function watchdogTearsDownAnywhere({ env }: Setup, handle: WorkflowHandle): Promise<void> {
  const id = handle.workflowId;
  // Both gone: the host that made the rig, and the campaign (nothing of its own end runs).
  await handle.terminate('test: the campaign is killed after its host');
  const watchdog = env.client.workflow.getHandle(`${id}.watchdog`);
  const fired = (await watchdog.result()) as WatchdogState;
  assert.equal(fired.state, 'fired');
  assert.equal(fired.firedBy, `the campaign ${id} closed (terminated) without disarming`);
  assert.deepEqual(await rigResources(id), [], 'nothing of the rig is left');
  // Its teardown: first on gamma's queue (no worker within 10 s), then on the shared queue, where delta took it.
  const events = (await watchdog.fetchHistory()).events ?? [];
  const queues = events.map((e) => e.activityTaskScheduledEventAttributes).filter((a) => a?.activityType?.name === 'teardownRig').map((a) => a?.taskQueue?.name);
  assert.deepEqual(queues, ['rig-host-gamma', 'rig']);
  const done = events.map((e) => e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data).filter(Boolean).map((d) => Buffer.from(d!).toString());
  assert.ok(done.some((r) => /removed 13 .*; by the worker of host delta/.test(r)), `delta's teardown: ${done.join(' | ')}`);
  await saveHistory(env.address, `${id}.watchdog`);
}

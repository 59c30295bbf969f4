// An AWS campaign whose claimed host's worker is gone for good is torn down by another worker: a real
// Temporal dev server, a real moto 5.2.5, a real local PostgreSQL cluster standing in for the RDS
// endpoint (RIG_AWS_EMULATOR_MAP), and two `rig worker` child processes for two hosts: "alpha", which
// claims the campaign and is then killed with SIGKILL while the campaign measures, and "beta", started
// after the claim with its own state and results folders (another machine). This process plays the
// rig's two nodes (their workers on the campaign's own queues), as in aws-watchdog.test.ts.
//
// Why: a teardown bound to the claimed host's queue waits for a worker that never comes back, and an
// AWS rig bills meanwhile. workflows/teardown.ts gives the host's queue workerWaitSeconds (10 s here),
// then sends an AWS rig's teardown, which finds everything by the campaign's tag, to the shared queue.
// What it asserts: the rig was up when alpha died; the campaign's teardown was done by beta (its
// summary names the host), RigStatus read teardown-failing while it retried off the host's queue
// (the history's upserts), the clean-check after it ran there too, nothing of the rig is left in moto,
// and the emulated app node's service is stopped. The report, whose evidence is on alpha's disk,
// cannot be written and says so, naming alpha's queue. Then the watchdog's own path: a campaign
// claimed by "gamma" is terminated after gamma's worker is killed; its watchdog sees it closed, gives
// gamma's queue 10 s, and "delta" (another machine) tears the rig down from the shared queue.
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
import { campaignEnv, saveHistory, tinySpec, waitForProgress, type CampaignEnv } from '../harness/campaign';
import type { WatchdogState } from '../../workflows/messages';
import { spawnRigWorker } from '../harness/worker-process';

const awsBlock = exampleInput.aws!;
// RIG_STATE_DIR is campaignEnv()'s.
const { rigResources } = useMoto({ stateDir: false, clearEnv: [EMULATOR_MAP_ENV] });

/** The file's environment: a dev server, the stand-in database, the workers' environment. */
interface Setup {
  env: CampaignEnv;
  workerEnv: NodeJS.ProcessEnv;
}
async function setUp(): Promise<Setup> {
  const { map } = await standInDatabase();
  const env = await campaignEnv();
  // Every worker stops the emulated app node's service where this process (the node) keeps it.
  process.env[EMULATOR_MAP_ENV] = JSON.stringify({ ...map, appNodeStateDir: process.env.RIG_STATE_DIR! });
  return { env, workerEnv: { ...env.childEnv, [EMULATOR_MAP_ENV]: process.env[EMULATOR_MAP_ENV] } };
}

/** `rig worker` for another machine: its own state and results folders (no record of the rig). */
async function otherMachine(host: string, workerEnv: NodeJS.ProcessEnv, children: Set<ChildProcess>, dirs: string[]): Promise<ChildProcess> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rig-host-${host}-`));
  dirs.push(dir);
  return spawnRigWorker({ env: { ...workerEnv, RIG_HOST: host, RIG_STATE_DIR: path.join(dir, 'state'), RIG_RESULTS: path.join(dir, 'results') }, children, name: `host ${host}'s worker` });
}

const awsSpec = () =>
  tinySpec({
    target: 'aws',
    aws: awsBlock,
    calibrate: false,
    // The claimed host's queue is given 10 s before the teardown goes to any worker (600 by default).
    workerWaitSeconds: 10,
    watchdogCheckSeconds: 10,
    // A 10-s warm-up: the series outlasts starting the other host's worker, so the claimed host dies mid-series.
    sustained: { ...tinySpec().sustained!, repeats: 2, repeatSeconds: 6, cooldownSeconds: 2, warmupSeconds: 10 },
  });

// One test for both paths: campaignEnv() and standInDatabase() register their `after` on the test that
// calls them, so a second test() would find the server gone.
test('an AWS rig whose claimed host\'s worker is gone for good is torn down by another host\'s worker: by its campaign, and by its watchdog', { timeout: 15 * 60_000 }, async () => {
  const setup = await setUp();
  // The campaign's own teardown: alpha claimed it, beta (another machine) is started, alpha is killed.
  await afterHandOver(setup, { id: 'aws-teardown-anywhere', host: 'alpha', other: 'beta' }, campaignTearsDownAnywhere);
  // The watchdog's: gamma claimed it, delta is started, gamma is killed, and the campaign terminated.
  await afterHandOver(setup, { id: 'aws-watchdog-anywhere', host: 'gamma', other: 'delta' }, watchdogTearsDownAnywhere);
});

/** Claimed by `host`, handed over to `other` (started, then `host` killed for good), then `then`; what was started is ended. */
async function afterHandOver(setup: Setup, p: { id: string; host: string; other: string }, then: (setup: Setup, id: string, handle: WorkflowHandle) => Promise<void>): Promise<void> {
  const claimed = await claimedBy(setup, p.id, p.host);
  try {
    await claimed.handOver(p.other);
    await then(setup, p.id, claimed.handle);
  } finally {
    claimed.cleanUp();
  }
}

interface Claimed {
  handle: WorkflowHandle;
  /** Starts another machine's worker (`other`), then kills the claimed host's for good. */
  handOver(other: string): Promise<void>;
  /** Kills what is left and removes the other machine's folders. */
  cleanUp(): void;
}

/**
 * The campaign `id`, claimed by `host` (the only worker on the shared queue when it starts) and
 * measuring on its provisioned rig; this machine plays the rig's nodes (the workers their user data
 * would start, on the queues derived from the campaign).
 */
async function claimedBy({ env, workerEnv }: Setup, id: string, host: string): Promise<Claimed> {
  const children = new Set<ChildProcess>();
  await env.inProcessWorker([awsDataQueue(id), awsAppQueue(id)]);
  const hostWorker = await spawnRigWorker({ env: { ...workerEnv, RIG_HOST: host }, children, name: `host ${host}'s worker` });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [awsSpec()] });
  await waitForProgress(handle, `${host} to claim the campaign and measure on the provisioned rig`, (p) => p.host === host && p.step === 'sustained', 5 * 60_000);
  assert.equal((await rigResources(id)).length, 12, 'the whole rig is up');
  const dirs: string[] = [];
  return {
    handle,
    async handOver(other: string) {
      await otherMachine(other, workerEnv, children, dirs);
      hostWorker.kill('SIGKILL');
    },
    cleanUp() {
      for (const c of children) c.kill('SIGKILL');
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}

/** The campaign's own teardown, after its host's worker died mid-series. */
async function campaignTearsDownAnywhere({ env }: Setup, id: string, handle: WorkflowHandle): Promise<void> {
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

  // Nothing left: not on AWS (by tag), not on this machine (the emulated app node's service).
  assert.deepEqual(await rigResources(id), []);
  await env.assertClean();
  // The path recorded and replayed against the code that made it (test/harness/recorded-replay.ts).
  await saveHistory(env.address, id);
}

/** The watchdog's teardown, after both its campaign (terminated) and the campaign's host's worker are gone. */
async function watchdogTearsDownAnywhere({ env }: Setup, id: string, handle: WorkflowHandle): Promise<void> {
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
  await env.assertClean();
  await saveHistory(env.address, `${id}.watchdog`);
}

// `rig replay`: the histories a live namespace holds (a campaign, its watchdog, the host's lease)
// replay against this checkout's workflows (exit 0, each named); replayed against other workflow code
// they fail, each named with its error (exit 1 from the command). `--open` leaves a PINNED campaign
// out (it never runs another build) and keeps an unversioned one. On the dev server (the listing
// needs its visibility store, and Worker Deployments) with test-double activities.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { rigWorkflowBundle } from '../../worker/workflow-bundle-cache';
import { captureRig } from '../harness/capture-cli';
import { waitOnCampaign } from '../harness/campaign';
import { PROFILES, type CampaignSpecInput } from '../../lib/protocol/spec';
import { makeCurrent } from '../../lib/temporal/deployment';
import { DEFAULT_REPLAY_QUERY, RIG_WORKFLOW_TYPES, replayNamespace } from '../../lib/temporal/replay';
import { run as replayCommand } from '../../client/commands/replay';
import { UsageError } from '../../client/parse-flags';
import { localDevEnv } from '../harness/temporal';
import { activityDoubles, doubleWorker } from './doubles';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await localDevEnv();
});
after(async () => {
  await env?.teardown();
});

// Real time on the dev server: no cool-downs.
const quick: CampaignSpecInput = { ...PROFILES.rehearsal, sustained: { ...PROFILES.rehearsal.sustained!, cooldownSeconds: 0 } };

async function listed(n: number, query = DEFAULT_REPLAY_QUERY): Promise<void> {
  for (let i = 0; i < 100; i++) {
    let count = 0;
    for await (const wf of env.client.workflow.list({ query })) if (wf.workflowId) count++;
    if (count >= n) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the namespace never listed ${n} executions for ${query}`);
}

/** `rig replay ARGS` against the test's server (in-process, test/harness/capture-cli.ts): its exit code and every line it printed. */
async function replayCli(args: string[]): Promise<{ rc: number; out: string[] }> {
  const saved = { ...process.env };
  process.env.TEMPORAL_ADDRESS = env.address;
  process.env.TEMPORAL_NAMESPACE = 'default';
  try {
    const r = await captureRig(['replay', ...args]);
    return { rc: r.code, out: [...r.out.split('\n'), ...r.err.split('\n')] };
  } finally {
    process.env = saved;
  }
}

test('the namespace\'s campaign, watchdog and lease histories replay against this code; against other code each fails, named', { timeout: 180_000 }, async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-replay' });
  const workers = await Promise.all(
    ['rig', doubles.hostQueue, 'rig-data-replay'].map((taskQueue) =>
      doubleWorker(env.nativeConnection, taskQueue, doubles.activities),
    ),
  );
  await workers.reduce<Promise<unknown>>((p, w) => w.runUntil(p), env.client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: 'replay-me', args: [quick] }));
  await listed(2);

  const ok = await replayNamespace(env.client);
  assert.ok(ok.length >= 2, `histories replayed: ${ok.map((o) => o.workflowId).join(', ')}`);
  assert.deepEqual(ok.filter((o) => o.error), [], 'every history replays against this code');
  assert.ok(ok.some((o) => o.workflowId === 'replay-me') && ok.some((o) => o.workflowId === 'replay-me.watchdog'));

  // Other workflow code (the dev-server fixture's, which has no benchCampaign): each history fails, named.
  const bad = await replayNamespace(env.client, { workflowsPath: require.resolve('../fixtures/workflows') });
  assert.equal(bad.length, ok.length);
  assert.ok(bad.every((o) => o.error), JSON.stringify(bad));

  // The command: exit 0, one line per history and the count.
  const saved = { ...process.env };
  const out: string[] = [];
  const origLog = console.log;
  process.env.TEMPORAL_ADDRESS = env.address;
  process.env.TEMPORAL_NAMESPACE = 'default';
  console.log = (line: string) => out.push(String(line));
  try {
    assert.equal(await replayCommand(['--limit', '50']), 0);
    // The gate before a deploy: the open executions only (the campaign has closed; whatever still runs replays).
    assert.equal(await replayCommand(['--open']), 0);
    await assert.rejects(replayCommand(['--open', '--query', "WorkflowType = 'benchCampaign'"]), (err: Error) => err instanceof UsageError && /^--open and --query go one at a time/.test(err.message), '--open and --query are one or the other (a usage error: exit 2)');
  } finally {
    console.log = origLog;
    process.env = saved;
  }
  assert.ok(out.includes('ok   replay-me'), out.join('\n'));
  assert.ok(!out.slice(out.findIndex((l) => /histories replay/.test(l)) + 1).includes('ok   replay-me'), 'the closed campaign is not among the open ones');
  assert.match(out.find((l) => /histories replay/.test(l)) ?? '', new RegExp(`^${ok.length}/${ok.length} histories replay against this code \\(${env.address.replace(/\./g, '\\.')}, namespace default\\)$`));
});

test('`rig replay --open` leaves an open PINNED campaign out (it never runs this build) and keeps an unversioned one', { timeout: 180_000 }, async () => {
  // Two campaigns held open at their first activity (resolveSpec on \`rig\`, which no worker polls
  // now): one whose first task a versioned worker completed (PINNED, workflows/index.ts), one an
  // unversioned worker's, as a campaign from before versioning is.
  const workflowBundle = await rigWorkflowBundle();
  const version = { deploymentName: 'rig-replay-test', buildId: 'build-a' };
  const versioned = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'rig-pinned',
    workflowBundle,
    workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'AUTO_UPGRADE' },
  });
  const unversioned = await Worker.create({ connection: env.nativeConnection, taskQueue: 'rig-unpinned', workflowBundle });
  // Fails at once when the campaign closes first (waitOnCampaign), not at the bound.
  const firstActivity = (workflowId: string) => {
    const handle = env.client.workflow.getHandle(workflowId);
    return waitOnCampaign(handle, 'its first activity', async () => (await handle.fetchHistory()).events?.some((e) => e.activityTaskScheduledEventAttributes), 60_000, 200);
  };
  await unversioned.runUntil(
    versioned.runUntil(async () => {
      await makeCurrent(env.client.workflowService, 'default', version, 'replay-namespace test');
      await env.client.workflow.start('benchCampaign', { taskQueue: 'rig-pinned', workflowId: 'pinned-campaign', args: [quick] });
      await env.client.workflow.start('benchCampaign', { taskQueue: 'rig-unpinned', workflowId: 'unpinned-campaign', args: [quick] });
      await firstActivity('pinned-campaign');
      await firstActivity('unpinned-campaign');
    }),
  );
  try {
    // The server sets the behaviour's search attribute (it is what the query filters on); the unversioned one has none.
    await listed(1, "WorkflowId = 'pinned-campaign' AND TemporalWorkflowVersioningBehavior = 'Pinned'");
    await listed(1, "WorkflowId = 'unpinned-campaign' AND TemporalWorkflowVersioningBehavior IS NULL");
    // Both are open executions of the rig's workflows: the query before pinning was left out listed both.
    const before = `WorkflowType IN (${RIG_WORKFLOW_TYPES.map((t) => `'${t}'`).join(', ')}) AND ExecutionStatus = 'Running'`;
    await listed(2, `${before} AND WorkflowId IN ('pinned-campaign', 'unpinned-campaign')`);

    const { rc, out } = await replayCli(['--open']);
    assert.equal(rc, 0, out.join('\n'));
    assert.ok(out.includes('ok   unpinned-campaign'), `the unversioned campaign (it moves to the new build) is replayed:\n${out.join('\n')}`);
    assert.ok(!out.some((l) => l.includes('pinned-campaign') && !l.includes('unpinned-campaign')), `the pinned campaign is left out:\n${out.join('\n')}`);
    // The default (open and closed) leaves it out too.
    const all = await replayNamespace(env.client);
    assert.ok(all.some((o) => o.workflowId === 'unpinned-campaign') && !all.some((o) => o.workflowId === 'pinned-campaign'), JSON.stringify(all));
  } finally {
    for (const id of ['pinned-campaign', 'unpinned-campaign']) await env.client.workflow.getHandle(id).terminate('test done').catch(() => undefined);
  }
});

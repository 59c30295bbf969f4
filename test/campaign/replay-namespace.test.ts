// `rig replay`: the histories a live namespace holds (a campaign, its watchdog, the host's lease)
// replay against this checkout's workflows (exit 0, each named); replayed against other workflow code
// they fail, each named with its error (exit 1 from the command). On the dev server (the listing
// needs its visibility store) with test-double activities.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { PROFILES, type CampaignSpecInput } from '../../lib/protocol/spec';
import { DEFAULT_REPLAY_QUERY, replayNamespace } from '../../lib/temporal/replay';
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

async function listed(n: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    let count = 0;
    for await (const wf of env.client.workflow.list({ query: DEFAULT_REPLAY_QUERY })) if (wf.workflowId) count++;
    if (count >= n) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the namespace never listed ${n} rig workflows`);
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

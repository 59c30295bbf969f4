// Crash and resume: the worker process is SIGKILLed once during a repeat and once during a
// cool-down; new workers finish the campaign. The interrupted repeat is recorded and not counted,
// teardown runs, and the machine is clean afterwards.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { campaignEnv, saveHistory, tinySpec, waitForProgress } from '../harness/campaign';
import { countedRepeats } from '../../lib/protocol/repeat-validity';

test('a worker killed mid-repeat and mid-cool-down: the campaign finishes, the interrupted repeat is not counted', async () => {
  const env = await campaignEnv();
  let worker = await env.childWorker();
  const id = 'crash-resume';
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [tinySpec()] });

  // 1. Kill the worker two seconds into repeat 1 (its generator sees its parent go and stops).
  await waitForProgress(handle, 'repeat 1 running', (p) => p.step === 'sustained' && p.phase === 'repeat' && p.repeat?.k === 1);
  await new Promise((r) => setTimeout(r, 2000));
  worker.kill('SIGKILL');
  worker = await env.childWorker();

  // 2. Kill the next worker during a cool-down (after repeat 1 has a verdict).
  await waitForProgress(handle, 'a cool-down', (p) => p.phase === 'cool-down' && p.lastVerdicts.length >= 1, 180_000);
  worker.kill('SIGKILL');
  worker = await env.childWorker();

  const result = (await handle.result()) as CampaignResult;
  worker.kill('SIGTERM');
  await saveHistory(env.address, id, id);

  // The interrupted attempt is recorded, never counted; every repeat has exactly one counted attempt.
  assert.ok(result.interrupted.some((i) => i.configuration === 'single' && i.index === 1 && i.attempt === 1), JSON.stringify(result.interrupted));
  // Counted repeats: a repeat invalid on this host's account (a late generator, steal) is kept and run
  // again (issue 34), never counted; on a loaded host that can happen to any repeat.
  assert.deepEqual(countedRepeats(result.repeats).map((r) => r.index).sort(), [1, 2, 3]);
  assert.equal(result.repeats.find((r) => r.index === 1)!.attempt >= 2, true, 'repeat 1 was run again');
  assert.equal(result.configurations[0].total, 3);
  assert.ok(result.repeats.every((r) => r.runTag !== result.interrupted[0].runTag), 'a fresh run tag');

  // Evidence: the interrupted folder is marked, its partial stream kept.
  const interruptedDir = path.join(result.resultsDir, result.interrupted[0].dir!);
  assert.ok(fs.existsSync(path.join(interruptedDir, 'interrupted.json')));

  // Teardown ran; nothing is left.
  const steps = Object.fromEntries(result.steps.map((s) => [s.step, s.status]));
  assert.equal(steps.teardown, 'ok');
  assert.equal(result.rig, 'destroyed');
  await env.assertClean();
});

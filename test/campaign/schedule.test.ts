// `rig schedule create` makes a Temporal Schedule whose trigger starts a campaign; the scheduled
// workflow id (with the time Temporal appends) maps to a usable evidence folder.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { campaignEnv, tinySpec, waitFor, waitForProgress } from '../harness/campaign';
import { rig } from '../harness/rig-cli';

test('a schedule created with rig schedule create starts a campaign when triggered', async () => {
  const env = await campaignEnv();
  await env.inProcessWorker();
  const specFile = path.join(env.dir, 'weekly.json');
  fs.writeFileSync(specFile, JSON.stringify(tinySpec({ name: 'weekly', sustained: { ...tinySpec().sustained!, repeats: 1 } })));

  const created = await rig(['schedule', 'create', 'weekly', specFile, '--cron', '0 3 * * 1'], env.childEnv);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /schedule weekly created; next run \d{4}-.*; each run times out after 120 min$/m);
  const listed = await rig(['schedule', 'list'], env.childEnv);
  assert.match(listed.stdout, /^weekly\s+active/m);

  const triggered = await rig(['schedule', 'trigger', 'weekly'], env.childEnv);
  assert.equal(triggered.code, 0, triggered.stderr);
  const workflowId = await waitFor('the scheduled campaign', async () => {
    for await (const wf of env.client.workflow.list({ query: `WorkflowType = 'benchCampaign' AND TemporalScheduledById = 'weekly'` })) return wf.workflowId;
    return undefined;
  }, 60_000, 500);
  const handle = env.client.workflow.getHandle(workflowId);
  await waitForProgress(handle, 'the scheduled campaign measuring', (p) => p.step === 'sustained');
  const result = (await handle.result()) as CampaignResult;
  assert.equal(result.configurations[0].total, 1);
  assert.ok(fs.existsSync(path.join(result.resultsDir, 'report.md')), 'its evidence folder has the page');
  assert.doesNotMatch(path.basename(result.resultsDir), /:/);

  // list: the recent run with the campaign's own status and its execution status, and what was skipped
  const after = await rig(['schedule', 'list'], env.childEnv);
  assert.match(after.stdout, /^weekly\s+active\s+next \S+\s+skipped 0 \(a run still going\), missed 0$/m);
  const runLine = after.stdout.split('\n').find((l) => l.startsWith(`  ${workflowId}  `));
  assert.ok(runLine, `a line for ${workflowId}:\n${after.stdout}`);
  assert.match(runLine, new RegExp(`  ${result.status}  completed  started \\d{4}-`));

  const deleted = await rig(['schedule', 'delete', 'weekly'], env.childEnv);
  assert.equal(deleted.code, 0, deleted.stderr);
  await env.assertClean();
});

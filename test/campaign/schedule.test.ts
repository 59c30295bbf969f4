// `rig schedule create` makes a Temporal Schedule whose trigger starts a campaign; the scheduled
// workflow id (with the time Temporal appends) maps to a usable evidence folder; a later run finds the
// newest earlier held run of its schedule as its baseline.
// Schedules a team can rely on: `rig schedule create --host H` pins every run to host H (its claim is
// taken from rig-host-H, though another host's worker polls the shared queue too), and
// `--pause-on-failure` pauses the schedule when a run fails.
// One real dev server for the file, one worker in this process (this machine's host name) and, for
// the pinned schedule, one `rig worker` child for host "alpha".
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { configurationEnds } from '../../lib/protocol/configuration-state';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { campaignEnv, tinySpec, waitFor, waitForProgress } from '../harness/campaign';
import { rig } from '../harness/rig-cli';
import { spawnRigWorker } from '../harness/worker-process';

// The file's dev server and in-process worker, shared by its tests (made at the top level: it ends with the file).
const envReady = campaignEnv().then(async (env) => {
  await env.inProcessWorker();
  return env;
});
envReady.catch(() => undefined);

async function scheduledRun(env: Awaited<typeof envReady>, scheduleId: string): Promise<string> {
  return waitFor(`a run of schedule ${scheduleId}`, async () => {
    for await (const wf of env.client.workflow.list({ query: `WorkflowType = 'benchCampaign' AND TemporalScheduledById = '${scheduleId}'` })) return wf.workflowId;
    return undefined;
  }, 60_000, 500);
}

test('a schedule created with rig schedule create starts a campaign when triggered', async () => {
  const env = await envReady;
  const specFile = path.join(env.dir, 'weekly.json');
  // A generous drift limit: the run's status (held) is what the second run looks for, not what this test measures.
  fs.writeFileSync(specFile, JSON.stringify(tinySpec({ name: 'weekly', sustained: { ...tinySpec().sustained!, repeats: 1, driftLimit: 100 } })));

  const created = await rig(['schedule', 'create', 'weekly', specFile, '--cron', '0 3 * * 1'], env.childEnv);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /schedule weekly created; next run \d{4}-.*; each run times out after 120 min$/m);
  const listed = await rig(['schedule', 'list'], env.childEnv);
  assert.match(listed.stdout, /^weekly\s+active/m);

  const triggered = await rig(['schedule', 'trigger', 'weekly'], env.childEnv);
  assert.equal(triggered.code, 0, triggered.stderr);
  const workflowId = await scheduledRun(env, 'weekly');
  const handle = env.client.workflow.getHandle(workflowId);
  await waitForProgress(handle, 'the scheduled campaign measuring', (p) => p.step === 'sustained');
  const result = (await handle.result()) as CampaignResult;
  assert.equal(result.configurations[0].total, 1);
  assert.ok(fs.existsSync(path.join(result.resultsDir, 'report.md')), 'its evidence folder has the page');
  assert.doesNotMatch(path.basename(result.resultsDir), /:/);

  // Three reads of the closed run, side by side (each rig process is seconds of CPU before it asks anything):
  // list: the recent run with the campaign's own status and its execution status, and what was skipped
  const [after, campaigns, watched] = await Promise.all([rig(['schedule', 'list'], env.childEnv), rig(['campaign', 'list', '-o', 'json'], env.childEnv), rig(['campaign', 'watch', workflowId, '-o', 'json'], env.childEnv)]);
  assert.match(after.stdout, /^weekly\s+active\s+next \S+\s+skipped 0 \(a run still going\), missed 0$/m);
  const runLine = after.stdout.split('\n').find((l) => l.startsWith(`  ${workflowId}  `));
  assert.ok(runLine, `a line for ${workflowId}:\n${after.stdout}`);
  assert.match(runLine, new RegExp(`  ${result.status}  completed  started \\d{4}-`));
  // rig campaign list and watch -o json: the same campaign as data; watch of a closed campaign is its result
  assert.equal(campaigns.code, 0, campaigns.stderr);
  const row = (JSON.parse(campaigns.stdout) as Array<{ id: string; run: string; status: string }>).find((r) => r.id === workflowId);
  assert.deepEqual([row?.run, row?.status], ['completed', result.status], campaigns.stdout);
  assert.equal(watched.code, 1, 'uncalibrated: exit 1 (not a verdict)');
  // watch -o json is the result, each configuration with what ran (lib/protocol/configuration-state.ts).
  assert.deepEqual((JSON.parse(watched.stdout) as CampaignResult).configurations, configurationEnds(result));

  // The first run had no earlier run to compare with, and its page says so.
  const firstPage = fs.readFileSync(path.join(result.resultsDir, 'report.md'), 'utf8');
  // (The spec does not calibrate: 'uncalibrated' is the best its runs can be, and what a later run looks for.)
  assert.equal(result.status, 'uncalibrated', `the first run held (what the second looks for): ${JSON.stringify({ status: result.status, error: result.error, repeats: result.repeats.map((r) => r.reasons) })}`);
  assert.match(firstPage, /Baseline: none\. No earlier run of schedule weekly held uncalibrated \(its spec does not calibrate\): nothing to compare with yet\./);
  // The second run finds the first (the newest earlier held run of the schedule) as its baseline,
  // compares with it on its page, and says whether it regressed where visibility and `list` see it.
  // (Triggered through the client: `rig schedule trigger` was asserted above, and each rig process costs seconds of CPU.)
  await env.client.schedule.getHandle('weekly').trigger();
  const secondId = await waitFor('the second scheduled campaign', async () => {
    for await (const wf of env.client.workflow.list({ query: `WorkflowType = 'benchCampaign' AND TemporalScheduledById = 'weekly'` })) if (wf.workflowId !== workflowId) return wf.workflowId;
    return undefined;
  }, 60_000, 500);
  const second = (await env.client.workflow.getHandle(secondId).result()) as CampaignResult;
  const page = fs.readFileSync(path.join(second.resultsDir, 'report.md'), 'utf8');
  assert.match(page, new RegExp(`Baseline: ${path.basename(result.resultsDir)}, the newest earlier run of schedule weekly that held uncalibrated \\(its spec does not calibrate\\) \\(started \\d{4}-`));
  assert.match(page, /## Compared with the baseline/);
  const baselineFile = JSON.parse(fs.readFileSync(path.join(second.resultsDir, 'baseline.json'), 'utf8')) as { baseline_workflow_id: string };
  assert.equal(baselineFile.baseline_workflow_id, workflowId);
  const d = await env.client.workflow.getHandle(secondId).describe();
  const regressed = (d.searchAttributes?.RigRegressed as string[] | undefined)?.[0];
  assert.ok(regressed === 'yes' || regressed === 'no', `RigRegressed is set: ${String(regressed)}`);
  const report = second.steps.find((x) => x.step === 'report')!;
  assert.match(report.summary, new RegExp(`against ${path.basename(result.resultsDir)}: (REGRESSED|no regression)`));
  // Three reads of the schedule's runs, side by side: list, list -o json, rig history.
  const [listed2, json, history] = await Promise.all([rig(['schedule', 'list'], env.childEnv), rig(['schedule', 'list', '-o', 'json'], env.childEnv), rig(['history', 'weekly', '-o', 'json'], env.childEnv)]);
  assert.match(listed2.stdout, new RegExp(`  ${secondId}  \\S+  completed  started \\S+  (REGRESSED|no regression) against its baseline`));
  // -o json: the same, as data (like the temporal CLI's -o json)
  assert.equal(json.code, 0, json.stderr);
  const rows = JSON.parse(json.stdout) as Array<{ id: string; state: string; runs: Array<{ id: string; run: string | null; regressed: boolean | null }> }>;
  const weekly = rows.find((r) => r.id === 'weekly');
  assert.ok(weekly, json.stdout);
  const run2 = weekly.runs.find((r) => r.id === secondId);
  assert.deepEqual([run2?.run, typeof run2?.regressed], ['completed', 'boolean']);

  // rig history weekly: the schedule's runs found through visibility (issue 36), their figures from the folders.
  assert.equal(history.code, 0, history.stderr);
  const h = JSON.parse(history.stdout) as { notes: string[]; missing: string[]; series: Array<{ series: string; rows: Array<{ campaignId: string; build: string | null }> }> };
  assert.ok(h.notes.some((n) => /^visibility on .*: 2 run\(s\) of schedule weekly$/.test(n)), h.notes.join('\n'));
  assert.deepEqual(h.missing, []);
  const runsSeen = h.series.find((x) => x.series !== 'ceiling')!.rows.map((r) => r.campaignId);
  assert.deepEqual(runsSeen, [path.basename(result.resultsDir), path.basename(second.resultsDir)]);

  const deleted = await rig(['schedule', 'delete', 'weekly'], env.childEnv);
  assert.equal(deleted.code, 0, deleted.stderr);
  await env.assertClean();
});

test('a schedule pinned to a host runs there; one that pauses on failure pauses when a run fails', { timeout: 300_000 }, async () => {
  const env = await envReady;
  await spawnRigWorker({ env: { ...env.childEnv, RIG_HOST: 'alpha' }, name: 'host alpha\'s worker' });
  const specFile = path.join(env.dir, 'pinned.json');
  fs.writeFileSync(specFile, JSON.stringify(tinySpec({ name: 'pinned', workerWaitSeconds: 5, sustained: { ...tinySpec().sustained!, repeats: 1, driftLimit: 100 } })));

  // Pinned to alpha: its claim waits on rig-host-alpha, which only alpha's worker polls.
  const created = await rig(['schedule', 'create', 'on-alpha', specFile, '--cron', '0 3 * * 1', '--host', 'alpha'], env.childEnv);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /; every run on host alpha$/m);
  assert.equal((await rig(['schedule', 'trigger', 'on-alpha'], env.childEnv)).code, 0);
  const runHandle = env.client.workflow.getHandle(await scheduledRun(env, 'on-alpha'));
  const run = (await runHandle.result()) as CampaignResult;
  assert.equal(run.status, 'uncalibrated', JSON.stringify(run.steps.map((s) => [s.step, s.status, s.summary])));
  const claims = ((await runHandle.fetchHistory()).events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => a?.activityType?.name === 'claimHost')
    .map((a) => a?.taskQueue?.name);
  assert.deepEqual(claims, ['rig-host-alpha'], 'the claim went to alpha\'s own queue');
  const opened = run.steps.find((s) => s.step === 'lease');
  assert.match(opened?.summary ?? '', /^host alpha: granted/, 'measured on alpha');

  // A host no worker serves, with pauseOnFailure: the run fails naming the queue, and the schedule pauses.
  const pausing = await rig(['schedule', 'create', 'on-nowhere', specFile, '--cron', '0 3 * * 1', '--host', 'nowhere', '--pause-on-failure'], env.childEnv);
  assert.equal(pausing.code, 0, pausing.stderr);
  assert.match(pausing.stdout, /; every run on host nowhere; a failed run pauses it$/m);
  // The CLI's trigger (overlap SKIP): the scheduler follows the run it starts, so a failure pauses it.
  assert.equal((await rig(['schedule', 'trigger', 'on-nowhere'], env.childEnv)).code, 0);
  const failedId = await scheduledRun(env, 'on-nowhere');
  await assert.rejects(env.client.workflow.getHandle(failedId).result(), (err: Error & { cause?: Error }) => /no worker took claimHost from the task queue rig-host-nowhere within 5 seconds/.test(`${err.message} ${err.cause?.message}`));
  await waitFor('the schedule to pause after the failed run', async () => (await env.client.schedule.getHandle('on-nowhere').describe()).state.paused, 30_000, 500);
  const listed = await rig(['schedule', 'list'], env.childEnv);
  assert.match(listed.stdout, /^on-nowhere\s+paused/m);
  assert.match(listed.stdout, /^on-alpha\s+active/m);
});

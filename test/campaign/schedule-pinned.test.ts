// Schedules a team can rely on: `rig schedule create --host H` pins every run to host H (its claim is
// taken from rig-host-H, though another host's worker polls the shared queue too), and
// `--pause-on-failure` pauses the schedule when a run fails. A real dev server, one worker in this
// process (this machine's host name) and one `rig worker` child for host "alpha".
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { campaignEnv, tinySpec, waitFor } from '../harness/campaign';
import { rig } from '../harness/rig-cli';
import { spawnRigWorker } from '../harness/worker-process';

async function scheduledRun(env: Awaited<ReturnType<typeof campaignEnv>>, scheduleId: string): Promise<string> {
  return waitFor(`a run of schedule ${scheduleId}`, async () => {
    for await (const wf of env.client.workflow.list({ query: `WorkflowType = 'benchCampaign' AND TemporalScheduledById = '${scheduleId}'` })) return wf.workflowId;
    return undefined;
  }, 60_000, 500);
}

test('a schedule pinned to a host runs there; one that pauses on failure pauses when a run fails', { timeout: 300_000 }, async () => {
  const env = await campaignEnv();
  await env.inProcessWorker();
  await spawnRigWorker({ env: { ...env.childEnv, RIG_HOST: 'alpha' }, name: 'host alpha\'s worker' });
  const specFile = path.join(env.dir, 'weekly.json');
  fs.writeFileSync(specFile, JSON.stringify(tinySpec({ name: 'weekly', workerWaitSeconds: 5, sustained: { ...tinySpec().sustained!, repeats: 1, driftLimit: 100 } })));

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
  assert.equal((await rig(['schedule', 'trigger', 'on-nowhere'], env.childEnv)).code, 0);
  const failedId = await scheduledRun(env, 'on-nowhere');
  await assert.rejects(env.client.workflow.getHandle(failedId).result(), (err: Error & { cause?: Error }) => /no worker took claimHost from the task queue rig-host-nowhere within 5 seconds/.test(`${err.message} ${err.cause?.message}`));
  await waitFor('the schedule to pause after the failed run', async () => (await env.client.schedule.getHandle('on-nowhere').describe()).state.paused, 30_000, 500);
  const listed = await rig(['schedule', 'list'], env.childEnv);
  assert.match(listed.stdout, /^on-nowhere\s+paused/m);
  assert.match(listed.stdout, /^on-alpha\s+active/m);
});

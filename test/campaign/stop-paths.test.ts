// The ways a campaign stops early, on the dev server with the real local rig:
// - cancellation during a repeat: teardown runs, the watchdog is disarmed;
// - a bring-up refusal (a stray table makes the schema dirty): the campaign fails with the reason,
//   teardown runs;
// - termination: nothing in the campaign runs any more; its watchdog notices within one check (two
//   minutes by default; the spec's shortest, 5 s, here) that the campaign closed without disarming, and
//   tears down then, not at the deadline.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { WorkflowFailedError } from '@temporalio/client';
import { rigDbUrls } from '../../lib/targets/local';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { localDataQueue } from '../../activities/rig-lifecycle';
import { hostQueue } from '../../lib/temporal/queues';
import { hostName } from '../../lib/tools/host-name';
import { watchdogQuery } from '../../workflows/messages';
import { campaignEnv, saveHistory, tinySpec, waitForProgress } from '../harness/campaign';

test('cancellation, refusal and termination each leave the machine clean', async (t) => {
  const env = await campaignEnv();

  await t.test('cancelled during a repeat: teardown runs and the watchdog is disarmed', async () => {
    const stop = await env.inProcessWorker();
    const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'cancelled', args: [tinySpec({ sustained: { ...tinySpec().sustained!, repeatSeconds: 30 } })] });
    await waitForProgress(handle, 'repeat 1 running', (p) => p.phase === 'repeat' && p.repeat?.k === 1);
    await new Promise((r) => setTimeout(r, 3000));
    await handle.cancel();
    await assert.rejects(handle.result(), (err: unknown) => err instanceof WorkflowFailedError && /cancel/i.test(String(err.cause?.name ?? err.cause?.message)));
    const watchdog = await env.client.workflow.getHandle('cancelled.watchdog').result();
    assert.equal((watchdog as { state: string }).state, 'disarmed');
    await env.assertClean();
    await saveHistory(env.address, 'cancelled');
    await stop();
  });

  await t.test('bring-up refuses a dirty schema: the campaign fails with the reason and teardown runs', async () => {
    // Only the control plane at first: provisioning happens, bring-up (data plane) waits.
    const stopControl = await env.inProcessWorker(['rig', hostQueue(hostName())]);
    const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'refused', args: [tinySpec()] });
    await waitForProgress(handle, 'provisioned', (p) => p.step === 'bring-up');
    const db = new pg.Client({ connectionString: rigDbUrls('refused').ownerUrl });
    await db.connect();
    await db.query('CREATE TABLE stray_table (id int)');
    await db.end();
    const stopData = await env.inProcessWorker([localDataQueue()]);
    await assert.rejects(handle.result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /bring-up refused \(schema\).*stray_table/);
      const result = (err.cause as { details?: CampaignResult[] }).details?.[0];
      assert.equal(result?.steps.find((s) => s.step === 'bring-up')?.status, 'refused');
      assert.equal(result?.steps.find((s) => s.step === 'teardown')?.status, 'ok');
      assert.ok(!result?.steps.some((s) => s.step === 'seed'), 'nothing after the refusal');
      return true;
    });
    await env.assertClean();
    await saveHistory(env.address, 'refused');
    await stopData();
    await stopControl();
  });

  await t.test('a terminated campaign is torn down by its watchdog within one check, long before the deadline', async () => {
    const stop = await env.inProcessWorker();
    const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'terminated', args: [tinySpec({ watchdogCheckSeconds: 5 })] });
    await waitForProgress(handle, 'provisioned', (p) => p.step === 'sustained');
    await handle.terminate('test: the campaign is killed');
    assert.equal((await env.cleanCheck()).status, 'dirty', 'the rig outlives its terminated campaign');
    const watchdog = env.client.workflow.getHandle('terminated.watchdog');
    assert.equal((await watchdog.query(watchdogQuery)).state, 'armed');
    const final = (await watchdog.result()) as { state: string; firedBy?: string; deadline: string };
    assert.equal(final.state, 'fired');
    assert.equal(final.firedBy, 'the campaign terminated closed (terminated) without disarming');
    assert.ok(Date.parse(final.deadline) - Date.now() > 30 * 60_000, 'torn down long before its deadline');
    await env.assertClean();
    await stop();
  });
});

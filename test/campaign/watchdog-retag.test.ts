// The watchdog re-tags the rig's expiry whenever its deadline moves (issue 11: "extending the
// watchdog re-tags the expiry"), on the time-skipping server with test-double activities: an
// operator's extend and the campaign's hold-until each ask the host's queue (the teardown's) for
// retagRigExpiry with the new deadline; a re-tag that fails is logged and the watchdog carries on
// (a later extend still answers and re-tags); a hold-until that is not later moves nothing and
// re-tags nothing. The AWS side of the re-tag (every resource's rig:expires) is
// test/targets/aws/retag.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { disarmSignal, extendUpdate, holdUntilSignal, watchdogQuery, type WatchdogState } from '../../workflows/messages';
import { saveHistory, waitFor } from '../harness/campaign';
import { timeSkippingEnv } from '../harness/temporal';
import { activityDoubles, withDoubleWorkers, type Call } from './doubles';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

test('an extend and a hold-until re-tag the expiry on the host queue; a failed re-tag does not stop the watchdog', { timeout: 300_000 }, async () => {
  const start = await env.currentTimeMs(); // the server's clock (time skipping may have moved it)
  const deadlineMs = start + 3_600_000;
  const afterExtend = new Date(deadlineMs + 30 * 60_000).toISOString();
  const afterFailed = new Date(deadlineMs + 45 * 60_000).toISOString();
  const held = deadlineMs + 120 * 60_000;
  const doubles = activityDoubles({ dataQueue: 'rig-data-test', retagFailsFor: [afterFailed] });
  const retags = (): Call[] => doubles.calls.filter((c) => c.name === 'retagRigExpiry');
  const expiries = () => retags().map((c) => (c.input as { expiresAt: string }).expiresAt);

  await withDoubleWorkers(env, doubles, async () => {
    const wd = await env.client.workflow.start('rigWatchdog', {
      taskQueue: 'rig',
      workflowId: 'retag-1.watchdog',
      args: [{ campaignId: 'retag-1', target: 'aws', deadlineMs, hostQueue: doubles.hostQueue }],
    });
    await waitFor('the watchdog to run', async () => (await wd.query(watchdogQuery)).state === 'armed', 30_000, 100);

    const extended = await wd.executeUpdate(extendUpdate, { args: [30] });
    assert.equal(extended.deadline, afterExtend);
    await waitFor('the re-tag after the extend', async () => retags().length >= 1, 30_000, 100);
    assert.deepEqual(retags()[0].input, { campaignId: 'retag-1', target: 'aws', expiresAt: afterExtend });
    assert.equal(retags()[0].taskQueue, doubles.hostQueue, 'on the teardown\'s queue: the host that made the rig');

    // This one's re-tag fails (access denied): the watchdog logs it and keeps going.
    assert.equal((await wd.executeUpdate(extendUpdate, { args: [15] })).deadline, afterFailed);
    await waitFor('the failing re-tag', async () => retags().length >= 2, 30_000, 100);
    assert.equal((await wd.query(watchdogQuery)).state, 'armed');

    await wd.signal(holdUntilSignal, held);
    await waitFor('the re-tag after the hold-until', async () => retags().length >= 3, 30_000, 100);
    // A hold-until earlier than the deadline moves nothing: no re-tag (checked after the disarm, below).
    await wd.signal(holdUntilSignal, deadlineMs);
    assert.equal((await wd.query(watchdogQuery)).deadline, new Date(held).toISOString());

    await wd.signal(disarmSignal);
    assert.equal(((await wd.result()) as WatchdogState).state, 'disarmed');
  });
  assert.deepEqual(expiries(), [afterExtend, afterFailed, new Date(held).toISOString()], 'one re-tag per move, in order, each to the new deadline');
  assert.ok(!doubles.calls.some((c) => c.name === 'teardownRig'), 'nothing was torn down');
  await saveHistory(env.address, 'retag-1.watchdog');
});

// The watchdog and teardown paths of the campaign, on the time-skipping server with test-double
// activities (test/campaign/doubles.ts; the real watchdog and teardown run in stop-paths.test.ts):
// - a watchdog shorter than the plan is refused before anything runs, naming the plan and the margin;
// - the deadline follows the plan: a step that ran over moves it forward;
// - a watchdog that fired before the campaign's own teardown is harmless: the rig reads destroyed;
// - a teardown that keeps failing on its host retries without a cap (a local rig on its host's queue),
//   and the campaign ends destroyed once it succeeds;
// - a terminated campaign is torn down by its watchdog within one check, not at the deadline;
// - `rig step teardown`'s disarm stands a kept rig's watchdog down.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { disarmWatchdog } from '../../client/watchdog-disarm';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { parseCampaignSpec, PROFILES } from '../../lib/protocol/spec';
import { planFrom, watchdogNeed } from '../../lib/protocol/plan';
import { fireSignal, watchdogQuery, type WatchdogState } from '../../workflows/messages';
import { CAMPAIGN_CHECK_MS } from '../../workflows/watchdog';
import { saveHistory, waitFor } from '../harness/campaign';
import { timeSkippingEnv } from '../harness/temporal';
import { activityDoubles, PAUSED_REHEARSAL, runWithDoubles, untilFirstCoolDown, withDoubleWorkers } from './doubles';

// Each test has a timeout: a workflow that never closes fails it, never hangs the suite.
let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

const rehearsal = PROFILES.rehearsal;


test('a watchdog shorter than the plan is refused before anything runs, naming the plan and the margin', { timeout: 300_000 }, async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test' });
  const need = watchdogNeed(parseCampaignSpec(rehearsal));
  await assert.rejects(runWithDoubles(env, { ...rehearsal, watchdogMinutes: 20 }, 'watchdog-too-short', doubles), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError);
    assert.match(
      String(err.cause?.message),
      new RegExp(`^watchdogMinutes: 20 is shorter than the plan from provisioning on \\(${need.planMinutes} min: provision 5, bring-up 5, seed [\\d.]+, measuring [\\d.]+, teardown 5, report 1\\) plus its margin \\(15 min\\) = ${need.minutes} min; .* Set watchdogMinutes to at least ${need.minutes}$`),
    );
    return true;
  });
  assert.equal(doubles.calls.length, 0, 'no activity ran');
});

test('the watchdog\'s deadline follows the plan: a step that ran over moves it forward; on plan nothing is sent', { timeout: 300_000 }, async () => {
  const need = watchdogNeed(parseCampaignSpec(rehearsal));
  const spec = { ...rehearsal, watchdogMinutes: need.minutes };
  // On plan (the doubles take no time): the deadline stays where the spec put it.
  const onPlan = activityDoubles({ dataQueue: 'rig-data-test' });
  await runWithDoubles(env, spec, 'on-plan', onPlan);
  assert.equal(await holds('on-plan.watchdog'), 0);
  // Bring-up (allowed 5 min with the database calibration) is retried after 20 min: 15 min over, more than the slack the margin left.
  const late = activityDoubles({ dataQueue: 'rig-data-test', bringUpRetryAfter: '20 minutes' });
  await runWithDoubles(env, spec, 'ran-over', late);
  const history = await env.client.workflow.getHandle('ran-over.watchdog').fetchHistory();
  const started = (history.events ?? [])[0].workflowExecutionStartedEventAttributes!;
  const firstDeadline = (JSON.parse(Buffer.from(started.input!.payloads![0].data!).toString()) as { deadlineMs: number }).deadlineMs;
  assert.ok((await holds('ran-over.watchdog')) >= 1, 'the campaign moved the deadline');
  const wd = (await env.client.workflow.getHandle('ran-over.watchdog').result()) as WatchdogState;
  assert.equal(wd.state, 'disarmed', 'and the series ran to its own teardown');
  // The seed step began ~20 min after provisioning: the deadline now covers what was left from it.
  const seedAt = late.calls.find((c) => c.name === 'seedHistory')!.scheduledMs;
  // the plan from the seed on, with its margin: provision and bring-up (with the database calibration) were behind
  const behind = planFrom(parseCampaignSpec(spec), 'provision').filter((p) => p.step === 'provision' || p.step === 'bring-up').reduce((a, p) => a + p.minutes, 0);
  const fromSeed = need.minutes - behind;
  assert.ok(Date.parse(wd.deadline) >= seedAt + fromSeed * 60_000 - 60_000, `deadline ${wd.deadline} covers the plan from the seed (${new Date(seedAt).toISOString()} + ${fromSeed} min)`);
  assert.ok(Date.parse(wd.deadline) > firstDeadline + 5 * 60_000, 'later than the spec put it');
});

/** Hold-until signals a watchdog received. */
async function holds(watchdogId: string): Promise<number> {
  const history = await env.client.workflow.getHandle(watchdogId).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'hold-until').length;
}

test('a watchdog that fired before the campaign\'s own teardown is harmless: the rig reads destroyed and the campaign keeps its verdict', { timeout: 300_000 }, async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test' });
  const result = await withDoubleWorkers(env, doubles, async () => {
    const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'fired-first', args: [PAUSED_REHEARSAL] });
    await untilFirstCoolDown(handle);
    const watchdog = env.client.workflow.getHandle('fired-first.watchdog');
    await watchdog.signal(fireSignal, 'test: an operator wants the rig gone');
    const fired = (await watchdog.result()) as WatchdogState;
    assert.deepEqual([fired.state, fired.firedBy], ['fired', 'test: an operator wants the rig gone']);
    return (await handle.result()) as CampaignResult;
  });
  assert.equal(result.rig, 'destroyed');
  assert.equal(result.status, 'held');
  assert.match(result.steps.filter((s) => s.step === 'watchdog').at(-1)?.summary ?? '', /^already closed, nothing to disarm .*the clean-check after teardown found the target clean$/);
  const teardowns = doubles.calls.filter((c) => c.name === 'teardownRig').map((c) => (c.input as { by: string }).by);
  assert.deepEqual(teardowns, ['watchdog', 'campaign']);
  await saveHistory(env.address, 'fired-first');
});

test('a teardown that keeps failing on its host retries without a cap, and the campaign ends destroyed once it succeeds', { timeout: 300_000 }, async () => {
  // Twelve failures: past the three quick attempts on the host's queue, into the uncapped retries (workflows/teardown.ts).
  const doubles = activityDoubles({ dataQueue: 'rig-data-test', teardownFailsFor: 'campaign', teardownFailsTimes: 12 });
  const result = await withDoubleWorkers(env, doubles, async () => {
    const spec = { ...rehearsal, watchdogMinutes: 240 };
    return (await env.client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: 'teardown-uncapped', args: [spec] })) as CampaignResult;
  });
  assert.equal(result.rig, 'destroyed');
  assert.equal(result.status, 'held');
  const byCampaign = doubles.calls.filter((c) => c.name === 'teardownRig' && (c.input as { by: string }).by === 'campaign');
  assert.equal(byCampaign.length, 13, 'twelve failed attempts, then the one that tore it down');
  // A local rig lives on its host: every attempt went to that host's queue, never to the shared one.
  const hostQueue = byCampaign[0].taskQueue;
  assert.match(hostQueue, /^rig-host-/);
  assert.deepEqual([...new Set(byCampaign.map((c) => c.taskQueue))], [hostQueue]);
  // The watchdog was not needed: the campaign's own teardown succeeded, and disarmed it.
  assert.equal(((await env.client.workflow.getHandle('teardown-uncapped.watchdog').result()) as WatchdogState).state, 'disarmed');
  assert.equal(doubles.calls.filter((c) => c.name === 'teardownRig' && (c.input as { by: string }).by === 'watchdog').length, 0);
  // Two activities: three attempts bounded by the host's worker wait, then one without a cap; both notice a dead worker at the heartbeat timeout.
  const history = await env.client.workflow.getHandle('teardown-uncapped').fetchHistory();
  const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes).filter((a) => a?.activityType?.name === 'teardownRig');
  assert.deepEqual(
    // (the server records an unset schedule-to-start as ten years)
    scheduled.map((a) => {
      const toStart = Number(a?.scheduleToStartTimeout?.seconds ?? 0);
      return [a?.taskQueue?.name, a?.retryPolicy?.maximumAttempts ?? 0, toStart > 365 * 86_400 ? 'unbounded' : toStart, Number(a?.heartbeatTimeout?.seconds)];
    }),
    [
      [hostQueue, 3, 600, 120],
      [hostQueue, 0, 'unbounded', 120],
    ],
  );
  await saveHistory(env.address, 'teardown-uncapped');
});

test('a terminated campaign is torn down by its watchdog within one check, not at the deadline', { timeout: 300_000 }, async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test' });
  const wd = await withDoubleWorkers(env, doubles, async () => {
    const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'terminated-td', args: [PAUSED_REHEARSAL] });
    await untilFirstCoolDown(handle);
    const watchdog = env.client.workflow.getHandle('terminated-td.watchdog');
    assert.equal((await watchdog.query(watchdogQuery)).state, 'armed');
    await handle.terminate('test: the campaign is killed');
    // A child's result does not unlock the test server's time skipping: this waits one check (2 min) in real time.
    return { at: Date.parse((await watchdog.query(watchdogQuery)).deadline), final: (await watchdog.result()) as WatchdogState };
  });
  assert.equal(wd.final.state, 'fired');
  assert.equal(wd.final.firedBy, 'the campaign terminated-td closed (terminated) without disarming');
  const teardown = doubles.calls.find((c) => c.name === 'teardownRig');
  assert.equal((teardown?.input as { by: string }).by, 'watchdog');
  const provisioned = doubles.calls.find((c) => c.name === 'provisionRig')!.scheduledMs;
  assert.ok(teardown!.scheduledMs - provisioned <= CAMPAIGN_CHECK_MS + 60_000, 'within one check of the termination');
  assert.ok(wd.at - teardown!.scheduledMs > 30 * 60_000, 'long before the deadline');
  await saveHistory(env.address, 'terminated-td.watchdog');
});

test('rig step teardown\'s disarm stands a kept rig\'s watchdog down, and says so when there is nothing to disarm', { timeout: 300_000 }, async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test' });
  await withDoubleWorkers(env, doubles, async () => {
    const watchdog = await env.client.workflow.start('rigWatchdog', {
      taskQueue: 'rig',
      workflowId: 'kept-rig.watchdog',
      // the server's clock, which earlier tests have skipped ahead of this process's
      args: [{ campaignId: 'kept-rig', target: 'local', deadlineMs: (await env.currentTimeMs()) + 3_600_000 }],
    });
    await waitFor('the watchdog to run', async () => (await watchdog.query(watchdogQuery)).state === 'armed', 30_000, 100);
    assert.equal(await disarmWatchdog(env.client, 'kept-rig'), 'watchdog kept-rig.watchdog: disarmed');
    assert.equal(((await watchdog.result()) as WatchdogState).state, 'disarmed');
    assert.equal(await disarmWatchdog(env.client, 'kept-rig'), 'watchdog kept-rig.watchdog: already completed, nothing to disarm');
    assert.equal(await disarmWatchdog(env.client, 'never-ran'), 'watchdog never-ran.watchdog: not on this server, nothing to disarm');
  });
  assert.ok(!doubles.calls.some((c) => c.name === 'teardownRig'), 'a disarmed watchdog tears nothing down');
});

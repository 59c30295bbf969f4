// Messages that answer, on the time-skipping server with test-double activities:
// - `abort` as an Update says what will happen, and is refused when there is nothing to abort;
// - the watchdog's `extend` as an Update returns the new deadline, and is refused for a bad number
//   (`rig campaign extend ID --minutes N`);
// - the progress query computes nothing from the clock: the client's elapsed time moves while the
//   campaign waits (a query sees the workflow's time of its last task, which stands still);
// - `rig campaign start` with an id already used is refused at once, naming the id and its status.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { run as campaignCommand } from '../../client/commands/campaign';
import { progressLine } from '../../client/progress-view';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { PROFILES } from '../../lib/protocol/spec';
import { abortUpdate, extendUpdate, progressQuery, watchdogQuery } from '../../workflows/messages';
import { saveHistory } from '../harness/campaign';
import { timeSkippingEnv } from '../harness/temporal';
import { activityDoubles, PAUSED_REHEARSAL, untilFirstCoolDown, withDoubleWorkers } from './doubles';

// Each test has a timeout: a workflow that never closes fails it, never hangs the suite.
let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

const rehearsal = PROFILES.rehearsal;

const updateRefusal = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof WorkflowUpdateFailedError, String(err));
    return String(err.cause?.message);
  }
  assert.fail('the update was accepted');
};

test('abort answers with what will happen, is refused when already aborting, and the campaign ends aborted', { timeout: 120_000 }, async () => {
  const result = await withDoubleWorkers(env, activityDoubles({ dataQueue: 'rig-data-test' }), async () => {
    const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'abort-update', args: [PAUSED_REHEARSAL] });
    await untilFirstCoolDown(handle);
    assert.equal(await handle.executeUpdate(abortUpdate, { args: ['test'] }), 'the cool-down ends now; then teardown and the report');
    assert.equal(await updateRefusal(handle.executeUpdate(abortUpdate, { args: ['again'] })), 'already aborting: the current repeat finishes, then teardown');
    return (await handle.result()) as CampaignResult;
  });
  assert.equal(result.status, 'aborted');
  assert.equal(result.rig, 'destroyed');
  await saveHistory(env.address, 'abort-update');
});

test('extend answers with the new deadline; a bad number is refused, naming why', { timeout: 120_000 }, async () => {
  await withDoubleWorkers(env, activityDoubles({ dataQueue: 'rig-data-test' }), async () => {
    const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'extend-update', args: [PAUSED_REHEARSAL] });
    await untilFirstCoolDown(handle);
    const watchdog = env.client.workflow.getHandle('extend-update.watchdog');
    const before = Date.parse((await watchdog.query(watchdogQuery)).deadline);
    const after = await watchdog.executeUpdate(extendUpdate, { args: [90] });
    assert.equal(after.state, 'armed');
    assert.equal(Date.parse(after.deadline) - before, 90 * 60_000);
    assert.equal(await updateRefusal(watchdog.executeUpdate(extendUpdate, { args: [-5] })), 'minutes must be a number above 0 (got -5)');
    await handle.result();
    // The campaign tore down cleanly and disarmed it: the workflow has closed, nothing is extended.
    assert.equal(((await watchdog.result()) as { state: string }).state, 'disarmed');
  });
});

test('the progress query computes nothing from the clock: the elapsed time moves while the campaign waits', { timeout: 120_000 }, async () => {
  await withDoubleWorkers(env, activityDoubles({ dataQueue: 'rig-data-test' }), async () => {
    const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'elapsed', args: [PAUSED_REHEARSAL] });
    await untilFirstCoolDown(handle);
    const first = await handle.query(progressQuery);
    assert.ok(!('elapsedSeconds' in first), 'the query carries the start, not a frozen elapsed time');
    await new Promise((r) => setTimeout(r, 2100));
    const second = await handle.query(progressQuery);
    assert.deepEqual(second, first, 'nothing changed in the workflow while it waited');
    const startedAt = Date.parse(first.startedAt);
    assert.match(progressLine(first, startedAt + 5_000), /elapsed 5s/);
    assert.match(progressLine(second, startedAt + 125_000), /elapsed 2m05s/);
    await handle.executeUpdate(abortUpdate, { args: ['test over'] });
    await handle.result();
  });
});

test('rig campaign start with an id already used is refused at once, naming the id and its status', { timeout: 120_000 }, async () => {
  const saved = { ...process.env };
  process.env.TEMPORAL_ADDRESS = env.address;
  process.env.TEMPORAL_NAMESPACE = 'default';
  const errors: string[] = [];
  const origError = console.error;
  const origLog = console.log;
  console.error = (line: string) => errors.push(String(line));
  console.log = () => undefined;
  try {
    await env.client.workflow.start('benchCampaign', { taskQueue: 'nobody-polls-this', workflowId: 'taken-id', args: [rehearsal] });
    const code = await campaignCommand(['start', '--profile', 'rehearsal', '--id', 'taken-id']);
    assert.equal(code, 2);
    assert.match(errors.join('\n'), /^rig campaign start: the id taken-id is taken \(running, started \d{4}-.*\); give another --id/m);
  } finally {
    console.error = origError;
    console.log = origLog;
    process.env = saved;
    await env.client.workflow.getHandle('taken-id').terminate('test over');
  }
});

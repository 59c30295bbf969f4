// The warm-up and the campaign's end statuses, as workflow logic on the time-skipping server with
// test-double activities (the real warm-up activity against a real rig is test/targets/warmup.test.ts):
// a warm-up runs before each configuration's first repeat and before a ladder's first rung, none with
// warmupSeconds 0, a warm-up refusal stops the campaign before repeat 1 (teardown still runs); a
// campaign without calibration ends "uncalibrated", never "held"; leftovers after teardown end it "dirty".
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { saveHistory } from '../harness/campaign';
import { timeSkippingEnv } from '../harness/temporal';
import { activityDoubles, runWithDoubles } from './doubles';
import { PROFILES, type CampaignSpecInput } from '../../lib/protocol/spec';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

const rehearsal = PROFILES.rehearsal;
const withSustained = (patch: Partial<NonNullable<CampaignSpecInput['sustained']>>): CampaignSpecInput => ({ ...rehearsal, sustained: { ...rehearsal.sustained!, ...patch } });

test('a warm-up at the configuration\'s own rate and batch runs before each configuration\'s first repeat, then a cool-down', async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test' });
  const result = await runWithDoubles(env, rehearsal, 'warmup-order', doubles);
  const seq = doubles.calls
    .filter((c) => c.name === 'warmUp' || c.name === 'runRepeat')
    .map((c) => {
      const i = c.input as { configuration: { name: string }; index?: number; kind?: string };
      return c.name === 'warmUp' ? `warm ${i.configuration.name}` : `${i.kind} ${i.configuration.name} r${i.index}`;
    });
  assert.deepEqual(seq, [
    'warm single',
    'sustained single r1',
    'sustained single r2',
    'sustained single r3',
    'warm batched',
    'sustained batched r1',
    'sustained batched r2',
    'sustained batched r3',
    'ceiling ceiling r1',
  ]);
  const warm = doubles.calls.find((c) => c.name === 'warmUp')!.input as { seconds: number; configuration: { eventsPerSecond: number; batch: number } };
  assert.equal(warm.seconds, 10, 'the rehearsal profile warms for 10 s');
  const single = rehearsal.sustained!.configurations!.find((c) => c.name === 'single')!;
  assert.deepEqual([warm.configuration.eventsPerSecond, warm.configuration.batch], [single.eventsPerSecond, single.batch ?? 1], 'the warm-up runs at the first configuration\'s own rate and batch');
  // A cool-down separates the warm-up from repeat 1.
  const first = doubles.calls.find((c) => c.name === 'runRepeat')!;
  const warmCall = doubles.calls.find((c) => c.name === 'warmUp')!;
  assert.ok(first.scheduledMs - warmCall.scheduledMs >= 5_000, 'a 5-s cool-down after the warm-up');
  // Never counted: 3 repeats per configuration, the warm-up in the steps as its own line.
  assert.deepEqual(result.configurations.map((c) => [c.name, c.passed, c.total]), [['single', 3, 3], ['batched', 3, 3]]);
  assert.equal(result.repeats.length, 6);
  assert.equal(result.steps.filter((s) => s.step === 'warm-up').length, 2);
  assert.equal(result.status, 'held');
});

test('warmupSeconds 0 runs no warm-up', async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test' });
  await runWithDoubles(env, withSustained({ warmupSeconds: 0 }), 'warmup-off', doubles);
  assert.equal(doubles.calls.filter((c) => c.name === 'warmUp').length, 0);
  assert.equal(doubles.calls.filter((c) => c.name === 'runRepeat').length, 7);
});

test('a ladder warms once, at its first rung\'s rate, before climbing', async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test' });
  const spec: CampaignSpecInput = { ...rehearsal, sustained: undefined, ladder: { rates: [500, 1000], batch: 10, rungSeconds: 20, rungs: 1, warmupSeconds: 15 } };
  await runWithDoubles(env, spec, 'warmup-ladder', doubles);
  await saveHistory(env.address, 'warmup-ladder');
  const warms = doubles.calls.filter((c) => c.name === 'warmUp').map((c) => c.input as { seconds: number; configuration: { name: string; eventsPerSecond: number } });
  assert.deepEqual(warms.map((w) => [w.configuration.name, w.configuration.eventsPerSecond, w.seconds]), [['rung-500', 500, 15]]);
  assert.ok(doubles.calls.findIndex((c) => c.name === 'warmUp') < doubles.calls.findIndex((c) => c.name === 'runRepeat'));
});

test('a warm-up that finds the target answering 500 stops the campaign before repeat 1; teardown still runs', async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test', refuse: 'warmUp' });
  await assert.rejects(runWithDoubles(env, rehearsal, 'warmup-refused', doubles), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError);
    assert.match(String(err.cause?.message), /warm-up of single .*40 x 500/);
    return true;
  });
  const names = doubles.calls.map((c) => c.name);
  assert.ok(!names.includes('runRepeat'), 'no measured repeat ran');
  assert.ok(names.includes('teardownRig'), 'teardown ran');
  assert.ok(names.includes('finishCampaign'), 'the result was recorded');
  const result = (doubles.calls.find((c) => c.name === 'finishCampaign')!.input as { result: { steps: Array<{ step: string; status: string }> } }).result;
  assert.equal(result.steps.find((s) => s.step === 'warm-up')?.status, 'refused');
});

test('a campaign run with calibrate: false ends "uncalibrated", never "held", though every repeat passed', async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test' });
  const result = await runWithDoubles(env, { ...rehearsal, calibrate: false }, 'uncalibrated', doubles);
  assert.ok(!doubles.calls.some((c) => c.name === 'calibrateInstrument'));
  assert.ok(result.configurations.every((c) => c.held), 'every repeat passed');
  assert.equal(result.status, 'uncalibrated');
});

test('leftovers found by the clean-check after teardown end the campaign "dirty", whatever it measured, and the watchdog stays armed', async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test', leftoverAfter: 'postgres cluster on 127.0.0.1:54999 (pid 4242)' });
  const result = await runWithDoubles(env, rehearsal, 'dirty-after', doubles);
  assert.ok(result.configurations.every((c) => c.held));
  assert.equal(result.status, 'dirty');
  assert.match(result.error ?? '', /leftovers: dirty: postgres cluster on 127\.0\.0\.1:54999/);
  // Not disarmed: the watchdog keeps its deadline and tears down then (read from its history, which
  // needs no worker: whether the time-skipping server has reached the deadline yet is not the point).
  const history = await env.client.workflow.getHandle('dirty-after.watchdog').fetchHistory();
  const signals = (history.events ?? []).map((e) => e.workflowExecutionSignaledEventAttributes?.signalName).filter(Boolean);
  assert.ok(!signals.includes('disarm'), `signals received: ${signals.join(', ') || 'none'}`);
});

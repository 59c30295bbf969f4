// The campaign's workflow logic on the time-skipping server, with test-double activities: a
// full-length series (2 configurations x 5 x 10 min, 2-minute cool-downs) finishes in seconds with
// the right timer sequence; a failed repeat is a result (4/5 stays 4/5); a refusal stops the
// campaign and teardown still runs; a bad spec fails before any activity; the spec with its defaults
// is recorded in the history once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { timeSkippingEnv } from '../harness/temporal';
import { activityDoubles, runWithDoubles } from './doubles';
import { parseCampaignSpec, PROFILES, type CampaignSpecInput } from '../../lib/protocol/spec';
import { defaultPayloadConverter } from '@temporalio/common';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

/** The campaign with the doubles on both queues (test/campaign/doubles.ts runWithDoubles). */
const runCampaign = (spec: unknown, id: string, doubles: ReturnType<typeof activityDoubles>) => runWithDoubles(env, spec, id, doubles);

test('a full-length series runs 10 repeats with 2-minute cool-down timers between them, in skipped time', async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test', failing: [['batched', 5]] });
  const spec: CampaignSpecInput = { ...PROFILES.full, seed: { ...PROFILES.full.seed, historyRows: 1000 } };
  const started = process.hrtime.bigint();
  const result = await runCampaign(spec, 'full-series', doubles);
  console.log(`full-length series: ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(0)} ms of wall time`);

  const repeats = doubles.calls.filter((c) => c.name === 'runRepeat' && (c.input as { kind: string }).kind === 'sustained');
  assert.equal(repeats.length, 10);
  // Each repeat is scheduled one cool-down after the previous one completed (the doubles take no time).
  for (let i = 1; i < repeats.length; i++) {
    assert.ok(repeats[i].scheduledMs - repeats[i - 1].scheduledMs >= 120_000, `a full cool-down before repeat ${i + 1}`);
  }
  const history = await env.client.workflow.getHandle('full-series').fetchHistory();
  const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes);
  // Nine cool-downs between ten repeats (none after the last), and one after each configuration's warm-up.
  assert.equal(timers.length, 11, 'nine cool-downs between ten repeats and one after each of the two warm-ups');
  for (const t of timers) assert.equal(Number(t.timerStartedEventAttributes!.startToFireTimeout!.seconds), 120);
  assert.ok((history.events?.length ?? 0) <= 2000, `history of ${history.events?.length} events`);

  assert.deepEqual(
    result.configurations.map((c) => [c.name, c.passed, c.total, c.held]),
    [
      ['single', 5, 5, true],
      ['batched', 4, 5, false],
    ],
  );
  assert.equal(result.status, 'not-held');
  assert.equal(result.rig, 'destroyed');
  const order = doubles.calls.map((c) => c.name);
  assert.deepEqual(order.slice(0, 9), ['claimHost', 'openCampaign', 'requestLease', 'calibrateInstrument', 'cleanCheck', 'provisionRig', 'bringUp', 'calibrateDatabase', 'seedHistory']);
  assert.deepEqual(order.slice(-4), ['runDenominator', 'teardownRig', 'cleanCheck', 'finishCampaign']);
  // The watchdog was disarmed after the clean teardown.
  const wd = await env.client.workflow.getHandle('full-series.watchdog').result();
  assert.equal((wd as { state: string }).state, 'disarmed');
});

test('a bring-up refusal stops the campaign with the reason, and teardown still runs', async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test', refuse: 'bringUp' });
  await assert.rejects(runCampaign(PROFILES.rehearsal, 'refused', doubles), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError);
    assert.match(String(err.cause?.message), /app role cannot SELECT usage_events/);
    return true;
  });
  const names = doubles.calls.map((c) => c.name);
  assert.ok(!names.includes('seedHistory'), 'nothing after the refusal');
  assert.ok(!names.includes('runRepeat'));
  assert.ok(names.includes('teardownRig'), 'teardown ran');
  assert.ok(names.includes('finishCampaign'), 'the result was recorded');
});

test('a bad spec fails before any activity runs, naming the field', async () => {
  for (const [spec, field] of [
    [{ ...PROFILES.rehearsal, seed: undefined }, /seed: required|seed/],
    [{ ...PROFILES.rehearsal, target: 'gcp' }, /target: .*allowed: "local"/],
    [{ ...PROFILES.rehearsal, sustained: { ...PROFILES.rehearsal.sustained!, configurations: [{ name: 'x', eventsPerSecond: -5, batch: 1, p99LimitMs: 5 }] } }, /sustained\.configurations\[0\]\.eventsPerSecond: eventsPerSecond must be > 0/],
  ] as const) {
    const doubles = activityDoubles({ dataQueue: 'rig-data-test' });
    await assert.rejects(runCampaign(spec, `bad-${Math.random().toString(36).slice(2)}`, doubles), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), field);
      return true;
    });
    assert.equal(doubles.calls.length, 0, 'no activity ran');
  }
});

test('the spec is resolved once, into the history: its defaults are recorded, not re-applied from code on replay', async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-test' });
  const input: CampaignSpecInput = { ...PROFILES.rehearsal };
  assert.equal((input as { workerWaitSeconds?: number }).workerWaitSeconds, undefined, 'the input leaves a default to the code');
  await runCampaign(input, 'spec-in-history', doubles);
  const events = (await env.client.workflow.getHandle('spec-in-history').fetchHistory()).events ?? [];
  // The first activity is resolveSpec (an ordinary activity since spec-resolved-by-activity): its result,
  // the spec with every default applied, is in the history before any step is scheduled.
  const first = events.find((e) => e.activityTaskScheduledEventAttributes)!;
  assert.equal(first.activityTaskScheduledEventAttributes!.activityType!.name, 'resolveSpec');
  const done = events.find((e) => e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === first.eventId?.toString())!;
  const recorded = defaultPayloadConverter.fromPayload(done.activityTaskCompletedEventAttributes!.result!.payloads![0]);
  assert.deepEqual(recorded, parseCampaignSpec(input), 'the spec with every default applied');
  assert.equal((recorded as { workerWaitSeconds: number }).workerWaitSeconds, 600);
  assert.equal(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length, 0, 'no local activity');
});

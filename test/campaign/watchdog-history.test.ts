// The watchdog's history is bounded (issue 24, part 4). It checks its campaign every 2 minutes (~11
// events each), which for a kept rig would reach the server's 51,200-event limit in about 6 days. On
// the time-skipping server with test-double activities: a series runs for 12 simulated hours, then
// ends keeping its rig, which is kept for 10 simulated days in all. While the campaign runs, the
// watchdog continues as new at its history bound (the time-skipping server never suggests it, so
// the input's maxHistoryEvents stands in for the server's suggestion); once the campaign has closed,
// it stops checking, and that is carried to the next runs too. The operator's extension and the
// campaign's hold-until signals, sent across the runs, all reach the last one; it fires at its
// deadline, and no run's history passes the bound.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { CAMPAIGN_CHECK_MS } from '../../workflows/watchdog';
import { extendUpdate, holdUntilSignal, watchdogQuery, type WatchdogState } from '../../workflows/messages';
import { saveHistory, waitFor } from '../harness/campaign';
import { timeSkippingEnv } from '../harness/temporal';
import { activityDoubles, withDoubleWorkers } from './doubles';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const BOUND = 1_000;

test('a rig kept for 10 simulated days: the watchdog continues as new within its bound, stops checking a closed campaign, carries every extension, and fires at its deadline', { timeout: 600_000 }, async () => {
  const start = await env.currentTimeMs();
  const seriesEndsMs = start + 12 * HOUR_MS;
  const doubles = activityDoubles({ dataQueue: 'rig-data-test', campaignStatus: (ms) => (ms < seriesEndsMs ? 'RUNNING' : 'COMPLETED') });
  const id = 'kept-10d.watchdog';
  let finalDeadline = start + 10 * DAY_MS;
  let firstRunId = '';
  const result = await withDoubleWorkers(env, doubles, async () => {
    const wd = await env.client.workflow.start('rigWatchdog', {
      taskQueue: 'rig',
      workflowId: id,
      args: [{ campaignId: 'kept-10d', target: 'local', deadlineMs: start + DAY_MS, hostQueue: doubles.hostQueue, maxHistoryEvents: BOUND }],
    });
    firstRunId = wd.firstExecutionRunId;
    await waitFor('the watchdog to run', async () => (await wd.query(watchdogQuery)).state === 'armed', 30_000, 100);
    // The operator keeps the rig: nine more days.
    const extended = await env.client.workflow.getHandle(id).executeUpdate(extendUpdate, { args: [9 * 24 * 60] });
    assert.equal(extended.deadline, new Date(finalDeadline).toISOString());
    // A hold-until every 3 simulated hours of the series, then every day, each a minute later than the
    // last: whichever run it reaches (a signal goes to the id's current run), none is lost.
    for (const waitMs of [3, 3, 3, 3, 24, 24, 24, 24, 24, 24].map((h) => h * HOUR_MS)) {
      await env.sleep(waitMs);
      finalDeadline += 60_000;
      await env.client.workflow.getHandle(id).signal(holdUntilSignal, finalDeadline);
    }
    return (await env.client.workflow.getHandle(id).result()) as WatchdogState;
  });

  assert.equal(result.state, 'fired');
  assert.equal(result.firedBy, 'deadline');
  assert.equal(result.deadline, new Date(finalDeadline).toISOString(), 'the extension and every hold-until carried to the last run');
  const teardowns = doubles.calls.filter((c) => c.name === 'teardownRig');
  assert.equal(teardowns.length, 1, 'torn down once');
  assert.deepEqual(teardowns[0].input, { campaignId: 'kept-10d', target: 'local', by: 'watchdog' });
  assert.ok(teardowns[0].scheduledMs >= finalDeadline, `torn down at its deadline (${new Date(teardowns[0].scheduledMs).toISOString()} >= ${new Date(finalDeadline).toISOString()})`);
  assert.ok(teardowns[0].scheduledMs - start >= 10 * DAY_MS, 'after 10 simulated days');

  // Checked every 2 minutes while the series ran; once it had closed, never again (in any later run).
  const checks = doubles.calls.filter((c) => c.name === 'campaignRunState').map((c) => c.scheduledMs);
  const after = checks.filter((ms) => ms >= seriesEndsMs);
  assert.equal(after.length, 1, `one check saw the campaign closed, none after it (${after.map((ms) => new Date(ms).toISOString()).join(', ')})`);
  assert.ok(after[0] < seriesEndsMs + CAMPAIGN_CHECK_MS + 60_000, 'the first check after the series ended');
  // A signal, or a new run, restarts the 2-minute wait: a few checks fewer than 360.
  assert.ok(checks.length >= 0.95 * ((12 * HOUR_MS) / CAMPAIGN_CHECK_MS), `checked throughout the series (${checks.length})`);

  // The chain of runs: each closed by continue-as-new until the last, each within the bound.
  const lengths: number[] = [];
  for (let runId: string | undefined = firstRunId; runId; ) {
    const events: temporal.api.history.v1.IHistoryEvent[] = (await env.client.workflow.getHandle(id, runId).fetchHistory()).events ?? [];
    lengths.push(events.length);
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  assert.ok(lengths.length >= 3, `several continue-as-new runs (${lengths.join(', ')} events)`);
  assert.equal(result.run, lengths.length - 1, 'the last run knows how many came before it');
  // The bound is looked at between checks: a run may pass it by one check's events and a signal's.
  for (const n of lengths) assert.ok(n <= BOUND + 30, `a run of ${n} events, bound ${BOUND}`);
  // The tag followed every move once, in order, across the runs (never twice for one move).
  const expiries = doubles.calls.filter((c) => c.name === 'retagRigExpiry').map((c) => (c.input as { expiresAt: string }).expiresAt);
  const moves = [start + 10 * DAY_MS, ...Array.from({ length: 10 }, (_, i) => start + 10 * DAY_MS + (i + 1) * 60_000)];
  assert.deepEqual(expiries, moves.map((ms) => new Date(ms).toISOString()));
  // The first run (checks, the extension, a hold-until, its re-tags, the continue-as-new) and the
  // last (checks stopped, fired), for the replay fixtures (test/fixtures/histories).
  await saveHistory(env.address, id, id, firstRunId);
  await saveHistory(env.address, id, 'kept-10d-last.watchdog');
});

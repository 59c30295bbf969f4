// test-mode: unit
// The watcher's detail beside the step (client/activity-detail.ts): from each long step's last
// heartbeat, what it is doing now: the seed's rows and rate, the settle's wait, the repeat's second
// and live p99, the teardown's resources left; and the measuring left, counted down through a long repeat.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { activityDetail, loadSecond, type DetailMemory } from '../../client/activity-detail';
import { progressLine } from '../../client/progress-view';

test('the seed: rows of the total, committed, and the rate between two looks; then the settle\'s wait', () => {
  const mem: DetailMemory = {};
  const copy = (rows: number, atMs: number, attempt = 1) => activityDetail({ type: 'seedHistory', attempt, atMs, details: { phase: 'copy', rows, committed: rows - (rows % 100_000), total: 500_000, attempt } }, mem);
  assert.equal(copy(100_000, 10_000), 'seed: 100,000 of 500,000 rows (100,000 committed)');
  assert.equal(copy(250_000, 15_000), 'seed: 250,000 of 500,000 rows (200,000 committed) · 30,000 rows/s');
  // The same heartbeat seen again: no rate from a zero interval.
  assert.equal(copy(250_000, 15_000), 'seed: 250,000 of 500,000 rows (200,000 committed)');
  assert.equal(copy(300_000, 20_000, 2), 'seed: 300,000 of 500,000 rows (300,000 committed) · 10,000 rows/s (attempt 2)');
  assert.equal(
    activityDetail({ type: 'seedHistory', attempt: 1, details: { phase: 'settle', rows: 500_000, committed: 500_000, total: 500_000, attempt: 1 } }),
    'seed: all 500,000 rows in; waiting for autovacuum to settle the table',
  );
});

test('a repeat: its second, what was sent, drops and failures when there are any, and the live p99', () => {
  assert.equal(activityDetail({ type: 'runRepeat', attempt: 1, details: { runTag: 't', second: 12, sent: 12_000, dropped: 0, failed: 0, p99_ms: 4.25 } }), 'load: second 12, 12,000 sent in it, live p99 4.3 ms');
  assert.equal(
    activityDetail({ type: 'runRepeat', attempt: 1, details: { runTag: 't', second: 3, sent: 2_900, dropped: 100, failed: 2, p99_ms: 80 } }),
    'load: second 3, 2,900 sent in it, 100 dropped, 2 failed, live p99 80.0 ms',
  );
  assert.equal(activityDetail({ type: 'warmUp', attempt: 1, details: { warmup: 'batched', runTag: 't', second: 4, sent: 800, failed: 0 } }), 'warm-up batched: second 4, 800 sent in it');
});

test('a line the step sends (teardown, bring-up) is shown as it is, a long one cut; nothing before the first heartbeat', () => {
  assert.equal(activityDetail({ type: 'teardownRig', attempt: 1, details: 'removing cluster pg (port 5433); 2 of 3 resource(s) left' }), 'removing cluster pg (port 5433); 2 of 3 resource(s) left');
  assert.equal(activityDetail({ type: 'runRepeat', attempt: 1, details: { runTag: 't', phase: 'judging' } }), 'judging');
  assert.equal(activityDetail({ type: 'teardownRig', attempt: 1, details: 'x'.repeat(300) })!.length, 160);
  assert.equal(activityDetail({ type: 'seedHistory', attempt: 1, details: undefined }), undefined);
});

test("the measuring left counts down through a long repeat: the running load's second, from its heartbeat, is taken off", () => {
  const p = { campaignId: 'c', step: 'sustained' as const, status: 'running' as const, startedAt: '2026-12-05T00:00:00Z', secondsLeft: 3_605, aborting: false, lastVerdicts: [], configuration: 'soak', repeat: { k: 1, n: 1 }, phase: 'repeat' as const };
  const second = loadSecond({ type: 'runRepeat', attempt: 1, details: { runTag: 't', second: 481, sent: 240 } });
  assert.equal(second, 481);
  assert.match(progressLine(p, undefined, second), /~52m04s of measuring left/);
  assert.match(progressLine(p), /~1h00m of measuring left/); // no heartbeat yet: the whole repeat
  // A warm-up's second is not the repeat's; a cool-down's line keeps the workflow's own count.
  assert.equal(loadSecond({ type: 'warmUp', attempt: 1, details: { warmup: 'soak', second: 4, sent: 800 } }), undefined);
  assert.match(progressLine({ ...p, phase: 'cool-down' }, undefined, 481), /~1h00m of measuring left/);
});

// test-mode: unit
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BucketStat } from '../../lib/protocol/buckets';
import { freezeCadenceS, freezeEpisodes, freezeSeconds, isFreezeSecond, medianBucketP99, windows } from '../../lib/protocol/detectors';

const b = (start: number, p99ms: number | null, o: Partial<BucketStat> = {}): BucketStat => ({
  start_s: start,
  width_s: 10,
  offered: 100,
  sent: p99ms === null ? 0 : 100,
  ok: p99ms === null ? 0 : 100,
  failed: 0,
  dropped: p99ms === null ? 100 : 0,
  samples: p99ms === null ? 0 : 100,
  p50_us: p99ms === null ? null : 1000,
  p99_us: p99ms === null ? null : p99ms * 1000,
  max_us: p99ms === null ? null : p99ms * 1000,
  over_50ms: 0,
  ...o,
});

test('median bucket p99 ignores buckets without samples', () => {
  assert.equal(medianBucketP99([b(0, 10), b(10, 30), b(20, 20)]), 20000);
  assert.equal(medianBucketP99([b(0, 10), b(10, 30), b(20, null)]), 20000);
  assert.equal(medianBucketP99([b(0, null)]), null);
});

test('a window is >= 2 consecutive buckets above 3x the median p99', () => {
  // p99s 10,10,40,40,10,10: median 10 ms, limit 30 ms: buckets 20 and 30 form one window.
  const t = [b(0, 10), b(10, 10), b(20, 40), b(30, 40), b(40, 10), b(50, 10)];
  assert.deepEqual(windows(t, medianBucketP99(t)), [[20, 30]]);
  // one bucket above is not a window
  const one = [b(0, 10), b(10, 40), b(20, 10), b(30, 10)];
  assert.deepEqual(windows(one, medianBucketP99(one)), []);
  // exactly 3x is not above
  const eq = [b(0, 10), b(10, 30), b(20, 30), b(30, 10), b(40, 10)];
  assert.deepEqual(windows(eq, medianBucketP99(eq)), []);
  // two windows, one of three buckets, one running to the end
  // p99s 10,50,50,50, then 10 x7, then 99,99: median 10 ms (7th of 13)
  const p99s = [10, 50, 50, 50, 10, 10, 10, 10, 10, 10, 10, 99, 99];
  const two = p99s.map((p, i) => b(i * 10, p));
  assert.equal(medianBucketP99(two), 10000);
  assert.deepEqual(windows(two, medianBucketP99(two)), [[10, 30], [110, 120]]);
});

test('a bucket without samples ends a window; no samples at all, no windows', () => {
  const t = [b(0, 10), b(10, 10), b(20, 50), b(30, null), b(40, 50), b(50, 10)];
  assert.deepEqual(windows(t, medianBucketP99(t)), []);
  assert.deepEqual(windows([b(0, null)], null), []);
});

const s = (start: number, samples: number, maxMs: number, over50: number): BucketStat =>
  b(start, maxMs, { width_s: 1, samples, sent: samples, ok: samples, max_us: maxMs * 1000, over_50ms: over50 });

test('a freeze-second: worst > 150 ms AND > 10 % of its requests over 50 ms (both strict)', () => {
  assert.ok(isFreezeSecond(s(0, 100, 151, 11)));
  assert.ok(!isFreezeSecond(s(0, 100, 150, 50)), 'worst exactly 150 ms is not over');
  assert.ok(!isFreezeSecond(s(0, 100, 900, 10)), 'exactly 10 % is not over');
  assert.ok(!isFreezeSecond(s(0, 100, 900, 1)), 'one slow request is a tail, not a freeze');
  assert.ok(isFreezeSecond(s(0, 1, 200, 1)), 'a single request second can freeze');
  assert.ok(!isFreezeSecond(b(0, null, { width_s: 1 })), 'an empty second is not a freeze');
});

test('freeze-seconds, their episodes and cadence', () => {
  const per = Array.from({ length: 70 }, (_, i) => ([5, 6, 35, 36, 65].includes(i) ? s(i, 100, 400, 60) : s(i, 100, 8, 0)));
  const f = freezeSeconds(per);
  assert.deepEqual(f, [5, 6, 35, 36, 65]);
  assert.deepEqual(freezeEpisodes(f), [[5, 6], [35, 36], [65, 65]]);
  assert.equal(freezeCadenceS(f), 30);
  assert.equal(freezeCadenceS([12]), null);
  assert.equal(freezeCadenceS([12, 13, 14]), null, 'one 3-second freeze is one episode: no rhythm');
  assert.equal(freezeCadenceS([]), null);
  assert.equal(freezeCadenceS([0, 5, 14]), 7, 'gaps 5 and 9: median 7');
});

// test-mode: unit
// bench:sensitivity's arithmetic (issue 45, lib/protocol/sensitivity.ts) on pools whose truth is
// known: the draws are two disjoint sides; a pool of one value never calls a change; a slowdown far
// beyond the noise is always called worse and none is at 3 vs 3 (no 95 % interval exists there); the
// MDE sits between the effects called less and more often than 80 %; a weekly history carries its step;
// runsUntilAlert counts the first slow run as 1.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detectionRate, drawPairs, falseAlarms, falseAlertsPer52, minimumDetectableEffect, neighbourNoise, runsUntilAlert, weeklyHistory, type RepeatValues } from '../../lib/protocol/sensitivity';
import { normal } from './change-point-series';

/** 30 repeats whose p50 is 2 ms with `cv` relative noise, p99 10 ms with 3x that. */
function pool(cv: number, seed = 7): RepeatValues[] {
  const z = normal(seed);
  return Array.from({ length: 30 }, () => ({ p50_ms: 2 * (1 + cv * z()), p99_ms: 10 * (1 + 3 * cv * z()) }));
}

test('draws: two disjoint sides of the asked size, the same for the same seed, refused past the pool', () => {
  const d = drawPairs(30, 5, 50, 3);
  assert.equal(d.length, 50);
  for (const p of d) {
    assert.equal(p.control.length, 5);
    assert.equal(p.variant.length, 5);
    assert.equal(new Set([...p.control, ...p.variant]).size, 10);
    assert.ok([...p.control, ...p.variant].every((i) => i >= 0 && i < 30));
  }
  assert.deepEqual(drawPairs(30, 5, 50, 3), d);
  assert.throws(() => drawPairs(9, 5, 1, 1), /needs 10 distinct repeats; the pool has 9: measure more A\/A repeats/);
});

test('a pool of one value is never called different, and any slowdown of it always is at 5 vs 5', () => {
  const flat = Array.from({ length: 12 }, () => ({ p50_ms: 2 }));
  const aa = falseAlarms(flat, ['p50_ms'], { perSide: 5, draws: 200 });
  assert.equal(aa.family, 0);
  assert.equal(detectionRate(flat, 'p50_ms', 1, { perSide: 5, draws: 200 }), 1);
});

test('3 vs 3 repeats can call no change, however large; 5 vs 5 calls a +100 % slowdown of 2 % noise every time', () => {
  const p = pool(0.02);
  assert.equal(detectionRate(p, 'p50_ms', 100, { perSide: 3, draws: 300 }), 0);
  assert.equal(minimumDetectableEffect(p, 'p50_ms', { perSide: 3, draws: 300 }), null);
  assert.equal(detectionRate(p, 'p50_ms', 100, { perSide: 5, draws: 300 }), 1);
});

test('the MDE at 80 % power lies between an effect called less often and one called more often', () => {
  const p = pool(0.05);
  const opts = { perSide: 5, draws: 400, seed: 2 };
  const mde = minimumDetectableEffect(p, 'p50_ms', opts);
  assert.ok(mde !== null && mde > 0);
  assert.ok(detectionRate(p, 'p50_ms', mde, opts) >= 0.8);
  assert.ok(detectionRate(p, 'p50_ms', Math.max(0, mde - 0.2), opts) < 0.8);
  // Noisier repeats need a larger change to be seen.
  const noisier = minimumDetectableEffect(pool(0.15), 'p50_ms', opts);
  assert.ok(noisier !== null && noisier > mde, `${noisier} > ${mde}`);
});

test('a weekly history carries its step from stepAt on, and the same seed draws the same weeks', () => {
  const values = Array.from({ length: 10 }, (_, i) => 100 + i);
  const h = weeklyHistory(values, { runs: 8, perRun: 10, stepAt: 5, stepPct: 10, seed: 1 });
  // perRun = the whole pool: every run's median is the pool's (104.5), times 1.1 from the step on.
  assert.deepEqual(h.map((x) => Math.round(x * 100) / 100), [104.5, 104.5, 104.5, 104.5, 104.5, 114.95, 114.95, 114.95]);
  assert.deepEqual(weeklyHistory(values, { runs: 8, perRun: 3, seed: 4 }), weeklyHistory(values, { runs: 8, perRun: 3, seed: 4 }));
  assert.throws(() => weeklyHistory(values, { runs: 2, perRun: 11, seed: 1 }), /needs a pool of at least 11/);
});

test('runs until an alert count the first slow run as 1; false alerts are counted per 52 judged runs', () => {
  const h = [1, 1, 1, 1, 2, 2, 2];
  const above = (prefix: readonly number[]) => prefix[prefix.length - 1] > 1.5;
  assert.equal(runsUntilAlert(h, 4, above), 1);
  assert.equal(runsUntilAlert(h, 4, (prefix) => prefix.length >= 7), 3);
  assert.equal(runsUntilAlert(h, 4, () => false), null);
  assert.deepEqual(falseAlertsPer52([1, 1, 1, 1, 1, 3], 1, (prefix) => prefix[prefix.length - 1] > 2), { alerts: 1, runs: 5, per52: 10.4 });
});

test('neighbour noise: a drift that moves neighbours together reads little; alternating and independent noise read their size', () => {
  // A steady fall of 40 % over 30 repeats: the pool's spread is large, each neighbour ratio about 1.5 %.
  const drift = Array.from({ length: 30 }, (_, i) => 3 * (1 - (0.4 * i) / 29));
  assert.ok(neighbourNoise(drift)! < 0.03, String(neighbourNoise(drift)));
  // Repeats alternating between 1.8 and 2.2 (an A/B order with a real 20 % difference): read as noise.
  const alt = Array.from({ length: 30 }, (_, i) => (i % 2 ? 2.2 : 1.8));
  assert.ok(neighbourNoise(alt)! > 0.15, String(neighbourNoise(alt)));
  // Independent normal noise of 10 % (in logs) reads about 10 %.
  const rnd = normal(7);
  const noisy = Array.from({ length: 400 }, () => Math.exp(0.1 * rnd()));
  const n = neighbourNoise(noisy)!;
  assert.ok(n > 0.085 && n < 0.115, String(n));
  assert.equal(neighbourNoise([1, 2]), null);
  assert.equal(neighbourNoise([1, 0, 2]), null);
});

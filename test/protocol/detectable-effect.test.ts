// test-mode: unit
// The smallest change a comparison could have seen (lib/protocol/detectable-effect.ts): none at all
// where the repeats are too few for the level, zero where the repeats did not vary, the same number
// for the same repeats, and, on noise of known size, close to the true MDE of the exact test, with
// the verdict rule itself catching a shift of that size in 80 % of campaigns.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareFigure } from '../../lib/protocol/compare';
import { detectableEffect } from '../../lib/protocol/detectable-effect';
import { intervalDepth } from '../../lib/protocol/rank-interval';
import { rng } from '../harness/rng';

function normal(seed: number): () => number {
  const r = rng(seed);
  return () => Math.sqrt(-2 * Math.log(Math.max(r(), 1e-12))) * Math.cos(2 * Math.PI * r());
}

test('3 vs 3 at 95 %: no MDE, however large a change; said so on the page', () => {
  const e = detectableEffect([22.1, 22.6, 23.0], [22.4, 22.9, 23.1], { alpha: 0.05 });
  assert.equal(e.absolute, null);
  assert.equal(e.pct, null);
  const f = compareFigure('p99_ms', [22.1, 22.6, 23.0], [22.4, 22.9, 23.1]);
  assert.equal(f.words, 'no difference we can see; 3 vs 3 repeats can show no change at this level (95 %), however large');
  // 4 vs 4 has a 95 % interval (alone), but none at 5 %/6 (six figures tested together).
  assert.notEqual(detectableEffect([1, 2, 3, 4], [1, 2, 3, 4.5], { alpha: 0.05 }).absolute, null);
  assert.equal(detectableEffect([1, 2, 3, 4], [1, 2, 3, 4.5], { alpha: 0.05 / 6 }).absolute, null);
});

test('repeats that did not vary: any change would have shown; the same repeats give the same MDE', () => {
  const still = detectableEffect([0, 0, 0, 0, 0], [0, 0, 0, 0, 0], { alpha: 0.05 });
  assert.equal(still.absolute, 0);
  assert.match(compareFigure('dropped', [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]).words, /these repeats did not vary, so any change would have shown/);
  const a = [55.2, 55.5, 55.7, 56.0, 56.3];
  const b = [55.4, 55.6, 55.9, 56.1, 56.2];
  assert.deepEqual(detectableEffect(a, b, { alpha: 0.05 }), detectableEffect(a, b, { alpha: 0.05 }));
  // Twice the noise, twice the MDE (the residuals scale; the seeded redraws are the same).
  const wide = detectableEffect(a.map((v) => 55.7 + 2 * (v - 55.7)), b.map((v) => 55.9 + 2 * (v - 55.9)), { alpha: 0.05 });
  assert.ok(Math.abs(wide.absolute! - 2 * detectableEffect(a, b, { alpha: 0.05 }).absolute!) < 1e-9);
  // A stricter level needs a larger change; a bar (--tolerance) adds to it.
  assert.ok(detectableEffect(a, b, { alpha: 0.05 / 6 }).absolute! > detectableEffect(a, b, { alpha: 0.05 }).absolute!);
  assert.ok(Math.abs(detectableEffect(a, b, { alpha: 0.05, margin: 1 }).absolute! - 1 - detectableEffect(a, b, { alpha: 0.05 }).absolute!) < 1e-9);
  // The protocol's vacuum control, as the page says it.
  const f = compareFigure('p50_ms', a, b);
  assert.equal(f.words, `no difference we can see; with 5 repeats a side at this noise, a change under ${Math.round(f.detectable!.pct! * 10) / 10} % would not show`);
  assert.ok(f.detectable!.pct! > 0.5 && f.detectable!.pct! < 5, JSON.stringify(f.detectable));
});

test('on noise of known size the MDE is the true one: the verdict rule catches a shift of that size in 80 % of campaigns', () => {
  const sd = 10;
  for (const [m, alpha] of [
    [5, 0.05],
    [5, 0.05 / 6],
  ] as const) {
    // The truth for normal noise: a draw's rising shift is called once δ > −D_(k) (its k-th smallest
    // difference); the true MDE is the 80th percentile of that threshold over many draws.
    const z = normal(1000 + m);
    const k = intervalDepth(m, m, 1 - alpha);
    const th: number[] = [];
    for (let i = 0; i < 20000; i++) {
      const x = Array.from({ length: m }, () => sd * z());
      const d: number[] = [];
      for (let j = 0; j < m; j++) {
        const y = sd * z();
        for (const a of x) d.push(y - a);
      }
      d.sort((p, q) => p - q);
      th.push(-d[k - 1]);
    }
    th.sort((p, q) => p - q);
    const truth = th[Math.ceil(0.8 * th.length) - 1];
    // The verdict rule itself (compareFigure, the interval above zero) at that shift: 80 % caught.
    let caught = 0;
    const trials = 2000;
    for (let i = 0; i < trials; i++) {
      const x = Array.from({ length: m }, () => 100 + sd * z());
      const y = Array.from({ length: m }, () => 100 + truth + sd * z());
      if (compareFigure('p50_ms', x, y, { level: 1 - alpha, detectable: false }).verdict === 'worse') caught++;
    }
    assert.ok(Math.abs(caught / trials - 0.8) <= 0.03, `${m} vs ${m} at α ${alpha}: ${caught}/${trials} caught at the true MDE ${truth}`);
    // One campaign's estimate, from its own repeats only: across 100 campaigns, its median within 20 %.
    const est: number[] = [];
    for (let i = 0; i < 100; i++) {
      const x = Array.from({ length: m }, () => 100 + sd * z());
      const y = Array.from({ length: m }, () => 100 + sd * z());
      est.push(detectableEffect(x, y, { alpha, draws: 1000 }).absolute!);
    }
    est.sort((p, q) => p - q);
    const med = (est[49] + est[50]) / 2;
    assert.ok(Math.abs(med / truth - 1) <= 0.2, `${m} vs ${m} at α ${alpha}: median estimate ${med} against the true ${truth}`);
  }
});

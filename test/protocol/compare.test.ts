// The comparison that knows noise: exact Mann–Whitney intervals, and verdicts on synthetic repeats
// with a known shift and with pure noise (seeded, so every run draws the same repeats).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareFigure, compareRepeats, comparisonMethod, methodWords } from '../../lib/protocol/compare';
import { fewestRepeatsFor, mannWhitneyCounts, rankSumPValue, shiftInterval } from '../../lib/protocol/rank-interval';
import type { RepeatFigures } from '../../lib/protocol/reporting';
import { rng } from '../harness/rng';

/** A normal draw from the seeded generator: the same seed gives the same repeats. */
function draws(r: () => number, n: number, mean: number, sd: number): number[] {
  return Array.from({ length: n }, () => mean + sd * Math.sqrt(-2 * Math.log(Math.max(r(), 1e-12))) * Math.cos(2 * Math.PI * r()));
}
const C = (n: number, k: number): number => (k === 0 ? 1 : (C(n, k - 1) * (n - k + 1)) / k);

test('the Mann–Whitney counts: every ordering once, symmetric, the textbook 3 vs 3', () => {
  assert.deepEqual(mannWhitneyCounts(3, 3), [1, 1, 2, 3, 3, 3, 3, 2, 1, 1]);
  for (const [m, n] of [[1, 1], [2, 5], [4, 4], [5, 5], [3, 7], [10, 10]]) {
    const c = mannWhitneyCounts(m, n);
    assert.equal(c.length, m * n + 1);
    assert.equal(c.reduce((s, x) => s + x, 0), C(m + n, m), `${m} vs ${n}`);
    assert.deepEqual(c, [...c].reverse());
  }
});

test('the interval: none at 3 vs 3 (1 in 10 is the most extreme), the extremes at 4 vs 4, the third pair in at 5 vs 5', () => {
  const none = shiftInterval([1, 2, 3], [10, 11, 12]);
  assert.equal(none.interval, null);
  assert.equal(none.confidence, null);
  assert.equal(none.shift, 9);
  // 4 vs 4: P(U = 0) = 1/70 ≤ 2.5 %, so the interval is min to max of the 16 differences, 97.1 %.
  const four = shiftInterval([1, 2, 3, 4], [11, 12, 13, 14]);
  assert.deepEqual(four.interval, [7, 13]);
  assert.equal(Math.round(four.confidence! * 1000), 971);
  // 5 vs 5: P(U ≤ 2) = 4/252, P(U ≤ 3) = 7/252 > 2.5 %: the 3rd smallest to 3rd largest of 25, 96.8 %.
  const five = shiftInterval([0, 0, 0, 0, 0], [1, 2, 3, 4, 5]);
  assert.deepEqual(five.interval, [1, 5]);
  assert.equal(Math.round(five.confidence! * 1000), 968);
  const lopsided = shiftInterval([0, 0, 0], [1, 2, 3, 4, 5]);
  assert.ok(lopsided.interval, '3 vs 5 has 56 orderings: enough for 95 %');
  assert.equal(fewestRepeatsFor(0.95), 4);
  assert.equal(fewestRepeatsFor(0.9), 3);
});

test('pure noise at 3 repeats is never "worse" (nor "better"): 2,000 seeded pairs of campaigns', () => {
  const r = rng(13);
  const verdicts = new Map<string, number>();
  for (let i = 0; i < 2000; i++) {
    // p99 around 22.6 ms with a 10 % spread between repeats: the same rig, other draws.
    const f = compareFigure('p99_ms', draws(r, 3, 22.6, 2.3), draws(r, 3, 22.6, 2.3), { detectable: false });
    verdicts.set(f.words, (verdicts.get(f.words) ?? 0) + 1);
  }
  assert.deepEqual([...verdicts], [['no difference we can see with 3 repeats', 2000]]);
});

test('pure noise at 5 repeats: "worse" about as rarely as the interval promises (≤ 1.6 % expected)', () => {
  const r = rng(17);
  let worse = 0;
  let better = 0;
  const trials = 2000;
  for (let i = 0; i < trials; i++) {
    const f = compareFigure('p99_ms', draws(r, 5, 22.6, 2.3), draws(r, 5, 22.6, 2.3), { detectable: false });
    if (f.verdict === 'worse') worse++;
    if (f.verdict === 'better') better++;
  }
  assert.ok(worse / trials <= 0.025, `worse ${worse}/${trials}`);
  assert.ok(better / trials <= 0.025, `better ${better}/${trials}`);
});

test('a known shift: at 5 repeats "worse" (and "better" the other way); at 3 repeats, said to be too few', () => {
  const r = rng(19);
  for (let i = 0; i < 200; i++) {
    const control = draws(r, 5, 22.6, 1.5);
    const slower = control.map((x, j) => x * 1.6 + 0.1 * j);
    const w = compareFigure('p99_ms', control, draws(r, 5, 36, 1.5));
    assert.equal(w.verdict, 'worse', JSON.stringify(w));
    assert.equal(compareFigure('p99_ms', slower, control).verdict, 'better');
  }
  const three = compareFigure('p99_ms', [22.1, 22.6, 23.0], [36.0, 36.4, 37.1]);
  assert.equal(three.verdict, 'no-difference');
  assert.equal(three.words, 'no difference we can see; 3 vs 3 repeats can show no change at this level (95 %), however large');
  assert.ok(Math.abs(three.difference! - 13.8) < 1e-9);
  assert.match(methodWords(three), /3 vs 3 repeats is too few for a 95 % interval \(fewest 4 vs 4\)/);
});

test("the protocol's vacuum control: medians 55.7 vs 55.9 ms are no difference; a smallest effect raises the bar", () => {
  const f = compareFigure('p50_ms', [55.2, 55.5, 55.7, 56.0, 56.3], [55.4, 55.6, 55.9, 56.1, 56.2]);
  assert.equal(f.verdict, 'no-difference');
  assert.match(f.words, /^no difference we can see; with 5 repeats a side at this noise, a change under [\d.]+ % would not show$/);
  assert.match(methodWords(f), /^Mann–Whitney 96\.8 % interval \(5 vs 5\), p = 0\.\d+$/);
  // +10 % for sure, but not beyond 15 % of the control's median.
  const control = [100, 101, 102, 103, 104];
  const plus10 = control.map((x) => x * 1.1);
  assert.equal(compareFigure('p99_ms', control, plus10).verdict, 'worse');
  const tolerant = compareFigure('p99_ms', control, plus10, { minEffectPct: 15 });
  assert.equal(tolerant.verdict, 'no-difference');
  assert.match(tolerant.words, /^no difference beyond 15 % we can see; with 5 repeats a side at this noise, a change under [\d.]+ % would not show$/);
  assert.ok(tolerant.detectable!.pct! > 15, 'the bar is part of what a change must clear');
});

test('compareRepeats: passing repeats only, interrupted ones not counted, a lost pass named', () => {
  const rep = (passed: boolean, p99: number | null, extra: Partial<RepeatFigures> = {}): RepeatFigures => ({ passed, figures: { p99_ms: p99, dropped: passed ? 0 : 40 }, ...extra });
  const control = [rep(true, 10), rep(true, 11), rep(true, 12), rep(true, 10.5), rep(true, 11.5)];
  const variant = [rep(true, 20), rep(true, 21), rep(false, 90), rep(true, 22), rep(true, 20.5), rep(true, 99, { interrupted: true })];
  const cmp = compareRepeats(control, variant, { figures: ['p99_ms', 'dropped', 'wal_bytes_per_event'] });
  assert.equal(cmp.control.label, '5/5');
  assert.equal(cmp.variant.label, '4/5');
  assert.equal(cmp.lost_passes, true);
  const [p99, drops, wal] = cmp.figures;
  assert.equal(p99.variant!.max, 22, 'the failed and the interrupted repeat are in no figure');
  assert.equal(p99.verdict, 'worse');
  assert.equal(drops.verdict, 'no-difference', 'zero drops beside zero drops');
  assert.equal(wal.verdict, 'not-compared');
  assert.equal(wal.words, 'not compared: no passing repeat on either side');
  assert.match(comparisonMethod(), /exact Mann–Whitney \(Wilcoxon rank-sum\) confidence interval/);
  assert.match(comparisonMethod(), /Benjamini–Hochberg at 5 %/);
});

/** Five repeats of the six compared figures on an unchanged rig: 10 % noise, `rho` of it shared by the repeat's figures. */
function aaSide(z: () => number, rho: number): RepeatFigures[] {
  const keys = ['p50_ms', 'p99_ms', 'worst_10s_p99_ms', 'freeze_seconds', 'dropped', 'wal_bytes_per_event'];
  return Array.from({ length: 5 }, () => {
    const shared = z();
    return { passed: true, figures: Object.fromEntries(keys.map((k) => [k, 100 * (1 + 0.1 * (Math.sqrt(rho) * shared + Math.sqrt(1 - rho) * z()))])) };
  });
}

test('an A/A pair (5 vs 5, six figures) is called different in at most 1 of 20, the figures corrected together; each figure alone is not', () => {
  for (const rho of [0, 0.5]) {
    const r = rng(45 + rho * 10);
    const z = () => Math.sqrt(-2 * Math.log(Math.max(r(), 1e-12))) * Math.cos(2 * Math.PI * r());
    const trials = 4000;
    let corrected = 0;
    let alone = 0;
    for (let i = 0; i < trials; i++) {
      const control = aaSide(z, rho);
      const variant = aaSide(z, rho);
      const cmp = compareRepeats(control, variant, { detectable: false });
      if (cmp.figures.some((f) => f.verdict !== 'no-difference')) corrected++;
      // The negative control: each figure at its own 95 %, as before the correction.
      const each = cmp.figures.map((f) => compareFigure(f.figure, control.map((c) => c.figures[f.figure] as number), variant.map((c) => c.figures[f.figure] as number), { detectable: false }));
      if (each.some((f) => f.verdict !== 'no-difference')) alone++;
    }
    assert.ok(corrected / trials <= 1 / 20, `shared noise ${rho}: the A/A pair called different in ${corrected}/${trials}`);
    assert.ok(alone / trials > 1 / 10, `shared noise ${rho}: each figure alone calls ${alone}/${trials}`);
  }
});

test('corrected together: a 10 % p50 slowdown at 2 % noise is still worse at 5 vs 5, with the level and p-value it was judged at', () => {
  const r = rng(46);
  const side = (p50: number) =>
    Array.from({ length: 5 }, (): RepeatFigures => ({ passed: true, figures: { p50_ms: draws(r, 1, p50, p50 * 0.02)[0], p99_ms: draws(r, 1, 20, 2)[0], worst_10s_p99_ms: draws(r, 1, 30, 3)[0], freeze_seconds: 0, dropped: 0, wal_bytes_per_event: draws(r, 1, 900, 9)[0] } }));
  const cmp = compareRepeats(side(2.3), side(2.53));
  assert.equal(cmp.correction!.method, 'benjamini-hochberg');
  assert.equal(cmp.correction!.figures, 6);
  const p50 = cmp.figures[0];
  assert.equal(p50.verdict, 'worse', JSON.stringify(p50));
  assert.ok(p50.p_value! <= (cmp.correction!.rejected * 0.05) / 6 + 1e-12);
  assert.equal(p50.level, cmp.correction!.level);
  assert.match(methodWords(p50), /^Mann–Whitney 99\.\d % interval \(5 vs 5\), p = 0\.00\d$/);
  // Zero drops beside zero drops: p = 1, no difference, and nothing could hide there.
  const drops = cmp.figures.find((f) => f.figure === 'dropped')!;
  assert.equal(drops.p_value, 1);
  assert.match(drops.words, /did not vary/);
});

test('the exact p-value is the interval\'s dual: p ≤ α exactly when the interval at 1 − α excludes zero', () => {
  const r = rng(47);
  for (let i = 0; i < 300; i++) {
    const m = 3 + (i % 4);
    const x = draws(r, m, 10, 1);
    const y = draws(r, 5, 10 + (i % 3), 1);
    const p = rankSumPValue(x, y);
    for (const alpha of [0.05, 0.05 / 6, 0.1, 0.02]) {
      const iv = shiftInterval(x, y, 1 - alpha).interval;
      assert.equal(p <= alpha + 1e-12, iv !== null && (iv[0] > 0 || iv[1] < 0), `${x} | ${y} at ${alpha}: p ${p}, interval ${iv}`);
    }
  }
});

// The comparison that knows noise: exact Mann–Whitney intervals, and verdicts on synthetic repeats
// with a known shift and with pure noise (seeded, so every run draws the same repeats).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareFigure, compareRepeats, comparisonMethod, methodWords } from '../../lib/protocol/compare';
import { fewestRepeatsFor, mannWhitneyCounts, shiftInterval } from '../../lib/protocol/rank-interval';
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
    const f = compareFigure('p99_ms', draws(r, 3, 22.6, 2.3), draws(r, 3, 22.6, 2.3));
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
    const f = compareFigure('p99_ms', draws(r, 5, 22.6, 2.3), draws(r, 5, 22.6, 2.3));
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
  assert.equal(three.words, 'no difference we can see with 3 repeats');
  assert.ok(Math.abs(three.difference! - 13.8) < 1e-9);
  assert.match(methodWords(three), /3 vs 3 repeats is too few for a 95 % interval \(fewest 4 vs 4\)/);
});

test("the protocol's vacuum control: medians 55.7 vs 55.9 ms are no difference; a smallest effect raises the bar", () => {
  const f = compareFigure('p50_ms', [55.2, 55.5, 55.7, 56.0, 56.3], [55.4, 55.6, 55.9, 56.1, 56.2]);
  assert.equal(f.verdict, 'no-difference');
  assert.equal(f.words, 'no difference we can see with 5 repeats');
  assert.match(methodWords(f), /^Mann–Whitney 96\.8 % interval \(5 vs 5\)$/);
  // +10 % for sure, but not beyond 15 % of the control's median.
  const control = [100, 101, 102, 103, 104];
  const plus10 = control.map((x) => x * 1.1);
  assert.equal(compareFigure('p99_ms', control, plus10).verdict, 'worse');
  const tolerant = compareFigure('p99_ms', control, plus10, { minEffectPct: 15 });
  assert.equal(tolerant.verdict, 'no-difference');
  assert.equal(tolerant.words, 'no difference beyond 15 % we can see with 5 repeats');
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
  assert.match(comparisonMethod(), /exact Mann–Whitney \(Wilcoxon rank-sum\) 95 % confidence interval/);
});

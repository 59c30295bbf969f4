// test-mode: unit
// Change points (lib/protocol/change-points.ts) on series whose truth is known: a step is found at its
// run, pure noise gives nothing (and its false-alarm rate is the level asked), the answer does not move
// between runs (seeded permutations), and a change point carries the builds and a magnitude with the
// right direction. The same series against Apache Otava: change-points-otava.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bestSplit, changePoints, eDivisive, ranksOf, type SeriesPoint } from '../../lib/protocol/change-points';
import { driftSeries, noiseSeries, outlierSeries, STEP_RUN, stepSeries } from './change-point-series';

const points = (values: number[]): SeriesPoint[] => values.map((value, i) => ({ value, run: `week-${i + 1}`, build: `b${i + 1}` }));

test('the best split: Q of Matteson & James, computed term by term', () => {
  // Two points: Q = |x0 − x1| at τ = 1.
  assert.deepEqual(bestSplit([3, 7]), { tau: 1, qhat: 4 });
  assert.equal(bestSplit([5]), null);
  // A brute-force Q over every (τ, κ) agrees with the prefix-sum search.
  const x = noiseSeries(9).slice(0, 12);
  let best = { tau: 0, qhat: -Infinity };
  for (let tau = 1; tau < x.length; tau++) {
    for (let kappa = tau + 1; kappa <= x.length; kappa++) {
      const X = x.slice(0, tau);
      const Y = x.slice(tau, kappa);
      const [n, m] = [X.length, Y.length];
      let b = 0, wx = 0, wy = 0;
      for (const a of X) for (const c of Y) b += Math.abs(a - c);
      for (let i = 0; i < n; i++) for (let k = i + 1; k < n; k++) wx += Math.abs(X[i] - X[k]);
      for (let i = 0; i < m; i++) for (let k = i + 1; k < m; k++) wy += Math.abs(Y[i] - Y[k]);
      const q = (2 / (m + n)) * b - (n > 1 ? ((2 * m) / ((m + n) * (n - 1))) * wx : 0) - (m > 1 ? ((2 * n) / ((m + n) * (m - 1))) * wy : 0);
      if (q > best.qhat + 1e-9) best = { tau, qhat: q };
    }
  }
  const got = bestSplit(x)!;
  assert.equal(got.tau, best.tau);
  assert.ok(Math.abs(got.qhat - best.qhat) < 1e-9);
});

test('mid-ranks', () => {
  assert.deepEqual(ranksOf([10, 30, 20, 20]), [1, 4, 2.5, 2.5]);
});

test('a 10 % step at run 20 among 2 % noise: found at run 20, worse, with the builds either side', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const cps = changePoints(points(stepSeries(seed)), 'higher-is-worse');
    assert.equal(cps.length, 1, `seed ${seed}: ${JSON.stringify(cps.map((c) => c.index))}`);
    const [c] = cps;
    assert.equal(c.index, STEP_RUN - 1);
    assert.equal(c.run, `week-${STEP_RUN}`);
    assert.equal(c.build, `b${STEP_RUN}`);
    assert.equal(c.previousBuild, `b${STEP_RUN - 1}`);
    assert.equal(c.verdict, 'worse');
    assert.ok(c.shiftPct! > 6 && c.shiftPct! < 14, `shift ${c.shiftPct} %`);
    assert.ok(c.shift.interval![0] > 0);
    assert.ok(c.pValue <= 0.01);
  }
  // A higher ceiling is better: the same step read for a figure where higher is better.
  assert.equal(changePoints(points(stepSeries(1)), 'higher-is-better')[0].verdict, 'better');
});

test('pure noise: no change point, and the false-alarm rate is the level asked', () => {
  for (const seed of [101, 102, 103, 104, 105]) assert.deepEqual(eDivisive(noiseSeries(seed)), [], `seed ${seed}`);
  // 200 series of noise at α = 0.05 (199 permutations, to keep it quick): about 10 with a change point.
  let alarms = 0;
  for (let s = 0; s < 200; s++) if (eDivisive(noiseSeries(1000 + s), { alpha: 0.05, permutations: 199, seed: s + 1 }).length) alarms++;
  assert.ok(alarms >= 2 && alarms <= 22, `${alarms} of 200 noise series had a change point at α = 0.05`);
});

test('outliers: two noisy weeks neither hide the step nor become change points', () => {
  for (const seed of [201, 202, 203]) {
    assert.deepEqual(eDivisive(outlierSeries(seed)).map((c) => c.index), [STEP_RUN - 1]);
    assert.deepEqual(eDivisive(outlierSeries(seed, false)), []);
  }
  // On the values (as Otava and M&J search), the noisy week masks the step: the reason for ranks.
  assert.deepEqual(eDivisive(outlierSeries(201), { ranks: false }), []);
});

test('a slide of 1 % a week from run 16: one change point early in the slide', () => {
  for (const seed of [401, 402, 403]) {
    const cps = eDivisive(driftSeries(seed));
    assert.ok(cps.length >= 1);
    assert.ok(cps[0].index >= 15 && cps[0].index <= 18, `seed ${seed}: first change at index ${cps[0].index}`);
  }
});

test('seeded: the same series gives the same p-values run after run; bad input is refused', () => {
  const s = stepSeries(7);
  assert.deepEqual(eDivisive(s, { seed: 3 }), eDivisive(s, { seed: 3 }));
  assert.throws(() => eDivisive(s, { permutations: 50, alpha: 0.01 }), /cannot reach p ≤ 0.01/);
  assert.throws(() => eDivisive([1, Number.NaN, 2]), /not a finite number/);
  assert.deepEqual(eDivisive([]), []);
  assert.deepEqual(eDivisive([5]), []);
  assert.deepEqual(eDivisive([5, 5, 5, 5, 5, 5]), []);
});

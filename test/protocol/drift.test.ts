// test-mode: unit
// Drift judged with its uncertainty (issue 34): each third's p99 carries its exact rank interval, the
// ratio the conservative quotient of the two at 95 % joint, and the gate fails only when that interval
// lies at or over the limit. Provoked on synthetic thirds with a known truth: a steady target at the
// rehearsal's 1,000 samples a third is no longer failed; a real rise of x2 and x3 over a 10-minute
// repeat at the protocol's rate (1,200 requests/s, 240,000 samples a third) still is; and where the
// samples suffice, the verdict is the protocol's plain rule (ratio < limit) outside a narrow band.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hash32 } from '../../lib/loadgen/prng';
import type { SecondGroups } from '../../lib/protocol/buckets';
import { DEFAULT_DRIFT_LIMIT, THIRD_CONFIDENCE, drift, judgeDrift, referenceThirdSamples, referenceWidth, thirdSamplesNeeded, type Drift } from '../../lib/protocol/drift';
import { binomialCdfRange, nearestRank, quantileRanks } from '../../lib/protocol/quantile-interval';

/** A uniform draw in (0, 1) from (seed, counter): the rig's own hash, so every run is the same. */
const unit = (seed: number, n: number) => (hash32(seed, n) + 0.5) / 2 ** 32;

/**
 * A service's latency, µs: 2 ms plus a Pareto tail of index 1.5 (p99 12.8 ms, p99.9 52 ms), heavier
 * than an exponential as a loaded service's is; its p99 is that of the rehearsal run of issue 34 that
 * read x1.59 (12.0 / 7.6 ms). `scale` multiplies it (a target slowing down).
 */
const latencyUs = (u: number, scale = 1) => Math.round(scale * (2000 + 500 * u ** (-1 / 1.5)));

/** Per-second groups of `perSecond` samples for `seconds` s, second s drawn at `scaleAt(s)`. */
function groups(seconds: number, perSecond: number, seed: number, scaleAt: (s: number) => number = () => 1): SecondGroups {
  const values = new Float64Array(seconds * perSecond);
  const offsets = new Int32Array(seconds + 1);
  for (let s = 0; s < seconds; s++) {
    offsets[s] = s * perSecond;
    for (let k = 0; k < perSecond; k++) values[s * perSecond + k] = latencyUs(unit(seed, s * perSecond + k), scaleAt(s));
  }
  offsets[seconds] = seconds * perSecond;
  const zero = new Int32Array(seconds);
  return { durationS: seconds, offsets, values, offered: zero, sent: zero, ok: zero, dropped: zero } as unknown as SecondGroups;
}

/** The protocol's plain rule on the rounded ratio: FAIL at or over the limit. */
const plainFails = (d: Drift, limit = DEFAULT_DRIFT_LIMIT) => d.ratio !== null && d.ratio >= limit;

test('the binomial tail and the rank interval of a quantile are exact', () => {
  // against the binomial summed term by term, for a size small enough to do by hand
  const n = 40;
  const p = 0.9;
  const pmf = (k: number) => {
    let c = 1;
    for (let i = 0; i < k; i++) c = (c * (n - i)) / (i + 1);
    return c * p ** k * (1 - p) ** (n - k);
  };
  const { from, to, cdf } = binomialCdfRange(n, p);
  let run = 0;
  for (let k = 0; k <= n; k++) {
    run += pmf(k);
    if (k >= from && k <= to) assert.ok(Math.abs(cdf[k - from] - run) < 1e-12, `P(B <= ${k})`);
  }
  // the p99 of 1,000 values: ranks 982 and 997 hold it with >= 97.47 % (exactly 98.3 %)
  const r = quantileRanks(1000, 0.99, THIRD_CONFIDENCE);
  assert.deepEqual([r.lower, r.upper], [982, 997]);
  assert.ok(r.coverage >= THIRD_CONFIDENCE && r.coverage < 0.99, String(r.coverage));
  // 434 values cannot bound a p99 from above at this level (0.99^434 > 1.27 %); 435 can, by their maximum
  assert.equal(quantileRanks(434, 0.99, THIRD_CONFIDENCE).upper, null);
  assert.equal(quantileRanks(435, 0.99, THIRD_CONFIDENCE).upper, 435);
  // the point estimate is always inside: nearest rank 990 of 1,000, 237,600 of 240,000
  assert.equal(nearestRank(1000, 99), 990);
  const big = quantileRanks(240_000, 0.99, THIRD_CONFIDENCE);
  assert.ok(big.lower! < 237_600 && 237_600 < big.upper!);
  assert.ok(big.upper! - big.lower! < 250, `${big.lower}-${big.upper}`);
});

test('its coverage is what it claims: 2,000 seeded thirds of 1,000 miss their true p99 about 2 % of the time or less', () => {
  // the true p99 of latencyUs: u = 0.01 -> 2000 + 500 x 0.01^(-1/1.5)
  const truth = 2000 + 500 * 0.01 ** (-1 / 1.5);
  let miss = 0;
  for (let seed = 1; seed <= 2000; seed++) {
    const d = drift(groups(3, 1000, seed));
    if ((d.first_p99_low_us as number) > truth || (d.first_p99_high_us as number) < truth) miss++;
  }
  // claimed: at most 1 - 0.9747 = 2.53 % (exactly 1.7 % at this size); rounded latency only widens it
  assert.ok(miss / 2000 <= 0.0253 + 0.01, `missed ${miss} of 2000`);
  assert.ok(miss > 0, 'an interval that never misses would be wider than it claims');
});

test('a steady target at the rehearsal\'s 1,000 samples a third is not failed on drift: 200 seeded runs, old rule vs new', () => {
  // 100 requests/s for 30 s: thirds of 10 s, 1,000 samples each, one unchanging distribution
  let oldFails = 0;
  let newFails = 0;
  let passes = 0;
  let undecided = 0;
  for (let seed = 1; seed <= 200; seed++) {
    const d = drift(groups(30, 100, seed));
    if (plainFails(d)) oldFails++;
    const j = judgeDrift(d, DEFAULT_DRIFT_LIMIT);
    if (j.state === 'fail') newFails++;
    if (j.state === 'pass') passes++;
    if (j.state === 'undecided') {
      undecided++;
      assert.ok(j.samplesNeeded !== null && j.samplesNeeded > 1000, `needed ${j.samplesNeeded}`);
    }
  }
  console.log(`steady target, 200 runs of 1,000 samples a third at limit x1.5: old rule failed ${oldFails}, new rule failed ${newFails} (passed ${passes}, not judged ${undecided})`);
  assert.equal(newFails, 0);
  assert.ok(oldFails > 0, 'the plain rule fails a steady target at this size (issue 34): the provocation holds');
});

test('a real rise of x2 and of x3 over a 10-minute repeat at the protocol\'s rate still fails drift, every seed', () => {
  // 1,200 requests/s for 600 s: thirds of 200 s and 240,000 samples. The target slows steadily over the
  // run: its latency scale runs linearly from 1 to 3 (x2 from the first third's middle to the last's)
  // and from 1 to 7 (x3)
  for (const [rise, end] of [
    [2, 3],
    [3, 7],
  ] as const) {
    for (let seed = 1; seed <= 3; seed++) {
      const d = drift(groups(600, 1200, seed * 7919, (s) => 1 + ((end - 1) * s) / 599));
      assert.equal(d.first_samples, 240_000);
      const j = judgeDrift(d, DEFAULT_DRIFT_LIMIT);
      assert.equal(j.state, 'fail', `x${rise} seed ${seed}: x${d.ratio} (x${d.ratio_low}-x${d.ratio_high})`);
      assert.ok((d.ratio as number) > rise * 0.9 && (d.ratio_low as number) > DEFAULT_DRIFT_LIMIT, `x${d.ratio} (x${d.ratio_low}-x${d.ratio_high})`);
      assert.ok((d.ratio_high as number) / (d.ratio_low as number) < 1.15, `a narrow interval at this size: x${d.ratio_low}-x${d.ratio_high}`);
    }
  }
});

test('where the samples suffice the verdict is the plain rule\'s, but in a narrow band around the limit', () => {
  // 240,000 samples a third; the last third's scale a step of `r` over the first's (a known true ratio)
  for (const r of [1, 1.2, 1.33, 1.4, 1.6, 1.7, 2]) {
    const d = drift(groups(600, 1200, 17, (s) => (s >= 400 ? r : 1)));
    const j = judgeDrift(d, DEFAULT_DRIFT_LIMIT);
    assert.notEqual(j.state, 'undecided', `x${r}: x${d.ratio} (x${d.ratio_low}-x${d.ratio_high})`);
    assert.equal(j.state === 'fail', plainFails(d), `x${r}: the verdict agrees with the plain rule`);
  }
  // at the limit itself the samples cannot tell: not judged, never a verdict against the plain rule
  const at = drift(groups(600, 1200, 17, (s) => (s >= 400 ? 1.5 : 1)));
  const j = judgeDrift(at, DEFAULT_DRIFT_LIMIT);
  assert.equal(j.state, 'undecided', `x${at.ratio} (x${at.ratio_low}-x${at.ratio_high})`);
  assert.ok((at.ratio_high as number) / (at.ratio_low as number) < 1.15, `x${at.ratio_low}-x${at.ratio_high}`);
  // and at every size, whatever the verdict, it never contradicts the plain rule: the ratio is inside its interval
  for (let seed = 1; seed <= 100; seed++) {
    const d = drift(groups(30, 40 + seed * 5, seed, (s) => (s >= 20 ? 1 + (seed % 7) / 4 : 1)));
    const k = judgeDrift(d, DEFAULT_DRIFT_LIMIT);
    if (k.state === 'fail') assert.ok(plainFails(d));
    if (k.state === 'pass') assert.ok(!plainFails(d));
    if (d.ratio !== null) assert.ok((d.ratio_low as number) <= d.ratio && (d.ratio_high === null || d.ratio <= d.ratio_high));
  }
});

test('the samples a third would need: from the run\'s own interval, else the reference tail', () => {
  // the reference tail (Pareto index 2): thirds of 1,000 give an interval x2.18 wide each way, of
  // 3,373 narrow enough to tell a steady p99 (x1) from x1.5
  assert.ok(Math.abs(referenceWidth(1000) - 2.179) < 0.001, String(referenceWidth(1000)));
  assert.equal(referenceWidth(434), Infinity);
  assert.equal(referenceThirdSamples(1, 1.5), 3373);
  assert.ok(1 * referenceWidth(3373) < 1.5 && 1 * referenceWidth(3372) >= 1.5);
  assert.equal(referenceThirdSamples(1.5, 1.5), null);
  // from a run: thirds that hold the distribution's exact quantiles (so their ratio stays the true one,
  // x1.3, at any size), 1,000 a third: not decided; the samples it names are 1,000 x (half-width /
  // distance)^2, and at that size the same thirds are decided (under the limit: a pass)
  const grid = (n: number) => {
    const values = new Float64Array(3 * n);
    for (let i = 0; i < n; i++) {
      const u = 1 - (i + 0.5) / n;
      values[i] = latencyUs(u);
      values[n + i] = latencyUs(u);
      values[2 * n + i] = latencyUs(u, 1.3);
    }
    return drift({ durationS: 3, offsets: Int32Array.from([0, n, 2 * n, 3 * n]), values } as unknown as SecondGroups);
  };
  const d = grid(1000);
  assert.equal(judgeDrift(d, 1.5).state, 'undecided', `x${d.ratio} (x${d.ratio_low}-x${d.ratio_high})`);
  const need = thirdSamplesNeeded(d, 1.5) as number;
  const r = (d.last_p99_us as number) / (d.first_p99_us as number);
  const half = Math.log((d.last_p99_high_us as number) / (d.first_p99_low_us as number) / r);
  assert.equal(need, Math.max(1001, Math.ceil(1000 * (half / Math.log(1.5 / r)) ** 2)));
  assert.equal(judgeDrift(d, 1.5).samplesNeeded, need);
  const enough = grid(need);
  assert.equal(judgeDrift(enough, 1.5).state, 'pass', `x${enough.ratio} (x${enough.ratio_low}-x${enough.ratio_high}) at ${need} a third`);
  console.log(`thirds holding a true x1.3 at limit x1.5: 1,000 a third not judged (x${d.ratio_low}-x${d.ratio_high}); ${need} named, and there x${enough.ratio_low}-x${enough.ratio_high}: a pass`);
});

// The shift between two small sets of per-repeat figures, and how sure we can be of it: the
// Hodges–Lehmann estimate with the exact Mann–Whitney (Wilcoxon rank-sum) confidence interval.
//
// Why this and not a bootstrap: a campaign has 3 to 5 repeats a side. A bootstrap of a median of
// three values only ever resamples those three values, and its percentile interval excludes zero
// whenever the two sets do not overlap, which pure noise does 1 time in 10 at 3 vs 3: it would call
// noise a regression every tenth week. The rank interval is exact at any size (no resampling, no
// seed, no normality), its coverage is known to the digit, and at 3 vs 3 it says what is true: no
// 95 % interval exists, because the most extreme of the 20 orderings of six values is already 1 in
// 10 two-sided. It assumes only that the two sets differ by a shift, which is what "the treatment
// moved p99 by X ms" claims anyway.
//
// Method (Hollander & Wolfe, "Nonparametric Statistical Methods", ch. 4.3):
//   D = the m·n differences variant_j − control_i, sorted;
//   the estimate is their median (Hodges–Lehmann);
//   the interval is [D_(k), D_(mn+1−k)] with k the largest integer such that P(U ≤ k−1) ≤ α/2 under
//   "no shift", U the Mann–Whitney statistic; its exact coverage is 1 − 2·P(U ≤ k−1);
//   when even k = 1 is too wide (P(U = 0) = 1 / C(m+n, m) > α/2), there is no interval at that level.
// Ties (integer figures like drops, or equal values) make the coverage approximate, and only ever
// widen an interval towards zero, never away from it.

/** counts[u] = how many of the C(m+n, m) orderings give U = u, for u = 0..m·n (no shift). */
export function mannWhitneyCounts(m: number, n: number): number[] {
  if (!(Number.isInteger(m) && Number.isInteger(n) && m >= 0 && n >= 0)) throw new RangeError(`sizes must be whole numbers, got ${m} and ${n}`);
  // The counts are the coefficients of the Gaussian binomial [m+n choose m]_q
  //   = Π_{i=1..m} (1 − q^(n+i)) / (1 − q^i),
  // built one factor at a time; every intermediate polynomial is again a Gaussian binomial, so all
  // coefficients stay non-negative whole numbers (exact in a double while they are below 2^53, and the
  // small tail coefficients that decide an interval always are).
  let poly = [1];
  for (let i = 1; i <= m; i++) {
    const len = poly.length + n + i;
    const next = new Array<number>(len).fill(0);
    for (let k = 0; k < poly.length; k++) {
      next[k] += poly[k];
      next[k + n + i] -= poly[k];
    }
    // Divide by (1 − q^i): b[k] = a[k] + b[k − i].
    for (let k = i; k < len; k++) next[k] += next[k - i];
    poly = next.slice(0, i * n + 1);
  }
  return poly;
}

export interface ShiftEstimate {
  /** Hodges–Lehmann: the median of the m·n differences variant − control. */
  shift: number;
  /** [low, high] at the confidence asked or more; null when m and n are too few for it. */
  interval: [number, number] | null;
  /** The interval's exact coverage under the shift model (≥ the level asked); null without an interval. */
  confidence: number | null;
  /** Repeats on each side. */
  m: number;
  n: number;
}

const median = (sorted: readonly number[]) => {
  const k = sorted.length >> 1;
  return sorted.length % 2 ? sorted[k] : (sorted[k - 1] + sorted[k]) / 2;
};

/**
 * The shift of `variant` relative to `control` (variant − control), with its Mann–Whitney interval
 * at `level` (default 0.95). Both lists need at least one finite value.
 */
export function shiftInterval(control: readonly number[], variant: readonly number[], level = 0.95): ShiftEstimate {
  if (!(level > 0 && level < 1)) throw new RangeError(`confidence level must be within (0, 1), got ${level}`);
  const x = control.filter(Number.isFinite);
  const y = variant.filter(Number.isFinite);
  const m = x.length;
  const n = y.length;
  if (!m || !n) throw new RangeError(`a shift needs a value on each side (control ${m}, variant ${n})`);
  const d: number[] = [];
  for (const b of y) for (const a of x) d.push(b - a);
  d.sort((p, q) => p - q);
  const k = intervalDepth(m, n, level);
  const counts = mannWhitneyCounts(m, n);
  const total = counts.reduce((s, c) => s + c, 0);
  let tail = 0;
  for (let u = 0; u < k; u++) tail += counts[u];
  const shift = median(d);
  if (k === 0) return { shift, interval: null, confidence: null, m, n };
  return { shift, interval: [d[k - 1], d[d.length - k]], confidence: 1 - (2 * tail) / total, m, n };
}

/**
 * How deep into the sorted m·n differences the interval at `level` starts: the largest k with
 * P(U ≤ k − 1) ≤ α/2 under "no shift" (α = 1 − level), so the interval is [D_(k), D_(mn+1−k)];
 * 0 when even the most extreme ordering is too likely (no interval at that level).
 */
export function intervalDepth(m: number, n: number, level: number): number {
  if (!(level > 0 && level < 1)) throw new RangeError(`confidence level must be within (0, 1), got ${level}`);
  const counts = mannWhitneyCounts(m, n);
  const total = counts.reduce((s, c) => s + c, 0);
  const alphaHalf = (1 - level) / 2;
  // Walk the lower tail while it stays within α/2 (1e-12: a level given as 1 − 2·P exactly is reached).
  let k = 0;
  let tail = 0;
  while (k < counts.length && (tail + counts[k]) / total <= alphaHalf + 1e-12) {
    tail += counts[k];
    k++;
  }
  return k;
}

/**
 * The exact two-sided Mann–Whitney p-value of "no shift" between control and variant: twice the
 * smaller tail, P(U ≤ u) with u = #{variant − control ≤ 0} (the variant is higher) or
 * u = #{variant − control ≥ 0} (lower), capped at 1. Ties are counted against a shift on both sides,
 * so with ties the p-value is only ever larger (cautious). It is the interval's dual to the digit:
 * p ≤ α exactly when the interval at 1 − α (shiftInterval) excludes zero.
 */
export function rankSumPValue(control: readonly number[], variant: readonly number[]): number {
  const x = control.filter(Number.isFinite);
  const y = variant.filter(Number.isFinite);
  const m = x.length;
  const n = y.length;
  if (!m || !n) throw new RangeError(`a p-value needs a value on each side (control ${m}, variant ${n})`);
  let atMostZero = 0;
  let atLeastZero = 0;
  for (const b of y)
    for (const a of x) {
      if (b - a <= 0) atMostZero++;
      if (b - a >= 0) atLeastZero++;
    }
  const counts = mannWhitneyCounts(m, n);
  const total = counts.reduce((s, c) => s + c, 0);
  const lowerTail = (u: number) => {
    let t = 0;
    for (let i = 0; i <= u && i < counts.length; i++) t += counts[i];
    return t / total;
  };
  return Math.min(1, 2 * Math.min(lowerTail(atMostZero), lowerTail(atLeastZero)));
}

/** The fewest equal repeats a side for which a rank interval at `level` exists (4 at 95 %). */
export function fewestRepeatsFor(level = 0.95): number {
  for (let n = 1; n < 64; n++) {
    const counts = mannWhitneyCounts(n, n);
    const total = counts.reduce((s, c) => s + c, 0);
    if (1 / total <= (1 - level) / 2 + 1e-12) return n;
  }
  throw new RangeError(`no repeat count below 64 reaches ${level}`);
}

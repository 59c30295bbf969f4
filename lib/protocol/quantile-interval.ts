// How sure one quantile of one sample is: a distribution-free confidence interval for the p-quantile
// from the sample's own order statistics (the rank interval for one sample, as rank-interval.ts is
// for a shift between two).
//
// Method (Hollander & Wolfe, "Nonparametric Statistical Methods", the sign-test interval for a
// quantile; David & Nagaraja, "Order Statistics", 7.1): of n independent draws of a continuous
// latency, the number B that fall below the true p-quantile q is Binomial(n, p), whatever the
// distribution. The l-th smallest value lies at or below q exactly when B >= l, and the u-th at or
// above it when B <= u - 1, so [x_(l), x_(u)] covers q with probability P(l <= B <= u - 1), known to
// the digit for any n. Equal tails: l is the largest rank with P(B <= l - 1) <= alpha/2, u the
// smallest with P(B >= u) <= alpha/2. When no rank is far enough out (99 values cannot bound a p99
// from above: P(B = n) = 0.99^n is over alpha/2 until n reaches a few hundred), that side is unbounded
// (null): the sample says nothing about it, and nothing is assumed. Ties (latency in whole µs) only
// make the closed interval's coverage larger.
//
// It assumes independent draws: a burst of slow requests that share one cause (a checkpoint, a stall)
// is correlated, and makes the true uncertainty wider than this interval.

export interface QuantileRanks {
  /** 1-based rank of the lower bound, or null: no rank bounds the quantile from below at this level. */
  lower: number | null;
  /** 1-based rank of the upper bound, or null: no rank bounds it from above (the upper side is unbounded). */
  upper: number | null;
  /** P(lower <= B <= upper - 1), an unbounded side counting as certain: the interval's exact coverage. */
  coverage: number;
}

/**
 * The binomial(n, p) distribution's CDF over the range that holds all but a negligible share of it:
 * cdf[k - from] = P(B <= k) for k in [from, to]; below `from` the CDF is under 1e-30 of the total,
 * from `to` on it is 1 within that. Built from the mode outwards by the ratio of consecutive terms,
 * so no factorial overflows, and in O(sqrt(n)) terms.
 */
export function binomialCdfRange(n: number, p: number): { from: number; to: number; cdf: Float64Array } {
  if (!(Number.isInteger(n) && n >= 0)) throw new RangeError(`n must be a whole number >= 0, got ${n}`);
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be within (0, 1), got ${p}`);
  const mode = Math.min(n, Math.floor((n + 1) * p));
  const odds = p / (1 - p);
  const up: number[] = [1];
  for (let k = mode; k < n; k++) {
    const next = (up[up.length - 1] * (n - k) * odds) / (k + 1);
    if (next < 1e-30) break;
    up.push(next);
  }
  const down: number[] = [];
  let w = 1;
  for (let k = mode; k > 0; k--) {
    w = (w * k) / ((n - k + 1) * odds);
    if (w < 1e-30) break;
    down.push(w);
  }
  const from = mode - down.length;
  const to = mode + up.length - 1;
  const terms = [...down.reverse(), ...up];
  let total = 0;
  for (const t of terms) total += t;
  const cdf = new Float64Array(terms.length);
  let run = 0;
  for (let i = 0; i < terms.length; i++) {
    run += terms[i];
    cdf[i] = run / total;
  }
  return { from, to, cdf };
}

/**
 * The ranks of the equal-tailed interval for the p-quantile (p in (0, 1)) of n independent values, at
 * `confidence` or more (in (0, 1)).
 */
export function quantileRanks(n: number, p: number, confidence: number): QuantileRanks {
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be within (0, 1), got ${confidence}`);
  if (n === 0) return { lower: null, upper: null, coverage: 1 };
  const half = (1 - confidence) / 2;
  const { from, to, cdf } = binomialCdfRange(n, p);
  const below = (k: number) => (k < from ? 0 : k >= to ? 1 : cdf[k - from]); // P(B <= k)
  // lower: the largest l >= 1 with P(B <= l - 1) <= half
  let lower: number | null = null;
  for (let l = Math.max(1, from); l <= n && below(l - 1) <= half + 1e-15; l++) lower = l;
  // upper: the smallest u <= n with P(B >= u) = 1 - P(B <= u - 1) <= half
  let upper: number | null = null;
  for (let u = Math.min(n, to + 1); u >= 1 && 1 - below(u - 1) <= half + 1e-15; u--) upper = u;
  const coverage = (upper === null ? 1 : below(upper - 1)) - (lower === null ? 0 : below(lower - 1));
  return { lower, upper, coverage };
}

/** The rank of the nearest-rank P-th percentile of n values (percentile.ts's definition, P in 0..100). */
export function nearestRank(n: number, percent: number): number {
  return Math.min(n, Math.max(1, Math.ceil((percent * n) / 100 - 1e-9)));
}

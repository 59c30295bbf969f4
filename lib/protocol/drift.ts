// Drift: p99 of the last third of the run over p99 of its first third. A repeat whose tail grows
// while it runs is not sustaining its rate, even when its whole-run p99 looks fine.
//
// Thirds are whole seconds by intended time, over the run's window (its plan's length: a stray row
// cannot stretch it, stream-plan.ts) and the ingest scenario only: with a run of D seconds and
// k = floor(D / 3), the first third is seconds [0, k) and the last third [D - k, D). A third with
// fewer than MIN_THIRD_SAMPLES samples has no p99 of its own (a nearest-rank p99 of 99 values or fewer
// is their maximum), so there is no drift figure (null, `judgeable: false`): the run is not judgeable
// on drift, which is neither a pass nor a failure of the service (gates.ts).
//
// The ratio is rounded ONCE, here, to DRIFT_DECIMALS: the gate compares that value with the limit and
// prints it, and the report carries it, so the text and the verdict always agree (1.4996 is x1.5,
// and x1.5 is not under a limit of x1.5).
//
// Drift is judged with its uncertainty (issue 34). A third of 1,000 samples has a p99 that is its
// 10th-largest value, and two such estimates from one unchanging target differ by x1.5 often; a
// third of the protocol's ~240,000 samples pins its p99 within a few percent. So each third's p99
// carries its rank interval (quantile-interval.ts: distribution-free, exact binomial order
// statistics) at THIRD_CONFIDENCE = sqrt(DRIFT_CONFIDENCE), so that both hold together with 95 %
// (the thirds are disjoint samples), and the ratio's interval is the conservative quotient of the two:
//   [last_low / first_high, last_high / first_low]
// (0 below when a bound is missing, unbounded above likewise), each bound rounded to DRIFT_DECIMALS
// like the ratio (rounding keeps order, so the rounded ratio stays inside the rounded interval, and
// what is printed is what is compared: thirds of constant 5 and 7.498 ms are x1.5-x1.5). Why 95 % joint: a false drift failure then
// needs the last third's lower bound to overshoot AND/OR the first's upper bound to undershoot, each a
// one-sided miss of at most 1.3 %, so a target whose true ratio is under the limit is failed at most
// ~2.5 % of the time (and essentially never at a true ratio of 1), while a real rise is still caught.
// The gate (judgeDrift): FAIL when the interval's lower bound is at or over the limit, PASS when its
// upper bound is under the limit, and NOT JUDGED on drift (neither a pass nor the service's fault)
// when it straddles the limit, naming the samples per third that would decide it. The point ratio
// always lies inside its interval, so a verdict never contradicts the protocol's plain rule
// (ratio < limit): it only abstains in the band where the samples cannot tell; with the protocol's
// ~240,000 samples a third that band is a few percent either side of the limit.
import type { SecondGroups } from './buckets';
import { select } from './percentile';
import { nearestRank, quantileRanks } from './quantile-interval';

export const DEFAULT_DRIFT_LIMIT = 1.5;
export const DRIFT_DECIMALS = 3;
/** A third needs this many samples for a p99 that is not simply its slowest request. */
export const MIN_THIRD_SAMPLES = 100;
/** The drift interval's joint confidence: both thirds' p99 intervals hold together this often. */
export const DRIFT_CONFIDENCE = 0.95;
/** Each third's p99 interval: two independent ones at sqrt(0.95) hold together 95 % of the time. */
export const THIRD_CONFIDENCE = Math.sqrt(DRIFT_CONFIDENCE);
/**
 * The tail the dry run assumes before any sample exists (and the page, for a side the samples leave
 * unbounded): a Pareto tail of index 2, P(latency > x) ∝ 1/x², whose p99.9 is 3.2 x its p99. Heavier
 * than an exponential's (p99.9 = 1.5 x p99 from zero), as a service's latency under load tends to be
 * and as the rig's own 1,000-sample thirds showed (x1.59 from one steady target, issue 34); a lighter
 * tail needs fewer samples, so a warning on this one errs towards more.
 */
export const REFERENCE_TAIL_INDEX = 2;

const scale = 10 ** DRIFT_DECIMALS;
const round = (x: number) => Math.round(x * scale) / scale;

export interface Drift {
  third_s: number;
  first_samples: number;
  last_samples: number;
  first_p99_us: number | null;
  last_p99_us: number | null;
  /** last / first, rounded to DRIFT_DECIMALS; null when a third is too small for a p99, or the first p99 is 0. */
  ratio: number | null;
  /** Each third's p99 interval at THIRD_CONFIDENCE (µs); null: that side is unbounded (or no p99). */
  first_p99_low_us: number | null;
  first_p99_high_us: number | null;
  last_p99_low_us: number | null;
  last_p99_high_us: number | null;
  /** The ratio's interval at DRIFT_CONFIDENCE, rounded as the ratio is: low (0 when unbounded below), high (null: unbounded above); both null with no ratio. */
  ratio_low: number | null;
  ratio_high: number | null;
}

interface ThirdP99 {
  p99: number | null;
  low: number | null;
  high: number | null;
}

/** A third's p99 (nearest rank, percentile.ts) and its rank interval at THIRD_CONFIDENCE. */
function thirdP99(third: ArrayLike<number>): ThirdP99 {
  const n = third.length;
  if (n < MIN_THIRD_SAMPLES) return { p99: null, low: null, high: null };
  const a = Float64Array.from(third);
  const rank = nearestRank(n, 99);
  const r = quantileRanks(n, 0.99, THIRD_CONFIDENCE);
  // select() reorders `a` but keeps it a permutation, so each later select is still exact.
  const p99 = select(a, rank - 1);
  const low = r.lower === null ? null : select(a, Math.min(r.lower, rank) - 1);
  const high = r.upper === null ? null : select(a, Math.max(r.upper, rank) - 1);
  return { p99, low, high };
}

export function drift(g: SecondGroups): Drift {
  const k = Math.floor(g.durationS / 3);
  if (k === 0) return { third_s: 0, first_samples: 0, last_samples: 0, first_p99_us: null, last_p99_us: null, ratio: null, ...NO_INTERVAL };
  const first = g.values.subarray(g.offsets[0], g.offsets[k]);
  const last = g.values.subarray(g.offsets[g.durationS - k], g.offsets[g.durationS]);
  const f = thirdP99(first);
  const l = thirdP99(last);
  const base = { third_s: k, first_samples: first.length, last_samples: last.length, first_p99_us: f.p99, last_p99_us: l.p99 };
  if (f.p99 === null || l.p99 === null || !(f.p99 > 0)) return { ...base, ratio: null, ...NO_INTERVAL };
  const bounds = { first_p99_low_us: f.low, first_p99_high_us: f.high, last_p99_low_us: l.low, last_p99_high_us: l.high };
  const { low, high } = exactInterval(bounds);
  return { ...base, ratio: round(l.p99 / f.p99), ...bounds, ratio_low: round(low), ratio_high: high === null ? null : round(high) };
}

const NO_INTERVAL = { first_p99_low_us: null, first_p99_high_us: null, last_p99_low_us: null, last_p99_high_us: null, ratio_low: null, ratio_high: null };

/** The ratio's interval before rounding: [last_low / first_high, last_high / first_low], a missing bound widening it. */
function exactInterval(d: Pick<Drift, 'first_p99_low_us' | 'first_p99_high_us' | 'last_p99_low_us' | 'last_p99_high_us'>): { low: number; high: number | null } {
  const low = d.last_p99_low_us === null || d.first_p99_high_us === null ? 0 : d.last_p99_low_us / d.first_p99_high_us;
  const high = d.last_p99_high_us === null || d.first_p99_low_us === null || !(d.first_p99_low_us > 0) ? null : d.last_p99_high_us / d.first_p99_low_us;
  return { low, high };
}

export interface DriftJudgement {
  /** pass: the interval lies under the limit; fail: at or over it; undecided: it straddles it; unjudgeable: no ratio at all. */
  state: 'pass' | 'fail' | 'undecided' | 'unjudgeable';
  /** undecided: about how many samples a third would need to decide it (null: no number would, the ratio is the limit itself). */
  samplesNeeded: number | null;
}

/**
 * The drift gate's decision at `limit`. An older analysis without an interval (ratio_low undefined)
 * is judged by the plain rule, as it was recorded.
 */
export function judgeDrift(d: Drift, limit: number): DriftJudgement {
  if (d.ratio === null) return { state: 'unjudgeable', samplesNeeded: null };
  if (d.ratio_low === undefined || d.ratio_low === null) return { state: d.ratio < limit ? 'pass' : 'fail', samplesNeeded: null };
  if (d.ratio_low >= limit) return { state: 'fail', samplesNeeded: null };
  if (d.ratio_high !== null && d.ratio_high < limit) return { state: 'pass', samplesNeeded: null };
  return { state: 'undecided', samplesNeeded: thirdSamplesNeeded(d, limit) };
}

/**
 * About how many samples a third would need for this run's interval to lie wholly on one side of the
 * limit, its ratio unchanged. From the run's own interval where its side facing the limit is bounded:
 * a quantile interval's width (in log terms) shrinks as 1/sqrt(n) (the binomial rank spread), so
 * n' = n x (half-width / distance to the limit)^2; from a wide interval this errs towards more. Where
 * that side is unbounded (a third too small to bound its p99), from the reference tail instead.
 */
export function thirdSamplesNeeded(d: Drift, limit: number): number | null {
  if (d.first_p99_us === null || d.last_p99_us === null || !(d.first_p99_us > 0)) return null;
  const r = d.last_p99_us / d.first_p99_us;
  if (r === limit) return null;
  const n = Math.min(d.first_samples, d.last_samples);
  const { low, high } = exactInterval(d);
  const gap = Math.abs(Math.log(limit / r));
  const half = r < limit ? (high === null ? null : Math.log(high / r)) : low > 0 ? Math.log(r / low) : null;
  if (half === null) return referenceThirdSamples(r, limit);
  return Math.max(n + 1, Math.ceil(n * (half / gap) ** 2));
}

/**
 * The multiplicative width of the drift interval, high / ratio (= ratio / low), that thirds of n
 * samples give under the reference tail (REFERENCE_TAIL_INDEX): a Pareto tail's quantile at rank k of
 * n is ∝ (1 - k/(n+1))^(-1/index), so the two thirds' bounds combine to ((n+1-lower)/(n+1-upper))^(1/index);
 * Infinity when a third of n cannot bound its p99 from above.
 */
export function referenceWidth(n: number, index = REFERENCE_TAIL_INDEX): number {
  const r = quantileRanks(n, 0.99, THIRD_CONFIDENCE);
  if (r.upper === null || r.lower === null) return Infinity;
  return ((n + 1 - r.lower) / (n + 1 - r.upper)) ** (1 / index);
}

/** The most samples per third referenceThirdSamples looks at: beyond it the answer is "none". */
export const MAX_THIRD_SAMPLES = 1e9;

/**
 * The fewest samples per third for which a true ratio `ratio` is told apart from `limit` under the
 * reference tail: its interval lies under the limit (ratio < limit) or at or over it (ratio > limit).
 * null when no count up to MAX_THIRD_SAMPLES does (the ratio is at, or a hair from, the limit).
 */
export function referenceThirdSamples(ratio: number, limit: number): number | null {
  if (ratio === limit) return null;
  const enough = (n: number) => (ratio < limit ? ratio * referenceWidth(n) < limit : ratio / referenceWidth(n) >= limit);
  let hi = 128;
  while (!enough(hi)) {
    hi *= 2;
    if (hi > MAX_THIRD_SAMPLES) return null;
  }
  let lo = hi / 2;
  // the width shrinks with n (up to the ranks' whole steps): bisect to the first n that is enough
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (enough(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

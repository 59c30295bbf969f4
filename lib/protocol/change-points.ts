// Change points in one figure's series across runs (a weekly schedule's p99, say): where the series
// moved, by how much, and how sure we are. Pure: numbers in, change points out; no clock, and the
// permutations come from a seeded generator, so the same series always gives the same answer.
//
// Method: E-divisive means (Matteson & James, "A Nonparametric Approach for Multiple Change Point
// Analysis of Multivariate Data", JASA 2014), the algorithm under Apache Otava (formerly Hunter) and
// MongoDB's signal-processing-algorithms:
//   1. Candidate: the split τ of a segment that maximises the divergence
//        Q(X, Y) = 2/(m+n)·Σ|Xi−Yj| − 2m/((m+n)(n−1))·Σi<k|Xi−Xk| − 2n/((m+n)(m−1))·Σj<k|Yj−Yk|
//      over X = the segment's first n points (start..τ−1) and Y = the next m (τ..κ−1), κ free up to the
//      segment's end (power 1; a term with a single point is 0). That is Otava's PairDistanceCalculator,
//      term for term, with the same tie-break (smallest τ, then smallest κ, then the first segment).
//   2. Significance: a permutation test. Each segment between the change points found so far is
//      shuffled within itself R times and the best Q over all segments is found again; the p-value is
//      (1 + #{permuted best ≥ observed}) / (R + 1). Because every permutation searches for its own best
//      split, the test pays for the search: under no change its false-alarm rate is α, exactly.
//   3. Recursion: while the best candidate over all segments is significant, keep it and search again.
//
// Where this differs from Otava 0.8.0's default (`otava analyze`), by design
// (test/protocol/change-points-otava.test.ts gives both the same series):
//   - Otava's default (Hunter, Fleming et al., ICPE 2023) keeps step 1 and replaces step 2 with a
//     Student t-test between the two sides, at p ≤ 0.01 inside sliding windows of 50 points, then
//     drops the weakest until every one left has p ≤ 0.001 (its "merge" step). A t-test assumes normal
//     figures and takes the split the search chose as if it were fixed, so its p-value is optimistic;
//     a p99 series has outliers (one noisy week) that a t-test reads as variance or as a step. The
//     permutation test assumes nothing but exchangeability under "no change".
//   - Otava's own permutation mode (`--orig-edivisive true`, Otava's compute_change_points_orig) is
//     this algorithm on the values, with R = 100 permutations (fixed; no option changes it), an
//     unseeded generator, and the p-value #{permuted best ≥ observed}/(R+1) compared with -P (default
//     0.001). That p-value is 0 when no permutation reaches the observed Q, so at the default it keeps
//     a change point exactly when none of the 100 does: a test at level 1/101, not 0.001. It does find
//     steps (test/protocol/change-point-series.ts's 10 % step at 2 % noise, in each of its draws); Otava
//     0.8.0's report then fails on them (AttributeError: 'ChangePoint' object has no attribute 'metric', or 'to_json' with --output
//     json), so its console prints change points only when there are none. With `ranks: false,
//     permutations: 100, alpha: 1/101` the rig applies the same rule ((1 + #)/101 ≤ 1/101 ⇔ # = 0);
//     test/protocol/change-points-otava-orig.test.ts runs Otava's function beside it on the same
//     series. Here R = 999 and α = 0.01 by default: one false change point per figure in a hundred
//     histories of pure noise, and a p-value that is never 0 (the smallest is 0.001), because the
//     observed split is itself one of the R + 1 equally likely orderings under no change.
//   - Ranks: the search runs on the ranks of the values (mid-ranks for ties), not the values. A
//     p99 series has single noisy weeks (a bad neighbour, a backup): on the values, one week 50 %
//     above the rest gives the largest Q of any split (Y = that week alone, κ = τ + 1), the permutation
//     test rightly finds it unremarkable (a lone high week scores the same wherever it falls), and the
//     search stops there, so a real 10 % step beside it is never tested: masked. Otava on the same
//     series reports the noisy week itself as two change points and misses the step (the test shows
//     both). On ranks a noisy week is just the highest week; a step still sorts every later run above
//     the earlier ones. The permutation test stays exact (ranks permute with the values), and the
//     magnitude is still of the values. `ranks: false` runs on the values, as Otava and M&J do.
//   - No window: a weekly series is tens to a few hundred runs, and the whole series is one segment.
//     A segment longer than `maxSegment` (default 400) is refused rather than silently cut.
// Each change point then gets its magnitude from the rank statistics the pairwise comparison uses
// (./rank-interval.ts): the Hodges–Lehmann shift between the runs on either side (back to the
// previous change point, on to the next) with its exact Mann–Whitney interval, and both medians.
import { shiftInterval, type ShiftEstimate } from './rank-interval';
import { seededRandom } from './seeded-random';

export interface Split {
  /** The first index of the right-hand side, in the segment's own numbering (1..length−1). */
  tau: number;
  /** The divergence Q at that split (≥ 0 for any segment of two or more points). */
  qhat: number;
}

/**
 * The best split of one segment (step 1 above): O(L²) time and memory through prefix sums of the
 * distances, P[k][t] = Σ_{i<t} |x_i − x_k|. Null for fewer than two points.
 */
export function bestSplit(x: ArrayLike<number>): Split | null {
  const L = x.length;
  if (L < 2) return null;
  // P[k*L + t] for t = 0..k: the distance of point k to the t points before position t.
  const P = new Float64Array(L * L);
  for (let k = 0; k < L; k++) {
    let s = 0;
    const row = k * L;
    for (let t = 0; t < k; t++) {
      P[row + t] = s;
      s += Math.abs(x[t] - x[k]);
    }
    P[row + k] = s;
  }
  let best: Split | null = null;
  let withinLeft = 0; // Σ_{i<k<τ} |x_i − x_k|
  for (let tau = 1; tau < L; tau++) {
    withinLeft += P[(tau - 1) * L + (tau - 1)];
    const n = tau;
    let between = 0; // Σ_{i<τ, τ≤j<κ} |x_i − x_j|
    let withinRight = 0; // Σ_{τ≤j<k<κ} |x_j − x_k|
    for (let kappa = tau + 1; kappa <= L; kappa++) {
      const j = kappa - 1; // the point Y gains
      between += P[j * L + tau];
      withinRight += P[j * L + j] - P[j * L + tau];
      const m = kappa - tau;
      const q =
        (2 / (m + n)) * between -
        (n > 1 ? ((2 * m) / ((m + n) * (n - 1))) * withinLeft : 0) -
        (m > 1 ? ((2 * n) / ((m + n) * (m - 1))) * withinRight : 0);
      if (best === null || q > best.qhat) best = { tau, qhat: q };
    }
  }
  return best;
}

/** [start, end) segments between sorted change points. */
function segments(points: readonly number[], length: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = 0;
  for (const p of points) {
    if (p > start) out.push([start, p]);
    start = p;
  }
  if (length > start) out.push([start, length]);
  return out;
}

/** The best candidate over all segments: its index in the whole series and its Q. */
function bestOver(series: ArrayLike<number>, segs: ReadonlyArray<[number, number]>): { index: number; qhat: number } | null {
  let best: { index: number; qhat: number } | null = null;
  for (const [s, e] of segs) {
    if (e - s < 2) continue;
    const split = bestSplit(Array.prototype.slice.call(series, s, e) as number[]);
    if (split && (best === null || split.qhat > best.qhat)) best = { index: s + split.tau, qhat: split.qhat };
  }
  return best;
}

/** Mid-ranks (1..n, ties share their mean rank). */
export function ranksOf(values: readonly number[]): number[] {
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(values.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    for (let k = i; k <= j; k++) out[order[k][1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return out;
}

export interface DetectOptions {
  /** Significance level (default 0.01). */
  alpha?: number;
  /** Permutations per test (default 999). */
  permutations?: number;
  /** The generator's seed (default 1): the same seed, the same p-values. */
  seed?: number;
  /** The longest series accepted (default 400): beyond it the O(L²)-per-permutation cost is refused. */
  maxSegment?: number;
  /** Search the ranks of the values (default true; see the top comment), or the values as Otava does. */
  ranks?: boolean;
}

export const DEFAULT_ALPHA = 0.01;
export const DEFAULT_PERMUTATIONS = 999;

export interface DetectedPoint {
  /** 0-based index of the first run after the change. */
  index: number;
  qhat: number;
  pValue: number;
}

/** E-divisive with the permutation test (steps 1–3 above): the change points in index order. */
export function eDivisive(series: readonly number[], opts: DetectOptions = {}): DetectedPoint[] {
  const alpha = opts.alpha ?? DEFAULT_ALPHA;
  const R = opts.permutations ?? DEFAULT_PERMUTATIONS;
  const maxSegment = opts.maxSegment ?? 400;
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be within (0, 1), got ${alpha}`);
  if (!(Number.isInteger(R) && R >= 1)) throw new RangeError(`permutations must be a whole number ≥ 1, got ${R}`);
  if ((1 / (R + 1)) > alpha) throw new RangeError(`${R} permutations cannot reach p ≤ ${alpha} (the smallest p is 1/${R + 1}); give more`);
  if (series.some((v) => !Number.isFinite(v))) throw new RangeError('the series holds a value that is not a finite number');
  if (series.length > maxSegment) throw new RangeError(`the series has ${series.length} runs, more than ${maxSegment}: give a shorter history (--since)`);
  const random = seededRandom(opts.seed ?? 1);
  const values = opts.ranks === false ? series : ranksOf(series);
  const found: DetectedPoint[] = [];
  for (;;) {
    const points = found.map((f) => f.index).sort((a, b) => a - b);
    const segs = segments(points, values.length);
    const candidate = bestOver(values, segs);
    if (!candidate) break;
    let atLeast = 0;
    const shuffled = [...values];
    for (let r = 0; r < R; r++) {
      // Shuffle each segment within itself (Fisher–Yates), from the series as it is.
      for (let i = 0; i < values.length; i++) shuffled[i] = values[i];
      for (const [s, e] of segs) {
        for (let i = e - 1; i > s; i--) {
          const j = s + Math.floor(random() * (i - s + 1));
          const t = shuffled[i];
          shuffled[i] = shuffled[j];
          shuffled[j] = t;
        }
      }
      const b = bestOver(shuffled, segs);
      if (b && b.qhat >= candidate.qhat) atLeast++;
    }
    const pValue = (1 + atLeast) / (R + 1);
    if (pValue > alpha) break;
    found.push({ index: candidate.index, qhat: candidate.qhat, pValue });
  }
  return found.sort((a, b) => a.index - b.index);
}

/** Which way is worse for a figure: a higher p99 is worse, a higher ceiling is better. */
export type Direction = 'higher-is-worse' | 'higher-is-better';

export interface SeriesPoint {
  value: number;
  /** The run's label (its campaign id) and its build, for the words either side of a change. */
  run: string;
  build: string | null;
}

export interface ChangePoint {
  /** 0-based index in the series of the first run after the change. */
  index: number;
  /** The run after the change and the one before it, with their builds. */
  run: string;
  build: string | null;
  previousRun: string;
  previousBuild: string | null;
  /** Medians of the runs on either side (back to the previous change point, on to the next). */
  medianBefore: number;
  medianAfter: number;
  /** The Hodges–Lehmann shift after − before, with its exact Mann–Whitney interval. */
  shift: ShiftEstimate;
  /** The shift as a share of the median before (%); null when that median is 0. */
  shiftPct: number | null;
  /** worse / better by the figure's direction; unclear when the interval reaches across zero. */
  verdict: 'worse' | 'better' | 'unclear';
  pValue: number;
  qhat: number;
}

const medianOf = (v: readonly number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};

/** Change points of one figure's series, each with the runs and builds either side and its magnitude. */
export function changePoints(points: readonly SeriesPoint[], direction: Direction, opts: DetectOptions & { level?: number } = {}): ChangePoint[] {
  const values = points.map((p) => p.value);
  const found = eDivisive(values, opts);
  const idx = found.map((f) => f.index);
  return found.map((f, k) => {
    const from = k === 0 ? 0 : idx[k - 1];
    const to = k === idx.length - 1 ? values.length : idx[k + 1];
    const before = values.slice(from, f.index);
    const after = values.slice(f.index, to);
    const shift = shiftInterval(before, after, opts.level ?? 0.95);
    const medianBefore = medianOf(before);
    const up = shift.interval ? shift.interval[0] > 0 : false;
    const down = shift.interval ? shift.interval[1] < 0 : false;
    const worse = direction === 'higher-is-worse' ? up : down;
    const better = direction === 'higher-is-worse' ? down : up;
    return {
      index: f.index,
      run: points[f.index].run,
      build: points[f.index].build,
      previousRun: points[f.index - 1].run,
      previousBuild: points[f.index - 1].build,
      medianBefore,
      medianAfter: medianOf(after),
      shift,
      shiftPct: medianBefore !== 0 ? (shift.shift / Math.abs(medianBefore)) * 100 : null,
      verdict: worse ? 'worse' : better ? 'better' : 'unclear',
      pValue: f.pValue,
      qhat: f.qhat,
    };
  });
}

// The smallest change a comparison of these repeats could have seen: the minimum detectable effect
// (MDE) at 80 % power, from this run's own noise, for the exact test the verdict uses
// (./compare.ts: the Mann–Whitney interval at the figure's level lies wholly above, or below, the bar).
// A "no difference" beside it says how much it could have hidden: "with 5 repeats a side at this
// noise, a change under 7 % would not show".
//
// Method: a seeded resampling of the noise, not a normal approximation. The repeats are 3 to 6 a
// side and their test is exact and discrete (at 5 vs 5 with six figures corrected together, only a
// complete separation of the two sets rejects); a normal approximation with the Mann–Whitney
// efficiency is made for large samples and would promise power the exact test cannot have at these
// sizes. So:
//   1. the noise: each side's values minus its own median, pooled (m + n residuals), scaled by
//      √((m+n)/(m+n−2)) (the pooled variance's correction for the two medians taken out: residuals
//      about a sample's own median understate its spread, and an MDE must not flatter the run);
//   2. D = R draws (4,000, seeded: the same repeats give the same MDE) of m control and n variant
//      values, with replacement, from those residuals;
//   3. for one draw, the variant shifted by δ is called "worse" exactly when its interval lies above
//      the bar, i.e. when D_(k) + δ > 0, with D_(k) the k-th smallest of its m·n differences and k the
//      interval's depth at the level (rank-interval.ts, intervalDepth). So each draw has a threshold,
//      −D_(k), and the power at δ is the share of draws whose threshold is below δ. The bisection a
//      power search would do is then exact with no search: the MDE is the 80th percentile of the
//      thresholds. A fall ("better") is the same with D_(mn+1−k); the larger of the two is reported,
//      so the words hold for a change of either sign;
//   4. a bar above zero (the report's --tolerance, margin) is added: a change must clear it as well.
// When no interval exists at the level (3 vs 3 at 95 %; 4 vs 4 when six figures share 5 %), no shift,
// however large, is ever called: the MDE is null and the words say so.
import { intervalDepth } from './rank-interval';
import { median } from './percentile';
import { seededRandom } from './seeded-random';

export const MDE_POWER = 0.8;
export const MDE_DRAWS = 4000;

export interface DetectableEffect {
  /** The power the MDE is at (0.8). */
  power: number;
  /** The two-sided false-alarm level of the test it is for (1 − the interval's level). */
  alpha: number;
  /** Resampled draws behind it (seeded; the same repeats give the same MDE). */
  draws: number;
  /** The smallest shift, in the figure's units, called in ≥ 80 % of draws; null when none ever is. */
  absolute: number | null;
  /** The same as a share of the control's median (%); null when that median is 0 or there is no MDE. */
  pct: number | null;
}

export interface DetectableOptions {
  /** The test's two-sided level α (the interval is at 1 − α). */
  alpha: number;
  /** The bar a change must clear besides zero, in the figure's units (default 0). */
  margin?: number;
  power?: number;
  draws?: number;
  seed?: number;
}

/** The MDE of control vs variant at the test's level α, from the two sides' pooled residuals. */
export function detectableEffect(control: readonly number[], variant: readonly number[], opts: DetectableOptions): DetectableEffect {
  const power = opts.power ?? MDE_POWER;
  const draws = opts.draws ?? MDE_DRAWS;
  const margin = opts.margin ?? 0;
  if (!(opts.alpha > 0 && opts.alpha < 1)) throw new RangeError(`alpha must be within (0, 1), got ${opts.alpha}`);
  if (!(power > 0 && power < 1)) throw new RangeError(`power must be within (0, 1), got ${power}`);
  if (!(Number.isInteger(draws) && draws >= 100)) throw new RangeError(`draws must be a whole number ≥ 100, got ${draws}`);
  const x = control.filter(Number.isFinite);
  const y = variant.filter(Number.isFinite);
  const m = x.length;
  const n = y.length;
  if (!m || !n) throw new RangeError(`an MDE needs a value on each side (control ${m}, variant ${n})`);
  const base = { power, alpha: opts.alpha, draws };
  const k = intervalDepth(m, n, 1 - opts.alpha);
  if (k === 0) return { ...base, absolute: null, pct: null };
  const mx = median(x);
  const my = median(y);
  const scale = m + n > 2 ? Math.sqrt((m + n) / (m + n - 2)) : 1;
  const pool = [...x.map((v) => (v - mx) * scale), ...y.map((v) => (v - my) * scale)];
  const random = seededRandom(opts.seed ?? 1);
  const pick = () => pool[Math.floor(random() * pool.length)];
  const up = new Float64Array(draws);
  const down = new Float64Array(draws);
  // Only the k-th smallest and k-th largest difference of a draw matter, and k is small (1 to 3 at
  // these sizes): keep the k smallest and k largest by insertion, O(m·n·k) a draw, no sort.
  const lo = new Float64Array(k);
  const hi = new Float64Array(k);
  const xs = new Float64Array(m);
  for (let r = 0; r < draws; r++) {
    for (let i = 0; i < m; i++) xs[i] = pick();
    lo.fill(Infinity);
    hi.fill(-Infinity);
    for (let j = 0; j < n; j++) {
      const b = pick();
      for (let i = 0; i < m; i++) {
        const v = b - xs[i];
        if (v < lo[k - 1]) {
          let t = k - 1;
          while (t > 0 && lo[t - 1] > v) {
            lo[t] = lo[t - 1];
            t--;
          }
          lo[t] = v;
        }
        if (v > hi[k - 1]) {
          let t = k - 1;
          while (t > 0 && hi[t - 1] < v) {
            hi[t] = hi[t - 1];
            t--;
          }
          hi[t] = v;
        }
      }
    }
    up[r] = -lo[k - 1]; // a rise is called once δ > −D_(k)
    down[r] = hi[k - 1]; // a fall once δ > D_(mn+1−k)
  }
  const at = (v: Float64Array) => {
    v.sort();
    return Math.max(0, v[Math.ceil(power * draws) - 1]);
  };
  const absolute = margin + Math.max(at(up), at(down));
  return { ...base, absolute, pct: mx !== 0 ? (absolute / Math.abs(mx)) * 100 : null };
}

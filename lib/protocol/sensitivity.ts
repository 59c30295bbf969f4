// How small a change the rig's comparison can see, and how often it calls a change where there is
// none (issue 45), measured on REAL repeats of an unchanged target. Pure: per-repeat figures in,
// rates out; the draws come from a seeded generator, so the same pool gives the same table.
//
// Why resample real A/A repeats: the noise that decides what a comparison can see is the noise
// between repeats (a service restart, where the scheduler put the processes, a checkpoint landing in
// one repeat and not the next), and nothing but real repeats of this host carries it. A campaign's
// comparison draws m repeats of the control and n of the treatment; here both come, disjoint and
// without replacement, from one pool of repeats of an unchanged configuration, so:
//   - with no effect added, every change the rule calls is a false alarm (per figure, and "any figure"
//     for the page as a whole, the family);
//   - with an effect added to the treatment's figure (its values times 1 + e), the share of draws
//     called "worse" is the detection rate at e, and the smallest e called in >= 80 % of draws is the
//     minimum detectable effect (MDE) at 80 % power.
// Every effect size uses the same draws (common random numbers), so the rate rises with e as it
// should and the bisection for the MDE is stable. The draws are not independent campaigns: a pool of
// 30 repeats has C(30, 10) ways to make 5 vs 5, but only 30 repeats' worth of information, so each
// table states the real repeats behind it, and provoked campaigns (a known slowdown, really run)
// confirm the MDE where it matters.
//
// A weekly run's figure is the median of its passing repeats (lib/protocol/history-series.ts); a
// weekly history is made here the same way, each run the median of `perRun` repeats drawn from the
// pool, and a step multiplies every run's figure from the step on.
import { compareRepeats, type CompareOptions, type ComparisonVerdict } from './compare';
import type { RepeatFigures } from './reporting';
import { median } from './percentile';
import { seededRandom } from './seeded-random';

/** One real repeat's figures (keys as lib/protocol/compare.ts's COMPARED_FIGURES). */
export type RepeatValues = Record<string, number | null>;

export interface DrawOptions {
  /** Repeats a side (the protocol's 5, the rehearsal's 3). */
  perSide: number;
  /** Draws per cell (default 2000). */
  draws?: number;
  /** The generator's seed (default 1). */
  seed?: number;
  /** The comparison's own options (level, minimum effect). */
  compare?: CompareOptions;
}

/** Fisher–Yates on a copy: the first `k` of a random order of 0..n−1. */
function firstOfShuffle(n: number, k: number, random: () => number): number[] {
  const idx = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(random() * (n - i));
    const t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
  return idx.slice(0, k);
}

/** The draws: for each, which pool repeats are the control and which the treatment. */
export function drawPairs(poolSize: number, perSide: number, draws: number, seed: number): Array<{ control: number[]; variant: number[] }> {
  if (!(Number.isInteger(perSide) && perSide >= 1)) throw new RangeError(`repeats a side must be a whole number >= 1, got ${perSide}`);
  if (2 * perSide > poolSize) throw new RangeError(`${perSide} vs ${perSide} needs ${2 * perSide} distinct repeats; the pool has ${poolSize}: measure more A/A repeats`);
  const random = seededRandom(seed);
  return Array.from({ length: draws }, () => {
    const pick = firstOfShuffle(poolSize, 2 * perSide, random);
    return { control: pick.slice(0, perSide), variant: pick.slice(perSide) };
  });
}

const asRepeat = (figures: RepeatValues): RepeatFigures => ({ passed: true, figures });

/** The variant's repeat with `figure` scaled by 1 + effectPct/100 (a slowdown for a lower-is-better figure). */
function withEffect(r: RepeatValues, figure: string, effectPct: number): RepeatValues {
  const v = r[figure];
  if (!effectPct || typeof v !== 'number') return r;
  return { ...r, [figure]: v * (1 + effectPct / 100) };
}

/** The rig's verdicts for one draw: figure → verdict. */
function verdictsOf(pool: readonly RepeatValues[], pair: { control: number[]; variant: number[] }, figure: string | null, effectPct: number, compare: CompareOptions): Map<string, ComparisonVerdict> {
  const control = pair.control.map((i) => asRepeat(pool[i]));
  const variant = pair.variant.map((i) => asRepeat(figure ? withEffect(pool[i], figure, effectPct) : pool[i]));
  // detectable: false — the draws need only the verdicts, not each "no difference"'s own MDE.
  const c = compareRepeats(control, variant, { ...compare, detectable: false });
  return new Map(c.figures.map((f) => [f.figure, f.verdict]));
}

export interface FalseAlarms {
  /** Share of draws in which each figure was called worse or better. */
  perFigure: Record<string, number>;
  /** Share of draws in which ANY figure was called worse or better: what a reader of the page meets. */
  family: number;
  draws: number;
}

/** A/A: how often the rule calls a change between two sets of repeats of one unchanged target. */
export function falseAlarms(pool: readonly RepeatValues[], figures: readonly string[], opts: DrawOptions): FalseAlarms {
  const draws = opts.draws ?? 2000;
  const pairs = drawPairs(pool.length, opts.perSide, draws, opts.seed ?? 1);
  const called: Record<string, number> = Object.fromEntries(figures.map((f) => [f, 0]));
  let family = 0;
  for (const p of pairs) {
    const v = verdictsOf(pool, p, null, 0, { ...opts.compare, figures });
    let any = false;
    for (const f of figures) {
      const x = v.get(f);
      if (x === 'worse' || x === 'better') {
        called[f]++;
        any = true;
      }
    }
    if (any) family++;
  }
  return { perFigure: Object.fromEntries(figures.map((f) => [f, called[f] / draws])), family: family / draws, draws };
}

/** The share of draws in which `figure`, slowed by effectPct %, is called worse. */
export function detectionRate(pool: readonly RepeatValues[], figure: string, effectPct: number, opts: DrawOptions, figures: readonly string[] = [figure]): number {
  const draws = opts.draws ?? 2000;
  const pairs = drawPairs(pool.length, opts.perSide, draws, opts.seed ?? 1);
  let worse = 0;
  for (const p of pairs) if (verdictsOf(pool, p, figure, effectPct, { ...opts.compare, figures }).get(figure) === 'worse') worse++;
  return worse / draws;
}

/**
 * The smallest slowdown (% of the figure) called worse in at least `power` of the draws, to within
 * 0.1 %; null when even `maxPct` is not (too few repeats a side for any verdict, or the noise too large).
 */
export function minimumDetectableEffect(pool: readonly RepeatValues[], figure: string, opts: DrawOptions & { power?: number; maxPct?: number }, figures: readonly string[] = [figure]): number | null {
  const power = opts.power ?? 0.8;
  const maxPct = opts.maxPct ?? 200;
  if (detectionRate(pool, figure, maxPct, opts, figures) < power) return null;
  let lo = 0;
  let hi = maxPct;
  while (hi - lo > 0.1) {
    const mid = (lo + hi) / 2;
    if (detectionRate(pool, figure, mid, opts, figures) >= power) hi = mid;
    else lo = mid;
  }
  return Math.round(hi * 10) / 10;
}

/** One run of a weekly history: its figure (the median of its repeats) and the repeats. */
export interface WeeklyRun {
  value: number;
  repeats: number[];
}

/**
 * A weekly history made of real repeats: `runs` runs, each the median of `perRun` values drawn
 * without replacement from `values`, every run from `stepAt` (0-based) on (its repeats too)
 * multiplied by 1 + stepPct/100. The same seed gives the same history.
 */
export function weeklyRuns(values: readonly number[], opts: { runs: number; perRun: number; stepAt?: number; stepPct?: number; seed: number }): WeeklyRun[] {
  if (opts.perRun > values.length) throw new RangeError(`a run of ${opts.perRun} repeats needs a pool of at least ${opts.perRun}; it has ${values.length}`);
  const random = seededRandom(opts.seed);
  const stepAt = opts.stepAt ?? Infinity;
  return Array.from({ length: opts.runs }, (_, i) => {
    const k = i >= stepAt ? 1 + (opts.stepPct ?? 0) / 100 : 1;
    const repeats = firstOfShuffle(values.length, opts.perRun, random).map((j) => values[j] * k);
    return { value: median(repeats), repeats };
  });
}

/** weeklyRuns' figures alone. */
export const weeklyHistory = (values: readonly number[], opts: Parameters<typeof weeklyRuns>[1]): number[] => weeklyRuns(values, opts).map((r) => r.value);

/**
 * Runs after a step until a detector first alerts: the detector sees each prefix of the history that
 * ends at or after the step (as a weekly schedule sees it, one run more each week) and says whether
 * that newest run alerts. 1 = the first slow run alerts; null = never within the history.
 */
export function runsUntilAlert(history: readonly number[], stepAt: number, alerts: (prefix: readonly number[]) => boolean): number | null {
  for (let end = stepAt + 1; end <= history.length; end++) if (alerts(history.slice(0, end))) return end - stepAt;
  return null;
}

/** Alerts over a history of pure noise, per 52 runs, counting from run `from` (0-based; earlier runs are too few to judge). */
export function falseAlertsPer52(history: readonly number[], from: number, alerts: (prefix: readonly number[]) => boolean): { alerts: number; runs: number; per52: number } {
  let n = 0;
  let judged = 0;
  for (let end = from + 1; end <= history.length; end++) {
    judged++;
    if (alerts(history.slice(0, end))) n++;
  }
  return { alerts: n, runs: judged, per52: judged ? (n / judged) * 52 : 0 };
}

/**
 * How far apart two repeats run one after the other lie, as one repeat's own noise: the median size of
 * the log-ratios of neighbours in time order, read as a normal σ (÷ 0.6745), over √2 (each ratio
 * carries two repeats' noise). Why: a pool's spread mixes two things a design treats differently.
 * Drift (the host, the disk, the table growing) moves neighbours together, so pairing each treatment
 * repeat with its neighbouring control removes it; what is left between neighbours no pairing
 * removes, only more repeats. The ratios are sized about zero, not about their median: repeats that
 * alternate high and low (an A/B order with a real difference) must read as noise, not as none. Null
 * below 3 values or for values not all > 0. A fraction (0.1 = 10 %).
 */
export function neighbourNoise(inTimeOrder: readonly number[]): number | null {
  if (inTimeOrder.length < 3 || inTimeOrder.some((v) => !(v > 0))) return null;
  const d = inTimeOrder.slice(1).map((v, i) => Math.abs(Math.log(v / inTimeOrder[i])));
  return median(d) / 0.6745 / Math.SQRT2;
}

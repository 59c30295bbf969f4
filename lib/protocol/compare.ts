// A control beside a variant (last week beside this week, or one setting beside another on one rig),
// figure by figure, from the per-repeat figures of each side. Pure: two lists of repeats in, one
// comparison out; no model, no page, so the weekly baseline and a campaign's own variants share it.
//
// Per figure (p50, p99, worst 10-s p99, freeze-seconds, drops, WAL per event: lower is better for
// every one):
//   - each side's median and min–max over its PASSING repeats (the page's rule: failed repeats are in
//     no median; a lost pass is the pass count's finding, compared apart);
//   - the difference of the medians, variant − control;
//   - the shift's interval from the repeats themselves (./rank-interval.ts: exact Mann–Whitney), and
//     the exact two-sided Mann–Whitney p-value of "no shift" (its dual: p ≤ α exactly when the
//     interval at 1 − α excludes zero);
//   - a plain verdict: "worse" when the whole interval lies above zero, "better" when below, and
//     otherwise "no difference we can see with N repeats", which is also the verdict whenever the
//     repeats are too few for an interval (3 vs 3): noise is never called a change;
//   - beside every "no difference", the smallest change these repeats could have seen
//     (./detectable-effect.ts: the MDE at 80 % power for the same test at the same level).
// minEffectPct (the report's --tolerance) moves the bar from zero to ± that share of the control's
// median: a difference smaller than it is not worth a verdict, however sure we are of it.
//
// Figures tested together (compareRepeats): six figures each at its own 95 % would call an unchanged
// pair (A/A) different far more often than 1 in 20 (at 5 vs 5, each figure's exact interval errs
// 3.2 % of the time; six independent ones, 18 %). So the figures a comparison compares (those with a
// value on both sides, k of them) are corrected together by Benjamini–Hochberg at α = 1 − level:
// sort their p-values, R = the largest i with p_(i) ≤ i·α/k, and the R smallest are the figures BH
// rejects. Every figure's interval is then at 1 − max(R, 1)·α/k (Benjamini & Yekutieli's
// false-coverage-adjusted level for the R selected; with R = 0, Bonferroni's α/k), and a figure is
// called worse or better only when BH rejects it AND that interval lies beyond the bar. The two agree
// at a zero bar (a rejected figure has p ≤ R·α/k; one not rejected has p > R·α/k, as any smaller
// would raise R), so the interval on the page is the one the verdict used. Why BH holds the A/A rate:
// on an unchanged pair every rejection is false, so the false discovery proportion is 1 whenever
// anything is called and 0 otherwise; the FDR is then the probability of calling anything, the
// family-wise rate, and BH keeps it ≤ α for independent figures and for positively dependent ones
// (p50, p99 and the worst window move together), as Benjamini & Yekutieli (2001) prove. The MDE of
// each figure is that of the figure tested alone at this adjusted level, so it is the MDE of the rule
// that decided. compareFigure (one figure, nothing to correct) tests at 1 − level itself.
import { detectableEffect, type DetectableEffect } from './detectable-effect';
import { fewestRepeatsFor, rankSumPValue, shiftInterval, type ShiftEstimate } from './rank-interval';
import type { FigureSummary, RepeatFigures } from './reporting';

export type ComparisonVerdict = 'better' | 'worse' | 'no-difference' | 'not-compared';

/** The figures a comparison covers, in page order, with their words and units. */
export const COMPARED_FIGURES = [
  { key: 'p50_ms', label: 'p50', unit: 'ms' },
  { key: 'p99_ms', label: 'p99', unit: 'ms' },
  { key: 'worst_10s_p99_ms', label: 'worst 10-s p99', unit: 'ms' },
  { key: 'freeze_seconds', label: 'freeze-seconds', unit: '' },
  { key: 'dropped', label: 'drops', unit: '' },
  { key: 'wal_bytes_per_event', label: 'WAL per event', unit: 'B' },
] as const;
export type ComparedFigure = (typeof COMPARED_FIGURES)[number]['key'];

export const DEFAULT_LEVEL = 0.95;

export interface FigureComparison {
  figure: string;
  control: FigureSummary | null;
  variant: FigureSummary | null;
  /** variant median − control median; null when a side has no value. */
  difference: number | null;
  /** The Hodges–Lehmann shift and its interval; null when a side has no value. */
  shift: ShiftEstimate | null;
  verdict: ComparisonVerdict;
  /** The verdict in words, as the page writes it (with the MDE beside a "no difference"). */
  words: string;
  /** The exact two-sided Mann–Whitney p-value of "no shift"; absent in comparisons written before it. */
  p_value?: number | null;
  /** The confidence the interval was asked at (after the figures' correction); absent before it. */
  level?: number;
  /** The smallest change these repeats could have seen at that level (80 % power); absent before it. */
  detectable?: DetectableEffect | null;
}

/** How the figures compared together were corrected (Benjamini–Hochberg at α = 1 − level). */
export interface FamilyCorrection {
  method: 'benjamini-hochberg';
  /** Figures compared (a value on both sides). */
  figures: number;
  /** How many BH rejects (before the bar of minEffectPct). */
  rejected: number;
  /** The level every figure's interval is at: 1 − max(rejected, 1)·α/figures. */
  level: number;
}

export interface PassCount {
  passed: number;
  total: number;
  label: string;
}

export interface RepeatComparison {
  control: PassCount;
  variant: PassCount;
  /** The variant passed a smaller share of its repeats than the control. */
  lost_passes: boolean;
  figures: FigureComparison[];
  level: number;
  min_effect_pct: number;
  /** The correction for the figures tested together; absent in comparisons written before it. */
  correction?: FamilyCorrection;
  /**
   * Set when p50 was compared over the seconds the host's CPU steal stayed under the bound
   * (lib/protocol/host-quiet.ts), with how many passing repeats had too few such seconds and so no p50
   * in it; absent when p50 is over every second (no host samples on a side, or comparisons before it).
   */
  p50_basis?: { quiet_steal_below_pct: number; repeats_without: number };
}

export interface CompareOptions {
  /** Confidence of the interval (default 0.95). */
  level?: number;
  /** The smallest difference that earns a verdict, as a share (%) of the control's median (default 0). */
  minEffectPct?: number;
  /** Which figures (default: all of COMPARED_FIGURES). */
  figures?: readonly string[];
  /**
   * Work out the MDE beside each "no difference" (default true). About 6 ms a figure (4,000 redraws):
   * a simulation of thousands of comparisons that reads only the verdicts turns it off.
   */
  detectable?: boolean;
}

const summary = (v: number[]): FigureSummary | null => {
  if (!v.length) return null;
  const s = [...v].sort((a, b) => a - b);
  const k = s.length >> 1;
  return { median: s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2, min: s[0], max: s[s.length - 1], n: s.length };
};

const repeatsWord = (m: number, n: number) => (m === n ? `${m} repeat${m === 1 ? '' : 's'}` : `${m} vs ${n} repeats`);
const sideWord = (m: number, n: number) => (m === n ? `${m} repeat${m === 1 ? '' : 's'} a side` : `${m} vs ${n} repeats`);
const pctWord = (level: number) => `${Math.round(level * 1000) / 10} %`;

/** "7 %", "26 %", "1.4 %": what a change under it means on the page. */
function sizeWords(e: DetectableEffect, figure: string): string {
  if (e.pct !== null) return `${e.pct >= 10 ? Math.round(e.pct) : Math.round(e.pct * 10) / 10} %`;
  const unit = COMPARED_FIGURES.find((f) => f.key === figure)?.unit ?? '';
  const a = e.absolute!;
  return `${a >= 10 ? Math.round(a) : Math.round(a * 100) / 100}${unit ? ` ${unit}` : ''}`;
}

/** The MDE beside a "no difference", in words. */
export function detectableWords(f: Pick<FigureComparison, 'figure' | 'shift' | 'detectable' | 'level'>): string {
  const e = f.detectable;
  if (!e || !f.shift) return '';
  const { m, n } = f.shift;
  if (e.absolute === null) return `${m} vs ${n} repeats can show no change at this level (${pctWord(f.level ?? 1 - e.alpha)}), however large`;
  if (e.absolute === 0) return `these repeats did not vary, so any change would have shown`;
  return `with ${sideWord(m, n)} at this noise, a change under ${sizeWords(e, f.figure)} would not show`;
}

interface FigureTest {
  /** The interval's confidence (1 − the adjusted α). */
  level: number;
  /** Whether the correction rejects "no shift" for this figure. */
  rejected: boolean;
}

function judge(figure: string, x: number[], y: number[], minEffectPct: number, test: (p: number) => FigureTest, withMde: boolean): FigureComparison {
  const c = summary(x);
  const v = summary(y);
  if (!c || !v) {
    const missing = !c && !v ? 'no passing repeat on either side' : !c ? 'no passing repeat in the control' : 'no passing repeat in the variant';
    return { figure, control: c, variant: v, difference: null, shift: null, verdict: 'not-compared', words: `not compared: ${missing}`, p_value: null, level: undefined, detectable: null };
  }
  const p = rankSumPValue(x, y);
  const { level, rejected } = test(p);
  const shift = shiftInterval(x, y, level);
  const margin = (minEffectPct / 100) * Math.abs(c.median);
  let verdict: ComparisonVerdict = 'no-difference';
  if (rejected && shift.interval && shift.interval[0] > margin) verdict = 'worse';
  else if (rejected && shift.interval && shift.interval[1] < -margin) verdict = 'better';
  const beyond = minEffectPct ? ` beyond ${minEffectPct} %` : '';
  const detectable = verdict === 'no-difference' && withMde ? detectableEffect(x, y, { alpha: 1 - level, margin }) : null;
  const f: FigureComparison = { figure, control: c, variant: v, difference: v.median - c.median, shift, verdict, words: verdict, p_value: p, level, detectable };
  if (verdict === 'no-difference') f.words = `no difference${beyond} we can see${detectable ? `; ${detectableWords(f)}` : ` with ${repeatsWord(shift.m, shift.n)}`}`;
  return f;
}

const checkEffect = (minEffectPct: number) => {
  if (!(Number.isFinite(minEffectPct) && minEffectPct >= 0 && minEffectPct < 100)) throw new RangeError(`the smallest effect must be a percentage within 0..100, got ${minEffectPct}`);
};

/** One figure alone: control values beside variant values (lower is better), its test at `level`. */
export function compareFigure(figure: string, control: readonly number[], variant: readonly number[], opts: CompareOptions = {}): FigureComparison {
  const level = opts.level ?? DEFAULT_LEVEL;
  const minEffectPct = opts.minEffectPct ?? 0;
  checkEffect(minEffectPct);
  return judge(figure, control.filter(Number.isFinite), variant.filter(Number.isFinite), minEffectPct, (p) => ({ level, rejected: p <= 1 - level + 1e-12 }), opts.detectable ?? true);
}

/** Benjamini–Hochberg over p-values at α: how many it rejects (the R smallest). */
export function benjaminiHochberg(pValues: readonly number[], alpha: number): number {
  const sorted = [...pValues].sort((a, b) => a - b);
  const k = sorted.length;
  let r = 0;
  for (let i = 1; i <= k; i++) if (sorted[i - 1] <= (i * alpha) / k + 1e-12) r = i;
  return r;
}

function passes(repeats: readonly RepeatFigures[]): PassCount {
  const counted = repeats.filter((r) => !r.interrupted);
  const passed = counted.filter((r) => r.passed).length;
  return { passed, total: counted.length, label: `${passed}/${counted.length}` };
}

/**
 * Control and variant, repeat by repeat figures (RepeatFigures: `passed`, `interrupted`, and a
 * `figures` record keyed as COMPARED_FIGURES). Only passing repeats enter a figure; the pass counts
 * are compared as counts.
 */
export function compareRepeats(control: readonly RepeatFigures[], variant: readonly RepeatFigures[], opts: CompareOptions = {}): RepeatComparison {
  const keys = opts.figures ?? COMPARED_FIGURES.map((f) => f.key);
  const level = opts.level ?? DEFAULT_LEVEL;
  const minEffectPct = opts.minEffectPct ?? 0;
  if (!(level > 0 && level < 1)) throw new RangeError(`confidence level must be within (0, 1), got ${level}`);
  checkEffect(minEffectPct);
  const values = (rs: readonly RepeatFigures[], k: string) =>
    rs.filter((r) => r.passed && !r.interrupted).map((r) => r.figures[k]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const sides = keys.map((k) => [values(control, k), values(variant, k)] as const);
  // The family: every figure with a value on both sides, corrected together (top comment).
  const pValues = sides.filter(([x, y]) => x.length && y.length).map(([x, y]) => rankSumPValue(x, y));
  const alpha = 1 - level;
  const familySize = Math.max(1, pValues.length);
  const rejected = benjaminiHochberg(pValues, alpha);
  const adjusted = (Math.max(rejected, 1) * alpha) / familySize;
  const test = (p: number): FigureTest => ({ level: 1 - adjusted, rejected: p <= adjusted + 1e-12 });
  const cp = passes(control);
  const vp = passes(variant);
  const share = (p: PassCount) => (p.total > 0 ? p.passed / p.total : 0);
  return {
    control: cp,
    variant: vp,
    lost_passes: share(vp) < share(cp),
    figures: keys.map((k, i) => judge(k, sides[i][0], sides[i][1], minEffectPct, test, opts.detectable ?? true)),
    level,
    min_effect_pct: minEffectPct,
    correction: { method: 'benjamini-hochberg', figures: pValues.length, rejected, level: 1 - adjusted },
  };
}

/** The method in one sentence for a row: "Mann–Whitney 99.2 % interval (5 vs 5), p = 0.008", or why there is none. */
export function methodWords(f: FigureComparison, level = DEFAULT_LEVEL): string {
  if (!f.shift) return '—';
  const { m, n, confidence } = f.shift;
  const asked = f.level ?? level;
  const pct = (x: number) => `${(Math.round(x * 1000) / 10).toFixed(1)} %`;
  const p = typeof f.p_value === 'number' ? `, p = ${f.p_value < 0.001 ? f.p_value.toExponential(1) : Math.round(f.p_value * 1000) / 1000}` : '';
  if (confidence === null) {
    const fewest = fewestRepeatsFor(asked);
    return `Mann–Whitney: ${m} vs ${n} repeats is too few for a ${pct(asked).replace('.0 %', ' %')} interval (fewest ${fewest} vs ${fewest})${p}`;
  }
  return `Mann–Whitney ${pct(confidence)} interval (${m} vs ${n})${p}`;
}

/** The method, stated once for the page. */
export function comparisonMethod(level = DEFAULT_LEVEL, minEffectPct = 0): string {
  const pct = `${Math.round(level * 1000) / 10} %`;
  const alpha = `${Math.round((1 - level) * 1000) / 10} %`;
  const fewest = fewestRepeatsFor(level);
  return (
    `Each figure is compared over the passing repeats of each side: the difference is of the medians (variant − control); its interval is the exact Mann–Whitney (Wilcoxon rank-sum) confidence interval for the shift between the two sets of per-repeat figures, centred on the Hodges–Lehmann estimate, with its exact coverage and the exact two-sided p-value of "no shift" in the method column. ` +
    `The figures are tested together, so an unchanged pair is called different in at most ${alpha} of comparisons, not ${alpha} per figure: their p-values are corrected by Benjamini–Hochberg at ${alpha} (of k figures compared, R = the largest i whose i-th smallest p is ≤ i·${alpha}/k), and every interval is at 1 − max(R, 1)·${alpha}/k (${pct} when one figure is compared). ` +
    `The verdict is "worse" (or "better") only when Benjamini–Hochberg rejects the figure and its whole interval lies above (or below) ${minEffectPct ? `± ${minEffectPct} % of the control's median` : 'zero'}; otherwise it is "no difference we can see", with the smallest change those repeats could have seen ("with 5 repeats a side at this noise, a change under 7 % would not show"): the shift that test, at that level, calls in 80 % of 4,000 seeded redraws of the run's own noise (each side's values less its median, pooled). ` +
    `Too few repeats give no interval at all and so never earn a verdict: at 3 vs 3 the most extreme of the 20 orderings is already 1 in 10 (two-sided); ${fewest} vs ${fewest} is the fewest equal count that has a ${pct} one, and more are needed when several figures share the ${alpha}. The interval and p-value need no seed: the same repeats give the same ones.`
  );
}

// A control beside a variant (last week beside this week, or one setting beside another on one rig),
// figure by figure, from the per-repeat figures of each side. Pure: two lists of repeats in, one
// comparison out; no model, no page, so the weekly baseline and a campaign's own variants share it.
//
// Per figure (p50, p99, worst 10-s p99, freeze-seconds, drops, WAL per event: lower is better for
// every one):
//   - each side's median and min–max over its PASSING repeats (the page's rule: failed repeats are in
//     no median; a lost pass is the pass count's finding, compared apart);
//   - the difference of the medians, variant − control;
//   - the shift's interval from the repeats themselves (./rank-interval.ts: exact Mann–Whitney, 95 %);
//   - a plain verdict: "worse" when the whole interval lies above zero, "better" when below, and
//     otherwise "no difference we can see with N repeats", which is also the verdict whenever the
//     repeats are too few for an interval (3 vs 3): noise is never called a change.
// minEffectPct (the report's --tolerance) moves the bar from zero to ± that share of the control's
// median: a difference smaller than it is not worth a verdict, however sure we are of it.
import { fewestRepeatsFor, shiftInterval, type ShiftEstimate } from './rank-interval';
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
  /** The verdict in words, as the page writes it. */
  words: string;
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
}

export interface CompareOptions {
  /** Confidence of the interval (default 0.95). */
  level?: number;
  /** The smallest difference that earns a verdict, as a share (%) of the control's median (default 0). */
  minEffectPct?: number;
  /** Which figures (default: all of COMPARED_FIGURES). */
  figures?: readonly string[];
}

const summary = (v: number[]): FigureSummary | null => {
  if (!v.length) return null;
  const s = [...v].sort((a, b) => a - b);
  const k = s.length >> 1;
  return { median: s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2, min: s[0], max: s[s.length - 1], n: s.length };
};

const repeatsWord = (m: number, n: number) => (m === n ? `${m} repeat${m === 1 ? '' : 's'}` : `${m} vs ${n} repeats`);

/** One figure: control values beside variant values (lower is better). */
export function compareFigure(figure: string, control: readonly number[], variant: readonly number[], opts: CompareOptions = {}): FigureComparison {
  const level = opts.level ?? DEFAULT_LEVEL;
  const minEffectPct = opts.minEffectPct ?? 0;
  if (!(Number.isFinite(minEffectPct) && minEffectPct >= 0 && minEffectPct < 100)) throw new RangeError(`the smallest effect must be a percentage within 0..100, got ${minEffectPct}`);
  const x = control.filter(Number.isFinite);
  const y = variant.filter(Number.isFinite);
  const c = summary(x);
  const v = summary(y);
  if (!c || !v) {
    const missing = !c && !v ? 'no passing repeat on either side' : !c ? 'no passing repeat in the control' : 'no passing repeat in the variant';
    return { figure, control: c, variant: v, difference: null, shift: null, verdict: 'not-compared', words: `not compared: ${missing}` };
  }
  const shift = shiftInterval(x, y, level);
  const margin = (minEffectPct / 100) * Math.abs(c.median);
  let verdict: ComparisonVerdict = 'no-difference';
  if (shift.interval && shift.interval[0] > margin) verdict = 'worse';
  else if (shift.interval && shift.interval[1] < -margin) verdict = 'better';
  const beyond = minEffectPct ? ` beyond ${minEffectPct} %` : '';
  const words = verdict === 'no-difference' ? `no difference${beyond} we can see with ${repeatsWord(shift.m, shift.n)}` : verdict;
  return { figure, control: c, variant: v, difference: v.median - c.median, shift, verdict, words };
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
  const values = (rs: readonly RepeatFigures[], k: string) =>
    rs.filter((r) => r.passed && !r.interrupted).map((r) => r.figures[k]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const cp = passes(control);
  const vp = passes(variant);
  const share = (p: PassCount) => (p.total > 0 ? p.passed / p.total : 0);
  return {
    control: cp,
    variant: vp,
    lost_passes: share(vp) < share(cp),
    figures: keys.map((k) => compareFigure(k, values(control, k), values(variant, k), opts)),
    level: opts.level ?? DEFAULT_LEVEL,
    min_effect_pct: opts.minEffectPct ?? 0,
  };
}

/** The method in one sentence for a row: "rank interval, 96.8 % (5 vs 5)", or why there is none. */
export function methodWords(f: FigureComparison, level = DEFAULT_LEVEL): string {
  if (!f.shift) return '—';
  const { m, n, confidence } = f.shift;
  const pct = (x: number) => `${(Math.round(x * 1000) / 10).toFixed(1)} %`;
  if (confidence === null) {
    const fewest = fewestRepeatsFor(level);
    return `Mann–Whitney: ${m} vs ${n} repeats is too few for a ${pct(level).replace('.0 %', ' %')} interval (fewest ${fewest} vs ${fewest})`;
  }
  return `Mann–Whitney ${pct(confidence)} interval (${m} vs ${n})`;
}

/** The method, stated once for the page. */
export function comparisonMethod(level = DEFAULT_LEVEL, minEffectPct = 0): string {
  const pct = `${Math.round(level * 1000) / 10} %`;
  const fewest = fewestRepeatsFor(level);
  return (
    `Each figure is compared over the passing repeats of each side: the difference is of the medians (variant − control); its interval is the exact Mann–Whitney (Wilcoxon rank-sum) ${pct} confidence interval for the shift between the two sets of per-repeat figures, centred on the Hodges–Lehmann estimate, with its exact coverage in the method column. ` +
    `The verdict is "worse" (or "better") only when the whole interval lies above (or below) ${minEffectPct ? `± ${minEffectPct} % of the control's median` : 'zero'}; otherwise it is "no difference we can see with N repeats". ` +
    `Too few repeats give no ${pct} interval at all and so never earn a verdict: at 3 vs 3 the most extreme of the 20 orderings is already 1 in 10 (two-sided); ${fewest} vs ${fewest} is the fewest equal count that has one. No resampling, so no seed: the same repeats give the same interval.`
  );
}

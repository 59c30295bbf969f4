// Reporting rules across the repeats of one configuration (spec: "A single latency is a median; a
// range is min-max"):
// - the count is written as passed/total, never rounded up (4/5 stays 4/5);
// - a single figure is the median over the PASSING repeats, a range is their min-max;
// - failed repeats are in neither; interrupted repeats are recorded but not counted at all;
// - a configuration is held only when every counted repeat passed (and there was at least one).
// The "worst 10-s p99" is a different statistic (the single worst window), so it is summarised with
// the same rule but must never be written as a p99.
import { median } from './percentile';

export interface RepeatFigures {
  passed: boolean;
  interrupted?: boolean;
  /** e.g. { p50_ms, p99_ms, worst_10s_p99_ms, delivered_rate }; null when the repeat has no value. */
  figures: Record<string, number | null>;
}

export interface FigureSummary {
  /** Median over passing repeats. */
  median: number;
  min: number;
  max: number;
  /** How many passing repeats had a value. */
  n: number;
}

export interface ConfigurationSummary {
  passed: number;
  total: number;
  interrupted: number;
  /** "4/5" */
  label: string;
  held: boolean;
  figures: Record<string, FigureSummary | null>;
}

export function summarizeRepeats(repeats: readonly RepeatFigures[]): ConfigurationSummary {
  const counted = repeats.filter((r) => !r.interrupted);
  const passing = counted.filter((r) => r.passed);
  const keys = new Set<string>();
  for (const r of repeats) for (const k of Object.keys(r.figures)) keys.add(k);
  const figures: Record<string, FigureSummary | null> = {};
  for (const k of [...keys].sort()) {
    const vals = passing.map((r) => r.figures[k]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    figures[k] = vals.length ? { median: median(vals), min: Math.min(...vals), max: Math.max(...vals), n: vals.length } : null;
  }
  return {
    passed: passing.length,
    total: counted.length,
    interrupted: repeats.length - counted.length,
    label: `${passing.length}/${counted.length}`,
    held: counted.length > 0 && passing.length === counted.length,
    figures,
  };
}

/** "22.6 ms" (the median) or, with range=true, "40.2–42.8 ms" (min–max); "—" when no repeat passed. */
export function formatFigure(s: FigureSummary | null, unit: string, opts: { range?: boolean; digits?: number } = {}): string {
  if (!s) return '—';
  const d = opts.digits ?? 1;
  const f = (x: number) => x.toFixed(d);
  if (opts.range) return s.min === s.max ? `${f(s.min)} ${unit}` : `${f(s.min)}–${f(s.max)} ${unit}`;
  return `${f(s.median)} ${unit}`;
}

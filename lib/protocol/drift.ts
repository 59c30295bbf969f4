// Drift: p99 of the last third of the run over p99 of its first third. A repeat whose tail grows
// while it runs is not sustaining its rate, even when its whole-run p99 looks fine.
//
// Thirds are whole seconds by intended time: with a run of D seconds and k = floor(D / 3), the first
// third is seconds [0, k) and the last third [D - k, D). With D < 3 (or a third without samples)
// there is no drift figure (null), and a gate that needs one fails for that reason.
//
// The ratio is rounded ONCE, here, to DRIFT_DECIMALS: the gate compares that value with the limit and
// prints it, and the report carries it, so the text and the verdict always agree (1.4996 is x1.5,
// and x1.5 is not under a limit of x1.5).
import type { SecondGroups } from './buckets';
import { percentile } from './percentile';

export const DEFAULT_DRIFT_LIMIT = 1.5;
export const DRIFT_DECIMALS = 3;

const round = (x: number) => Math.round(x * 10 ** DRIFT_DECIMALS) / 10 ** DRIFT_DECIMALS;

export interface Drift {
  third_s: number;
  first_p99_us: number | null;
  last_p99_us: number | null;
  /** last / first, rounded to DRIFT_DECIMALS; null when either third has no samples or the first p99 is 0. */
  ratio: number | null;
}

export function drift(g: SecondGroups): Drift {
  const k = Math.floor(g.durationS / 3);
  if (k === 0) return { third_s: 0, first_p99_us: null, last_p99_us: null, ratio: null };
  const first = g.values.subarray(g.offsets[0], g.offsets[k]);
  const last = g.values.subarray(g.offsets[g.durationS - k], g.offsets[g.durationS]);
  const f = first.length ? percentile(first, 99) : null;
  const l = last.length ? percentile(last, 99) : null;
  return { third_s: k, first_p99_us: f, last_p99_us: l, ratio: f !== null && l !== null && f > 0 ? round(l / f) : null };
}

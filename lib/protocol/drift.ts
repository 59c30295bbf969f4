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
import type { SecondGroups } from './buckets';
import { percentile } from './percentile';

export const DEFAULT_DRIFT_LIMIT = 1.5;
export const DRIFT_DECIMALS = 3;
/** A third needs this many samples for a p99 that is not simply its slowest request. */
export const MIN_THIRD_SAMPLES = 100;

const round = (x: number) => Math.round(x * 10 ** DRIFT_DECIMALS) / 10 ** DRIFT_DECIMALS;

export interface Drift {
  third_s: number;
  first_samples: number;
  last_samples: number;
  first_p99_us: number | null;
  last_p99_us: number | null;
  /** last / first, rounded to DRIFT_DECIMALS; null when a third is too small for a p99, or the first p99 is 0. */
  ratio: number | null;
}

export function drift(g: SecondGroups): Drift {
  const k = Math.floor(g.durationS / 3);
  if (k === 0) return { third_s: 0, first_samples: 0, last_samples: 0, first_p99_us: null, last_p99_us: null, ratio: null };
  const first = g.values.subarray(g.offsets[0], g.offsets[k]);
  const last = g.values.subarray(g.offsets[g.durationS - k], g.offsets[g.durationS]);
  const f = first.length >= MIN_THIRD_SAMPLES ? percentile(first, 99) : null;
  const l = last.length >= MIN_THIRD_SAMPLES ? percentile(last, 99) : null;
  return { third_s: k, first_samples: first.length, last_samples: last.length, first_p99_us: f, last_p99_us: l, ratio: f !== null && l !== null && f > 0 ? round(l / f) : null };
}

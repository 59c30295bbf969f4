// Synthetic weekly series with known changes, seeded (the same seed draws the same weeks): the cases
// lib/protocol/change-points.ts and Apache Otava are both given (change-points.test.ts,
// change-points-otava.test.ts) and the history `rig history` is tested on (test/evidence/history.test.ts).
import { seededRandom } from '../../lib/protocol/seeded-random';

/** A normal draw (Box–Muller) from a seeded generator. */
export function normal(seed: number): () => number {
  const r = seededRandom(seed);
  return () => Math.sqrt(-2 * Math.log(Math.max(r(), 1e-12))) * Math.cos(2 * Math.PI * r());
}

export const WEEKS = 30;
/** The first run (1-based) after the step: index 19. */
export const STEP_RUN = 20;

/** p99 around `base` with `noisePct` % noise, `stepPct` % higher from run STEP_RUN on. */
export function stepSeries(seed: number, stepPct = 10, noisePct = 2, base = 100): number[] {
  const z = normal(seed);
  return Array.from({ length: WEEKS }, (_, i) => base * (1 + (i >= STEP_RUN - 1 ? stepPct / 100 : 0)) * (1 + (noisePct / 100) * z()));
}

/** Noise alone. */
export const noiseSeries = (seed: number, noisePct = 2, base = 100): number[] => stepSeries(seed, 0, noisePct, base);

/** The step, with two noisy weeks (runs 8 and 26: +40 % and +50 %), the kind one bad neighbour makes. */
export function outlierSeries(seed: number, withStep = true): number[] {
  const s = withStep ? stepSeries(seed) : noiseSeries(seed);
  s[7] *= 1.4;
  s[25] *= 1.5;
  return s;
}

/** 15 flat weeks, then a slide of 1 % a week for the last 15 (never more than 1 % from week to week). */
export function driftSeries(seed: number, noisePct = 1, base = 100): number[] {
  const z = normal(seed);
  return Array.from({ length: WEEKS }, (_, i) => base * (1 + 0.01 * Math.max(0, i - 14)) * (1 + (noisePct / 100) * z()));
}

/** The seeds of the cases the rig and Otava are both given. */
export const CASE_SEEDS = [1, 2, 3, 4, 5];

/** Every case of both Otava tests, by name: a step, noise, outliers with and without the step, a slide, per seed. */
export function otavaCases(): Record<string, number[]> {
  const cases: Record<string, number[]> = {};
  for (const s of CASE_SEEDS) {
    cases[`step${s}`] = stepSeries(s);
    cases[`noise${s}`] = noiseSeries(100 + s);
    cases[`outliers${s}`] = outlierSeries(200 + s);
    cases[`outliersonly${s}`] = outlierSeries(300 + s, false);
    cases[`drift${s}`] = driftSeries(400 + s);
  }
  return cases;
}

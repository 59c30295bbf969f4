// Batch sizes drawn from a distribution (issue 35, item 2): how many events request k carries. Pure
// and fixed before the load starts, like the tenants and repeats of clients.ts: the generator builds
// request k's body with sizeOf(k) events (lib/loadgen/body.ts), the stream's `#plan` record carries
// the distribution with its seed (stream-plan.ts: `batch_sizes`, version 2), and the analysis holds
// every ingest row's `events` to the size the plan gives its request (sent-events.ts), so a stream
// whose sizes are not the plan's is refused like a row off the schedule.
//
// The configuration's `batch` stays the mean size: requests/s is still eventsPerSecond / batch, so
// eventsPerSecond is the mean offered event rate and every schedule (arrivals.ts) is unchanged. A
// distribution whose mean is not batch (to within half an event) is refused at spec parse.
//
// - uniform {min, max}: every size in min..max alike (mean (min + max) / 2).
// - geometric {max}: sizes 1, 2, ... with P(size = j) = p (1 - p)^(j - 1), p = 1 / batch (mean batch),
//   a draw above max taken as max (the service's limit is 1,000 events a request).
// - fixed-mix {mix: [{size, share}]}: each size with its share (shares summing to 1).
//
// Request k's size is a function of (seed, k) alone (hash32, the rig's counter-based generator), so any
// request's size is known without the ones before it, and a repeat of request j (duplicates) carries
// j's size with j's body.
import { hash32 } from '../loadgen/prng';
import { MAX_BATCH } from './hardcount-api';

export type BatchDistribution = 'uniform' | 'geometric' | 'fixed-mix';
export const BATCH_DISTRIBUTIONS: readonly BatchDistribution[] = ['uniform', 'geometric', 'fixed-mix'];

/** The distribution as the `#plan` record carries it, its seed resolved. */
export type BatchSizesPlan =
  | { distribution: 'uniform'; min: number; max: number; seed: number }
  | { distribution: 'geometric'; max: number; seed: number }
  | { distribution: 'fixed-mix'; mix: Array<{ size: number; share: number }>; seed: number };

/** A fixed mix holds at most this many sizes. */
export const MAX_MIX = 100;
/** How far a distribution's mean may be from the configuration's batch: half an event (batch is whole). */
export const MEAN_TOLERANCE = 0.5;
const U32 = 0x100000000;

const whole = (x: unknown, lo: number, hi: number): x is number => typeof x === 'number' && Number.isInteger(x) && x >= lo && x <= hi;

/** The distribution's mean size (geometric: its mean batch, less what its cap cuts off). */
export function batchSizesMean(p: BatchSizesPlan, batch: number): number {
  if (p.distribution === 'uniform') return (p.min + p.max) / 2;
  if (p.distribution === 'fixed-mix') return p.mix.reduce((a, m) => a + m.size * m.share, 0);
  // E[min(G, max)] = sum over j < max of (1 - p)^j = (1 - (1 - p)^max) / p, p = 1 / batch.
  const q = 1 - 1 / batch;
  return batch * (1 - Math.pow(q, p.max));
}

/** The largest size the distribution draws (a body buffer's bound). */
export function largestBatch(p: BatchSizesPlan): number {
  if (p.distribution === 'fixed-mix') return Math.max(...p.mix.map((m) => m.size));
  return p.max;
}

/**
 * What is wrong with a distribution for a configuration of `batch` (naming the field and the fix), or
 * null. Paths are the spec's (batchSizes.min, ...): the plan record's fields bear the same names.
 */
export function batchSizesProblem(p: BatchSizesPlan, batch: number): string | null {
  if (!whole(p.seed, 0, 0xffffffff)) return `batchSizes.seed must be a whole number within 0..4294967295, got ${p.seed}`;
  if (p.distribution === 'uniform') {
    if (!whole(p.min, 1, MAX_BATCH)) return `batchSizes.min must be a whole number of events within 1..${MAX_BATCH}, got ${p.min}`;
    if (!whole(p.max, 1, MAX_BATCH)) return `batchSizes.max must be a whole number of events within 1..${MAX_BATCH}, got ${p.max}`;
    if (p.min > p.max) return `batchSizes.min ${p.min} is above batchSizes.max ${p.max}: swap them`;
  } else if (p.distribution === 'geometric') {
    if (!whole(p.max, 1, MAX_BATCH)) return `batchSizes.max must be a whole number of events within 1..${MAX_BATCH}, got ${p.max}`;
    if (p.max < batch) return `batchSizes.max ${p.max} is below the mean batch ${batch}: a geometric's cap must be above its mean (default ${MAX_BATCH})`;
  } else if (p.distribution === 'fixed-mix') {
    if (!Array.isArray(p.mix) || p.mix.length < 1 || p.mix.length > MAX_MIX) return `batchSizes.mix must list 1..${MAX_MIX} sizes with their shares, got ${Array.isArray(p.mix) ? p.mix.length : typeof p.mix}`;
    const seen = new Set<number>();
    let sum = 0;
    for (let i = 0; i < p.mix.length; i++) {
      const m = p.mix[i];
      if (!whole(m?.size, 1, MAX_BATCH)) return `batchSizes.mix[${i}].size must be a whole number of events within 1..${MAX_BATCH}, got ${m?.size}`;
      if (!(typeof m.share === 'number' && m.share > 0 && m.share <= 1)) return `batchSizes.mix[${i}].share must be within (0, 1], got ${m.share}`;
      if (seen.has(m.size)) return `batchSizes.mix[${i}].size ${m.size} is listed twice: give each size once, with its whole share`;
      seen.add(m.size);
      sum += m.share;
    }
    if (Math.abs(sum - 1) > 1e-9) return `batchSizes.mix's shares sum to ${sum}: they must sum to 1 (e.g. 0.8 and 0.2)`;
  } else {
    return `batchSizes.distribution must be one of ${BATCH_DISTRIBUTIONS.map((d) => JSON.stringify(d)).join(', ')}, got ${JSON.stringify((p as { distribution: unknown }).distribution)}`;
  }
  const mean = batchSizesMean(p, batch);
  if (Math.abs(mean - batch) > MEAN_TOLERANCE) {
    const fix =
      p.distribution === 'geometric'
        ? p.max < MAX_BATCH
          ? `raise batchSizes.max (${p.max}; at most ${MAX_BATCH}) or lower batch`
          : `lower batch: a geometric of mean ${batch} is cut short by the service's ${MAX_BATCH} events a request (or draw from a uniform or a fixed-mix)`
        : `set batch to ${Math.round(mean)}, or move the ${p.distribution === 'uniform' ? 'bounds' : 'mix'} so its mean is ${batch}`;
    return `batchSizes: the ${p.distribution} sizes' mean is ${round3(mean)} events, but the configuration's batch is ${batch}; batch is the mean size (requests/s = eventsPerSecond / batch): ${fix}`;
  }
  return null;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Request k's size under a plan: the draw the generator makes and the analysis checks. */
export class BatchSizes {
  /** No request is larger. */
  readonly largest: number;
  private readonly cdf: Float64Array | null;
  private readonly lnQ: number;

  constructor(
    readonly plan: BatchSizesPlan,
    readonly batch: number,
  ) {
    this.largest = largestBatch(plan);
    this.lnQ = Math.log(1 - 1 / batch);
    if (plan.distribution === 'fixed-mix') {
      const cdf = new Float64Array(plan.mix.length);
      let sum = 0;
      for (let i = 0; i < plan.mix.length; i++) cdf[i] = sum += plan.mix[i].share;
      cdf[cdf.length - 1] = Infinity; // rounding never leaves a draw past the last size
      this.cdf = cdf;
    } else this.cdf = null;
  }

  /** Events in request k (1..largest). */
  of(k: number): number {
    const p = this.plan;
    const h = hash32(p.seed, k);
    if (p.distribution === 'uniform') return p.min + (h % (p.max - p.min + 1));
    if (p.distribution === 'geometric') {
      if (this.batch <= 1) return 1;
      // Inverse of the geometric's CDF at u in (0, 1): the least j with 1 - q^j >= 1 - u.
      const u = (h + 0.5) / U32;
      const j = Math.max(1, Math.ceil(Math.log(u) / this.lnQ));
      return j > p.max ? p.max : j;
    }
    const u = h / U32;
    const cdf = this.cdf as Float64Array;
    let i = 0;
    while (u >= cdf[i]) i++;
    return p.mix[i].size;
  }
}

/** A distribution as a spec or a caller gives it: the seed may be left out, and a geometric's cap. */
export type BatchSizesInput =
  | { distribution: 'uniform'; min: number; max: number; seed?: number }
  | { distribution: 'geometric'; max?: number; seed?: number }
  | { distribution: 'fixed-mix'; mix: Array<{ size: number; share: number }>; seed?: number };

/** The plan of a distribution given with its seed (or `seed` when it has none) and its cap resolved. */
export function resolveBatchSizes(b: BatchSizesInput, seed: number): BatchSizesPlan {
  const s = b.seed ?? seed;
  if (b.distribution === 'uniform') return { distribution: 'uniform', min: b.min, max: b.max, seed: s };
  if (b.distribution === 'geometric') return { distribution: 'geometric', max: b.max ?? MAX_BATCH, seed: s };
  return { distribution: 'fixed-mix', mix: b.mix.map((m) => ({ size: m.size, share: m.share })), seed: s };
}

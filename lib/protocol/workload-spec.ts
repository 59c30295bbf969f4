// A configuration's `workload` (issue 35): the shape of its arrivals. Absent, the configuration is the
// protocol's (constant, evenly spaced arrivals) and nothing of it changes: the spec parses to the same
// object (no key is added), the stream's plan record is version 1 as before (stream-plan.ts).
//
// Rates are events per second like the configuration's `eventsPerSecond`, which is every shape's base:
// Poisson's mean, the ramp's start, the spike's base, the diurnal trough. Times are seconds of the
// repeat. A trace names a file (offsets in ms, one a line, or a k6 JSON export) read by `rig campaign
// start` (refused there, before anything runs, when it cannot be read) and by the worker that sends
// the load; its instants ride in the stream's plan.
//
// Batch sizes (`batchSizes`, batch-sizes.ts) draw each request's size from a distribution whose mean is
// the configuration's `batch` (so eventsPerSecond stays the mean offered event rate); client timestamps
// (`timestamps`, client-timestamps.ts) stamp every event, a share of them late or out of order.
import { z } from 'zod';
import { arrivalSchedule, arrivalsProblem, describeArrivals, type Arrivals } from './arrivals';
import { TRACE_FORMATS } from './arrival-trace';
import { DUPLICATE_MODES, MAX_DUPLICATE_SHARE, MAX_TENANTS } from './clients';
import { batchSizesProblem, MAX_MIX, resolveBatchSizes } from './batch-sizes';
import { MAX_LAG_MS, MAX_OUT_OF_ORDER_MS, resolveTimestamps, timestampsProblem } from './client-timestamps';
import { MAX_BATCH } from './hardcount-api';

const num = (what: string) =>
  z.number({ error: (iss) => (iss.input === undefined ? `${what} is required` : `${what} must be a number (got ${JSON.stringify(iss.input)})`) });
const evps = (what: string) => num(what).positive(`${what} must be > 0 events per second`);
const secs = (what: string) => num(what).positive(`${what} must be > 0 seconds`);

export const ArrivalsSpec = z.discriminatedUnion(
  'shape',
  [
    /** The protocol's own: evenly spaced at eventsPerSecond (the same as no workload). */
    z.strictObject({ shape: z.literal('constant') }),
    /** Exponential gaps of mean 1 / rate; the seed makes it reproducible (absent: drawn from each repeat's run tag, and recorded in its stream). */
    z.strictObject({ shape: z.literal('poisson'), seed: num('seed').int('seed must be a whole number').min(0).max(0xffffffff).optional() }),
    /** From eventsPerSecond to `to` ev/s linearly over `over` s, then `to`. */
    z.strictObject({ shape: z.literal('ramp'), to: evps('to'), over: secs('over') }),
    /** eventsPerSecond, `peak` ev/s from `at` s for `for` s, then eventsPerSecond again. */
    z.strictObject({ shape: z.literal('spike'), peak: evps('peak'), at: secs('at'), for: secs('for') }),
    /** A raised cosine from eventsPerSecond (t = 0) to `max` ev/s (half a period in), period `period` s. */
    z.strictObject({ shape: z.literal('diurnal'), max: evps('max'), period: secs('period') }),
    /** Recorded instants: `file` (absolute, or relative to the spec file), its `format`, replayed `speed` times as fast. */
    z.strictObject({
      shape: z.literal('trace'),
      file: z.string().min(1, 'file must name the trace file'),
      format: z.enum(TRACE_FORMATS as unknown as ['offsets', 'k6']).default('offsets'),
      speed: num('speed').positive('speed must be > 0 (2 replays the trace twice as fast)').max(1000).default(1),
    }),
  ],
  { error: 'arrivals.shape must be one of "constant", "poisson", "ramp", "spike", "diurnal", "trace"' },
);

/** Several tenants (issue 35, item 2; lib/protocol/clients.ts): each request's tenant a seeded Zipf draw. */
export const TenantsSpec = z.strictObject({
  count: num('tenants.count').int('tenants.count must be a whole number').min(2, 'tenants.count must be at least 2 (one tenant: leave tenants out)').max(MAX_TENANTS, `tenants.count must be at most ${MAX_TENANTS}`),
  s: num('tenants.s').min(0, 'tenants.s must be >= 0 (0: every tenant alike)').max(10, 'tenants.s must be at most 10'),
  /** Absent: drawn from each repeat's run tag, and recorded in its stream. */
  seed: num('tenants.seed').int('tenants.seed must be a whole number').min(0).max(0xffffffff).optional(),
});

/** Requests sent again with the same idempotency keys (lib/protocol/clients.ts). */
export const DuplicatesSpec = z.strictObject({
  share: num('duplicates.share')
    .positive('duplicates.share must be > 0 (0.05: one request in 20 is sent again)')
    .max(MAX_DUPLICATE_SHARE, `duplicates.share must be at most ${MAX_DUPLICATE_SHARE}`),
  mode: z.enum(DUPLICATE_MODES as unknown as ['random', 'after-timeout'], { error: 'duplicates.mode must be "random" or "after-timeout"' }),
  /** after-timeout: ms after its original a repeat is sent (a client's timeout); default 1000. */
  afterMs: num('duplicates.afterMs').min(0).max(600_000, 'duplicates.afterMs must be at most 600000').optional(),
  seed: num('duplicates.seed').int('duplicates.seed must be a whole number').min(0).max(0xffffffff).optional(),
});

const seedOf = (what: string) => num(what).int(`${what} must be a whole number`).min(0).max(0xffffffff).optional();
const size = (what: string) =>
  num(what).int(`${what} must be a whole number of events`).min(1, `${what} must be at least 1 event`).max(MAX_BATCH, `${what} must be at most ${MAX_BATCH} events (the service's limit)`);
const shareOf = (what: string, eg: string) => num(what).min(0, `${what} must be >= 0`).max(1, `${what} must be at most 1 (${eg})`);

/**
 * Each request's size drawn from a distribution (lib/protocol/batch-sizes.ts) whose mean is the
 * configuration's batch. Absent: every request carries `batch` events.
 */
export const BatchSizesSpec = z.discriminatedUnion(
  'distribution',
  [
    /** Every size in min..max alike; (min + max) / 2 must be the batch. */
    z.strictObject({ distribution: z.literal('uniform'), min: size('batchSizes.min'), max: size('batchSizes.max'), seed: seedOf('batchSizes.seed') }),
    /** Geometric of mean batch (many small requests, a few large), a draw above max taken as max. */
    z.strictObject({ distribution: z.literal('geometric'), max: size('batchSizes.max').optional(), seed: seedOf('batchSizes.seed') }),
    /** Each size with its share (summing to 1), their mean the batch. */
    z.strictObject({
      distribution: z.literal('fixed-mix'),
      mix: z
        .array(z.strictObject({ size: size('batchSizes.mix[].size'), share: num('batchSizes.mix[].share').positive('batchSizes.mix[].share must be > 0').max(1, 'batchSizes.mix[].share must be at most 1') }))
        .min(1, 'batchSizes.mix must list at least one size')
        .max(MAX_MIX, `batchSizes.mix lists at most ${MAX_MIX} sizes`),
      seed: seedOf('batchSizes.seed'),
    }),
  ],
  { error: 'batchSizes.distribution must be one of "uniform", "geometric", "fixed-mix"' },
);

/** Client-side timestamps on every event, a share late or out of order (lib/protocol/client-timestamps.ts). */
export const TimestampsSpec = z.strictObject({
  lateShare: shareOf('timestamps.lateShare', '0.1: one event in 10 is late').optional(),
  lagMs: num('timestamps.lagMs').int('timestamps.lagMs must be a whole number of ms').min(1, 'timestamps.lagMs must be >= 1 ms').max(MAX_LAG_MS, `timestamps.lagMs must be at most ${MAX_LAG_MS} (30 days)`).optional(),
  outOfOrderShare: shareOf('timestamps.outOfOrderShare', '0.05: one event in 20').optional(),
  outOfOrderMs: num('timestamps.outOfOrderMs')
    .int('timestamps.outOfOrderMs must be a whole number of ms')
    .min(1, 'timestamps.outOfOrderMs must be >= 1 ms')
    .max(MAX_OUT_OF_ORDER_MS, `timestamps.outOfOrderMs must be at most ${MAX_OUT_OF_ORDER_MS} (an hour)`)
    .optional(),
  seed: seedOf('timestamps.seed'),
});

export const WorkloadSpec = z.strictObject({
  /** Absent: the protocol's constant arrivals (a workload of tenants or duplicates alone). */
  arrivals: ArrivalsSpec.optional(),
  tenants: TenantsSpec.optional(),
  duplicates: DuplicatesSpec.optional(),
  batchSizes: BatchSizesSpec.optional(),
  timestamps: TimestampsSpec.optional(),
  /**
   * A spike's or a ramp's own p99 limit (ms) per phase (lib/protocol/phases.ts: before, during, after;
   * ramp, after); a phase not named is held to the configuration's p99LimitMs.
   */
  phaseP99LimitMs: z
    .strictObject({
      before: num('before').positive().optional(),
      during: num('during').positive().optional(),
      after: num('after').positive().optional(),
      ramp: num('ramp').positive().optional(),
    })
    .optional(),
  /** A spike's recovery limit: its 10-s p99 back within x1.2 of its level before the spike within this many seconds of its end. */
  recoveryLimitSeconds: num('recoveryLimitSeconds').positive().optional(),
  /**
   * A long soak's windows (lib/protocol/window-gates.ts): the repeat is also judged window by window,
   * its p99 at or under windowP99LimitMs (else p99LimitMs) in every window of this many seconds, beside
   * drift over the whole run. Absent: no windows, the verdict as before.
   */
  windowSeconds: num('windowSeconds').int('windowSeconds must be a whole number of seconds').min(10, 'windowSeconds must be >= 10 (a window is judged on its p99)').optional(),
  /** The p99 limit (ms) of every window; absent: the configuration's p99LimitMs. Needs windowSeconds. */
  windowP99LimitMs: num('windowP99LimitMs').positive('windowP99LimitMs must be > 0 ms').optional(),
});

export type ArrivalsSpec = z.infer<typeof ArrivalsSpec>;
export type WorkloadSpec = z.infer<typeof WorkloadSpec>;
export type TenantsSpec = z.infer<typeof TenantsSpec>;
export type DuplicatesSpec = z.infer<typeof DuplicatesSpec>;
export type BatchSizesSpec = z.infer<typeof BatchSizesSpec>;
export type TimestampsSpec = z.infer<typeof TimestampsSpec>;

/**
 * A configuration's arrivals as the load generator takes them (events/s, its rate the base), or null
 * for the constant schedule. A trace is its file's business (lib/loadgen/trace-file.ts): here its
 * shape alone, with no gaps.
 */
export function workloadArrivals(w: WorkloadSpec | undefined): Exclude<ArrivalsSpec, { shape: 'constant' }> | null {
  if (!w || !w.arrivals || w.arrivals.shape === 'constant') return null;
  return w.arrivals;
}

/**
 * What a configuration's arrivals cannot be, given its rate, batch and the repeat's length: each with
 * the path of its field under the configuration and the fix. A trace's file is checked where it can be
 * read (client/spec-input.ts); here only its speed.
 */
export function workloadProblems(c: { eventsPerSecond: number; batch: number; workload?: WorkloadSpec }, repeatSeconds: number): Array<{ message: string; path: Array<string | number> }> {
  const out: Array<{ message: string; path: string[] }> = [];
  const shape = c.workload?.arrivals?.shape ?? 'constant';
  if (c.workload?.recoveryLimitSeconds !== undefined && shape !== 'spike') out.push({ message: `recoveryLimitSeconds is a spike's: arrivals are ${shape}; remove it, or make the arrivals a spike`, path: ['workload', 'recoveryLimitSeconds'] });
  if (c.workload?.windowP99LimitMs !== undefined && c.workload.windowSeconds === undefined) out.push({ message: 'windowP99LimitMs needs windowSeconds, the length of the windows it holds (e.g. 600 for "p99 under X in every 10-min window")', path: ['workload', 'windowP99LimitMs'] });
  if (c.workload?.windowSeconds !== undefined && c.workload.windowSeconds > repeatSeconds) out.push({ message: `a window of ${c.workload.windowSeconds} s is longer than the repeat's ${repeatSeconds} s (sustained.repeatSeconds): shorten the window or lengthen the repeat`, path: ['workload', 'windowSeconds'] });
  const phases = Object.keys(c.workload?.phaseP99LimitMs ?? {});
  const own = shape === 'spike' ? ['before', 'during', 'after'] : shape === 'ramp' ? ['ramp', 'after'] : [];
  for (const ph of phases) if (!own.includes(ph)) out.push({ message: `a ${shape} has no phase "${ph}"${own.length ? ` (its phases: ${own.join(', ')})` : ': phases are a spike\'s or a ramp\'s'}`, path: ['workload', 'phaseP99LimitMs', ph] });
  return [...out, ...arrivalsProblems(c, repeatSeconds), ...requestProblems(c)];
}

function arrivalsProblems(c: { eventsPerSecond: number; batch: number; workload?: WorkloadSpec }, repeatSeconds: number): Array<{ message: string; path: string[] }> {
  const a = workloadArrivals(c.workload);
  if (!a || a.shape === 'trace') return [];
  // A field the schema refused already (zod runs this refinement anyway) is not refused twice.
  if (Object.values(a).some((v) => typeof v === 'number' && !(Number.isFinite(v) && v > 0) && !(a.shape === 'poisson' && v === 0))) return [];
  const plan: Arrivals = a.shape === 'poisson' ? { shape: 'poisson', seed: a.seed ?? 0 } : a;
  const why = arrivalsProblem(plan, c.eventsPerSecond, c.batch, repeatSeconds);
  if (!why) return [];
  const m = /^arrivals\.(\w+) /.exec(why);
  const field = m ? m[1] : 'shape';
  const message = m ? why.slice(m[0].length) : why;
  return [{ message: `${field} ${message}${/repeat/.test(message) ? ' (sustained.repeatSeconds)' : ''}`, path: ['workload', 'arrivals', field] }];
}

/**
 * What a dry run says of a configuration's workload: its arrivals in words and the requests a repeat
 * of `seconds` holds (null: a trace, counted once its file is read; a Poisson without a seed: its
 * expected count).
 */
export function workloadSummary(c: { eventsPerSecond: number; batch: number; workload?: WorkloadSpec }, seconds: number): { arrivals: string; requests: number | null } | null {
  const a = workloadArrivals(c.workload);
  if (!a) return null;
  if (a.shape === 'trace') return { arrivals: `trace ${a.file} (${a.format}) at speed ${a.speed}`, requests: null };
  if (a.shape === 'poisson' && a.seed === undefined) return { arrivals: `poisson, mean ${c.eventsPerSecond} ev/s (seed from each run tag)`, requests: Math.floor((c.eventsPerSecond / c.batch) * seconds) };
  const plan: Arrivals = a.shape === 'poisson' ? { shape: 'poisson', seed: a.seed ?? 0 } : a;
  return { arrivals: describeArrivals(plan, c.eventsPerSecond), requests: arrivalSchedule({ rate: c.eventsPerSecond, batch: c.batch, seconds, arrivals: plan }).count };
}

/**
 * What a configuration's batch sizes and timestamps cannot be: the rules across their fields (a mean
 * that is not the batch, min above max, shares that do not sum to 1, a lag without a late share), each
 * with its path and the fix. A field the schema refused already is not refused twice.
 */
function requestProblems(c: { batch: number; workload?: WorkloadSpec }): Array<{ message: string; path: Array<string | number> }> {
  const out: Array<{ message: string; path: Array<string | number> }> = [];
  const b = c.workload?.batchSizes;
  if (b && BatchSizesSpec.safeParse(b).success && Number.isInteger(c.batch) && c.batch >= 1) {
    const why = batchSizesProblem(resolveBatchSizes(b, 0), c.batch);
    if (why) out.push({ message: why.replace(/^batchSizes: /, ''), path: ['workload', 'batchSizes', ...fieldPath(why, 'batchSizes')] });
  }
  const t = c.workload?.timestamps;
  if (t && TimestampsSpec.safeParse(t).success) {
    const why = timestampsProblem(resolveTimestamps(t, 0));
    if (why) out.push({ message: why, path: ['workload', 'timestamps', ...fieldPath(why, 'timestamps')] });
  }
  return out;
}

/** The field a problem's message starts with (`batchSizes.mix[2].size ...` -> ['mix', 2, 'size']), [] for the block. */
function fieldPath(message: string, block: string): Array<string | number> {
  const m = new RegExp(`^${block}\\.(\\w+)(?:\\[(\\d+)\\]\\.(\\w+))?`).exec(message);
  if (!m) return [];
  return m[2] === undefined ? [m[1]] : [m[1], Number(m[2]), m[3]];
}

/**
 * What a dry run says of a configuration's requests when its workload draws their sizes or stamps their
 * events (issue 35), in words; null without either (the plan is then today's).
 */
export function workloadRequests(c: { batch: number; workload?: WorkloadSpec }): string | null {
  const b = c.workload?.batchSizes;
  const t = c.workload?.timestamps;
  if (!b && !t) return null;
  const parts: string[] = [];
  if (b) {
    const range = b.distribution === 'uniform' ? `${b.min}-${b.max}` : b.distribution === 'geometric' ? `1-${b.max ?? MAX_BATCH}` : b.mix.map((m) => `${m.size} x ${m.share}`).join(', ');
    parts.push(`${b.distribution} batch sizes of mean ${c.batch} (${range})${b.seed === undefined ? ', seed from each run tag' : `, seed ${b.seed}`}`);
  }
  if (t) {
    const p = resolveTimestamps(t, 0);
    const pct = (x: number) => `${Number((x * 100).toFixed(3))} %`;
    parts.push(`client timestamps on every event, ${pct(p.late_share)} ${p.lag_ms} ms late, ${pct(p.out_of_order_share)} out of order (up to ${p.out_of_order_ms} ms)`);
  }
  return parts.join('; ');
}

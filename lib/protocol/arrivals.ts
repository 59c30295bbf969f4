// Arrival schedules (issue 35, item 1): when each request of a repeat is intended, fixed before the
// load starts. Pure: the generator sends by it (lib/loadgen/generator.ts), the stream's `#plan` record
// carries it (stream-plan.ts), and `rig analyze` holds every ingest row to it (issue 25's rule: a row
// not at one of the schedule's times is refused).
//
// A schedule is a function "intended time of request k" (µs since the start, whole, strictly
// increasing in k) plus how many requests fall before the end of the window. Nothing else: a load
// split over N nodes (issue 37) is a filter over k (node i sends k = i, i + N, ...), and a merge of
// their streams is by intended time.
//
// The shapes, every rate in events/s like the configuration's own (requests/s = rate / batch):
// - constant (no `arrivals`): request k at floor(k x 1e6 / r), the protocol's; kept as the very
//   formula of stream-plan.ts's scheduledUs, so a plan without arrivals is today's to the byte.
// - poisson {seed}: exponential gaps of mean 1 / r, the k-th drawn from hash32(seed, k) (the rig's
//   counter-based generator, lib/loadgen/prng.ts), so the schedule is a function of (seed, rate)
//   alone: reproducible, and written into the plan with its seed.
// - ramp {to, over}: the rate moves linearly from the configuration's rate to `to` over `over` s,
//   then stays at `to`.
// - spike {peak, at, for}: the configuration's rate, `peak` from `at` for `for` seconds, then the
//   configuration's rate again.
// - diurnal {max, period}: a raised cosine between the configuration's rate (at t = 0, the trough) and
//   `max` (at period / 2), period `period` s.
// - trace {speed, gaps_us}: the instants of a recorded trace (arrival-trace.ts reads the file),
//   divided by `speed`, as µs gaps (delta-encoded, so the plan record stays small).
//
// The analytic shapes (ramp, spike, diurnal) are an expected count Λ(t) (requests intended by t s)
// and its inverse: request k is at floor(1e6 x Λ⁻¹(k)), O(1) per k, so the generator's hot path stays
// cheap and any k is reachable without the ones before it. Poisson is a running sum: O(1) per k in
// order (the generator's use), materialised once when looked up by time (the analysis's).
//
// Determinism across hosts: the generator and the analysis may run on different machines. Every
// function used here is IEEE-exact (+, -, x, /, sqrt) or V8's own fdlibm port (log, sin, cos), the
// same bits on every platform V8 runs on; a time is computed by one code path wherever it is needed.
import { hash32 } from '../loadgen/prng';

/** A request schedule: request k's intended time, µs since the start of the repeat. */
export interface ArrivalSchedule {
  /** Requests intended before the end of the window. */
  readonly count: number;
  /** Intended time of request k (0 <= k < count), µs: whole, strictly increasing in k. */
  at(k: number): number;
  /** The k whose intended time is exactly t µs, or -1 when no request of the schedule is at t. */
  indexOf(t: number): number;
}

export type ArrivalShape = 'poisson' | 'ramp' | 'spike' | 'diurnal' | 'trace';
export const ARRIVAL_SHAPES: readonly ArrivalShape[] = ['poisson', 'ramp', 'spike', 'diurnal', 'trace'];

/** The arrivals of a plan (events/s, seconds), as the `#plan` record carries them. Constant is `null`. */
export type Arrivals =
  | { shape: 'poisson'; seed: number }
  | { shape: 'ramp'; to: number; over: number }
  | { shape: 'spike'; peak: number; at: number; for: number }
  | { shape: 'diurnal'; max: number; period: number }
  | { shape: 'trace'; speed: number; gaps_us: number[] };

/** What a schedule is built from: the plan's rate and batch (the base rate), its window, its arrivals. */
export interface ScheduleInput {
  /** Events per second: the constant rate, Poisson's mean, the ramp's start, the spike's base, the diurnal trough. */
  rate: number;
  batch: number;
  seconds: number;
  arrivals: Arrivals | null;
}

/** The most requests per second any schedule may ask for (the generator's limit: options.ts). */
export const MAX_REQUEST_RATE = 100_000;
/** The most requests a trace may hold (its gaps ride in the `#plan` record). */
export const MAX_TRACE_REQUESTS = 1_000_000;

export class ArrivalsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArrivalsError';
  }
}

const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * What is wrong with a plan's arrivals (naming the field and the fix), or null. `rate` and `batch` are
 * the plan's (checked by its own rule); `seconds` its window.
 */
export function arrivalsProblem(a: Arrivals, rate: number, batch: number, seconds: number): string | null {
  const rps = (evps: number) => evps / batch;
  const rateOk = (field: string, v: unknown, min = 0): string | null =>
    finite(v) && v > min && rps(v) <= MAX_REQUEST_RATE
      ? null
      : `arrivals.${field} must be ${min === 0 ? '> 0' : `> ${min}`} events per second (at most ${MAX_REQUEST_RATE.toLocaleString('en-US')} requests/s at batch ${batch}), got ${String(v)}`;
  switch (a.shape) {
    case 'poisson':
      return Number.isInteger(a.seed) && a.seed >= 0 && a.seed <= 0xffffffff ? null : `arrivals.seed must be a whole number within 0..4294967295, got ${String(a.seed)}`;
    case 'ramp':
      return rateOk('to', a.to) ?? (finite(a.over) && a.over > 0 && a.over <= seconds ? null : `arrivals.over must be > 0 seconds and at most the repeat's ${seconds} s, got ${String(a.over)}`);
    case 'spike':
      if (rateOk('peak', a.peak)) return rateOk('peak', a.peak);
      if (!(finite(a.at) && a.at > 0 && a.at < seconds)) return `arrivals.at must be a time within the repeat (0 < at < ${seconds} s), got ${String(a.at)}: the spike needs a phase before it`;
      if (!(finite(a.for) && a.for > 0 && a.at + a.for <= seconds)) return `arrivals.for must be > 0 seconds and end within the repeat (at + for <= ${seconds} s), got ${String(a.for)}`;
      return null;
    case 'diurnal':
      if (rateOk('max', a.max)) return rateOk('max', a.max);
      if (!(a.max >= rate)) return `arrivals.max must be at least the configuration's rate ${rate} ev/s (the trough), got ${a.max}`;
      return finite(a.period) && a.period > 0 ? null : `arrivals.period must be > 0 seconds, got ${String(a.period)}`;
    case 'trace': {
      if (!(finite(a.speed) && a.speed > 0 && a.speed <= 1000)) return `arrivals.speed must be within (0, 1000] (2 replays the trace twice as fast), got ${String(a.speed)}`;
      const g = a.gaps_us;
      if (!Array.isArray(g) || g.length === 0) return 'arrivals.gaps_us must list at least one request';
      if (g.length > MAX_TRACE_REQUESTS) return `a trace may hold at most ${MAX_TRACE_REQUESTS.toLocaleString('en-US')} requests, this one holds ${g.length}: cut it, or split it over repeats`;
      for (let i = 0; i < g.length; i++) {
        if (!Number.isInteger(g[i]) || g[i] < (i === 0 ? 0 : 1) || g[i] > 7 * 86_400e6) return `arrivals.gaps_us[${i}] must be a whole number of µs ${i === 0 ? '>= 0' : '>= 1 (times strictly increase)'}, got ${String(g[i])}`;
      }
      return null;
    }
    default:
      return `arrivals.shape must be one of ${ARRIVAL_SHAPES.join(', ')}, got ${JSON.stringify((a as { shape?: unknown }).shape)}`;
  }
}

/** The schedule of a plan: constant without arrivals, else its shape's. Throws ArrivalsError on a bad one. */
export function arrivalSchedule(p: ScheduleInput): ArrivalSchedule {
  const windowUs = Math.round(p.seconds * 1e6);
  const r = p.rate / p.batch;
  if (p.arrivals === null) return new ConstantSchedule(r, windowUs);
  const why = arrivalsProblem(p.arrivals, p.rate, p.batch, p.seconds);
  if (why) throw new ArrivalsError(why);
  const a = p.arrivals;
  switch (a.shape) {
    case 'poisson':
      return new PoissonSchedule(r, a.seed, windowUs);
    case 'ramp':
      return new AnalyticSchedule(rampCurve(r, a.to / p.batch, a.over), windowUs);
    case 'spike':
      return new AnalyticSchedule(spikeCurve(r, a.peak / p.batch, a.at, a.for), windowUs);
    case 'diurnal':
      return new AnalyticSchedule(diurnalCurve(r, a.max / p.batch, a.period), windowUs);
    case 'trace':
      return new TraceSchedule(a.gaps_us, windowUs);
  }
}

/**
 * Requests a schedule intends in each second [0, ceil(window)): what must be delivered there. In
 * order of k, one pass (the schedule's times increase, so each second is a run of k).
 */
export function schedulePerSecond(s: ArrivalSchedule, seconds: number): Int32Array {
  const out = new Int32Array(seconds);
  for (let k = 0; k < s.count; k++) {
    const sec = Math.floor(s.at(k) / 1e6);
    if (sec < seconds) out[sec]++;
  }
  return out;
}

/** The offered rate over time in requests/s (for a page, a check): what the shape asks for at t s. */
export function rateAt(p: ScheduleInput, t: number): number {
  const r = p.rate / p.batch;
  const a = p.arrivals;
  if (!a || a.shape === 'poisson') return r;
  if (a.shape === 'ramp') return t >= a.over ? a.to / p.batch : r + ((a.to / p.batch - r) * t) / a.over;
  if (a.shape === 'spike') return t >= a.at && t < a.at + a.for ? a.peak / p.batch : r;
  if (a.shape === 'diurnal') return r + ((a.max / p.batch - r) * (1 - Math.cos((2 * Math.PI * t) / a.period))) / 2;
  return NaN; // a trace has no rate of its own: count its requests per second (schedulePerSecond)
}

// ---- constant: the protocol's schedule ----

/** Request k at floor(k x 1e6 / r) µs: the generator's formula since the first stream (stream-plan.ts). */
export class ConstantSchedule implements ArrivalSchedule {
  readonly count: number;
  constructor(
    readonly rate: number,
    windowUs: number,
  ) {
    let n = Math.ceil((windowUs * rate) / 1e6);
    while (n > 0 && this.at(n - 1) >= windowUs) n--;
    while (this.at(n) < windowUs) n++;
    this.count = n;
  }
  at(k: number): number {
    return Math.floor((k * 1e6) / this.rate);
  }
  indexOf(t: number): number {
    const guess = Math.floor((t * this.rate) / 1e6);
    for (let n = Math.max(0, guess - 2); n <= guess + 2; n++) if (n < this.count && this.at(n) === t) return n;
    return -1;
  }
}

// ---- analytic shapes: an expected count and its inverse ----

/**
 * Λ(t): requests expected by t µs; inverse(k): the t (µs) with Λ(t) = k. Both increasing. Kept in µs,
 * with the rates' divisions last, so a time that is whole on paper (a spike's edge, 2 s + 1 / 500 s)
 * is whole in floating point too (2,002,000 µs, not 2,001,999.9999).
 */
export interface CountCurve {
  count(tUs: number): number;
  inverse(k: number): number;
}

class AnalyticSchedule implements ArrivalSchedule {
  readonly count: number;
  constructor(
    private readonly curve: CountCurve,
    windowUs: number,
  ) {
    let n = Math.max(0, Math.ceil(curve.count(windowUs)));
    while (n > 0 && this.at(n - 1) >= windowUs) n--;
    while (this.at(n) < windowUs) n++;
    this.count = n;
  }
  at(k: number): number {
    return Math.floor(this.curve.inverse(k));
  }
  indexOf(t: number): number {
    if (t < 0) return -1;
    const guess = Math.floor(this.curve.count(t));
    for (let n = Math.max(0, guess - 2); n <= guess + 2 && n < this.count; n++) if (this.at(n) === t) return n;
    return -1;
  }
}

/**
 * Linear from r0 to r1 requests/s over `over` s, then r1. Λ(t) = r0 t + (r1 - r0) t² / (2 over) on
 * the ramp (t in s); its inverse is the root t = 2k / (r0 + sqrt(r0² + 2 (r1 - r0) k / over)), the
 * form without a cancellation (and without a division by r1 - r0, so a flat ramp is exact too).
 */
export function rampCurve(r0: number, r1: number, over: number): CountCurve {
  const slope = (r1 - r0) / over;
  const atEnd = r0 * over + (slope * over * over) / 2;
  const overUs = over * 1e6;
  return {
    count: (tUs) => {
      const t = tUs / 1e6;
      return t <= over ? r0 * t + (slope * t * t) / 2 : atEnd + r1 * (t - over);
    },
    inverse: (k) => {
      if (k <= 0) return 0;
      if (k >= atEnd) return overUs + ((k - atEnd) * 1e6) / r1;
      return (2e6 * k) / (r0 + Math.sqrt(Math.max(0, r0 * r0 + 2 * slope * k)));
    },
  };
}

/** r requests/s, `peak` within [at, at + len) s, r again after. */
export function spikeCurve(r: number, peak: number, at: number, len: number): CountCurve {
  const k1 = r * at; // requests before the spike
  const k2 = k1 + peak * len; // ... and by its end
  const atUs = at * 1e6;
  const endUs = (at + len) * 1e6;
  return {
    count: (tUs) => (tUs < atUs ? (r * tUs) / 1e6 : tUs < endUs ? k1 + (peak * (tUs - atUs)) / 1e6 : k2 + (r * (tUs - endUs)) / 1e6),
    inverse: (k) => (k < k1 ? (k * 1e6) / r : k < k2 ? atUs + ((k - k1) * 1e6) / peak : endUs + ((k - k2) * 1e6) / r),
  };
}

/**
 * A raised cosine from `lo` (t = 0) to `hi` (t = period / 2) requests/s: rate(t) = m - a cos(2πt/P),
 * m = (lo + hi) / 2, a = (hi - lo) / 2; Λ(t) = m t - a P sin(2πt/P) / 2π. Inverted by Newton's method
 * kept inside the bracket that |Λ(t) - m t| <= a P / 2π gives (rate >= lo > 0: Λ strictly increases).
 */
export function diurnalCurve(lo: number, hi: number, period: number): CountCurve {
  const m = (lo + hi) / 2;
  const a = (hi - lo) / 2;
  const w = (2 * Math.PI) / period;
  const countS = (t: number) => m * t - (a * Math.sin(w * t)) / w;
  return {
    count: (tUs) => countS(tUs / 1e6),
    inverse: (k) => {
      if (k <= 0) return 0;
      const spread = a / w;
      let lo_ = Math.max(0, (k - spread) / m);
      let hi_ = (k + spread) / m;
      let t = k / m;
      for (let i = 0; i < 100; i++) {
        const f = countS(t) - k;
        if (f === 0) return t * 1e6;
        if (f > 0) hi_ = t;
        else lo_ = t;
        const next = t - f / (m - a * Math.cos(w * t));
        // A Newton step that leaves the bracket is replaced by bisection.
        const t2 = next >= lo_ && next <= hi_ ? next : (lo_ + hi_) / 2;
        // 0.1 ns: far below the µs a time is floored to (the same steps give the same bits on every host).
        if (Math.abs(t2 - t) < 1e-10 || hi_ - lo_ < 1e-10) return t2 * 1e6;
        t = t2;
      }
      return t * 1e6;
    },
  };
}

// ---- poisson: a seeded running sum ----

/** A uniform draw in (0, 1) from (seed, k): never 0, so its log is finite. */
const unit = (seed: number, k: number) => (hash32(seed, k) + 0.5) / 4294967296;

/**
 * Request 0 at 0, then exponential gaps of mean 1 / r s, gap k = -ln(u_k) / r with u_k from
 * hash32(seed, k). Times are the floor of the running sum in µs, raised by 1 µs where two would
 * coincide (a gap under 1 µs: the stream's rows are keyed by intended time, so a schedule never repeats
 * one). In order, O(1) per k; looked up by time, the times are materialised once.
 */
export class PoissonSchedule implements ArrivalSchedule {
  readonly count: number;
  private cursorK = 0;
  private cursorSum = 0;
  private cursorAt = 0;
  private all: Float64Array | null = null;

  constructor(
    private readonly rate: number,
    private readonly seed: number,
    windowUs: number,
  ) {
    let n = 0;
    while (this.at(n) < windowUs) n++;
    this.count = n;
    this.rewind();
  }

  private rewind(): void {
    this.cursorK = 0;
    this.cursorSum = 0;
    this.cursorAt = 0;
  }

  at(k: number): number {
    if (this.all !== null && k < this.all.length) return this.all[k];
    if (k < this.cursorK) this.rewind();
    while (this.cursorK < k) {
      this.cursorK++;
      this.cursorSum += -Math.log(unit(this.seed, this.cursorK)) / this.rate;
      this.cursorAt = Math.max(this.cursorAt + 1, Math.floor(this.cursorSum * 1e6));
    }
    return this.cursorAt;
  }

  indexOf(t: number): number {
    if (this.all === null) {
      const all = new Float64Array(this.count);
      this.rewind();
      for (let k = 0; k < this.count; k++) all[k] = this.at(k);
      this.all = all;
    }
    return bisect(this.all, t);
  }
}

// ---- trace: recorded instants ----

export class TraceSchedule implements ArrivalSchedule {
  readonly count: number;
  private readonly times: Float64Array;
  constructor(gapsUs: readonly number[], windowUs: number) {
    const times = new Float64Array(gapsUs.length);
    let t = 0;
    let n = 0;
    for (let i = 0; i < gapsUs.length; i++) {
      t += gapsUs[i];
      if (t >= windowUs) break;
      times[n++] = t;
    }
    this.times = times.subarray(0, n);
    this.count = n;
  }
  at(k: number): number {
    return this.times[k];
  }
  indexOf(t: number): number {
    return bisect(this.times, t);
  }
}

function bisect(a: Float64Array, t: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = a[mid];
    if (v === t) return mid;
    if (v < t) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** A short human description of a plan's arrivals ("spike to 5000 ev/s at 10 s for 30 s"). */
export function describeArrivals(a: Arrivals | null, rate: number): string {
  if (!a) return `constant ${rate} ev/s`;
  switch (a.shape) {
    case 'poisson':
      return `poisson, mean ${rate} ev/s (seed ${a.seed})`;
    case 'ramp':
      return `ramp ${rate} -> ${a.to} ev/s over ${a.over} s`;
    case 'spike':
      return `spike ${rate} -> ${a.peak} ev/s at ${a.at} s for ${a.for} s`;
    case 'diurnal':
      return `diurnal ${rate}..${a.max} ev/s, period ${a.period} s`;
    case 'trace':
      return `trace of ${a.gaps_us.length} requests at speed ${a.speed}`;
  }
}

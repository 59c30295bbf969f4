// A recorded trace, read into the gaps of a `trace` schedule (arrivals.ts). Pure: the text in, the
// gaps out (the caller reads the file). Two formats:
// - `offsets`: one time per line, milliseconds since the trace's start (decimals allowed: 12.345 is
//   12,345 µs); blank lines and lines starting with # are skipped. Times must not go backwards.
// - `k6`: the output of `k6 run --out json=FILE` (one JSON object a line): each `Point` of the
//   `http_reqs` metric is one request, at its `data.time` (RFC 3339 with up to nanoseconds and a zone,
//   as k6 writes it). k6 stamps a request's samples when it ends, so the replay offers requests at the
//   instants the recorded ones completed: the shape of the recorded traffic, not its exact starts.
//   Points may come out of order (k6 flushes by metric bucket): they are sorted.
// The first request is at 0; every time is divided by `speed` (2: twice as fast) and floored to µs.
// Two requests that land on the same µs are 1 µs apart (the stream keys a row by its intended time);
// a trace so dense that this moves a request more than MAX_SHIFT_US from its recorded time is refused.
import { MAX_TRACE_REQUESTS } from './arrivals';

export type TraceFormat = 'offsets' | 'k6';
export const TRACE_FORMATS: readonly TraceFormat[] = ['offsets', 'k6'];

/** How far the 1-µs separation may move a request from its recorded time (the trace's own promise). */
export const MAX_SHIFT_US = 1000;

export class TraceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TraceError';
  }
}

/** The trace's request times in µs since its first (unscaled, sorted), from its text. */
export function traceTimesUs(text: string, format: TraceFormat): number[] {
  const out = format === 'k6' ? k6Times(text) : offsetTimes(text);
  if (out.length === 0) throw new TraceError(format === 'k6' ? 'the k6 export holds no http_reqs point: export with `k6 run --out json=FILE`' : 'the trace holds no time: one offset in ms a line');
  if (out.length > MAX_TRACE_REQUESTS) throw new TraceError(`the trace holds ${out.length} requests, at most ${MAX_TRACE_REQUESTS.toLocaleString('en-US')} are replayed: cut it`);
  const t0 = out[0];
  return out.map((t) => t - t0);
}

/** The gaps (µs) of a `trace` schedule: times / speed, floored, separated by >= 1 µs. */
export function traceGapsUs(timesUs: readonly number[], speed: number): number[] {
  if (!(Number.isFinite(speed) && speed > 0 && speed <= 1000)) throw new TraceError(`speed must be within (0, 1000] (2 replays the trace twice as fast), got ${speed}`);
  const gaps = new Array<number>(timesUs.length);
  let prev = -1;
  for (let i = 0; i < timesUs.length; i++) {
    const want = Math.floor(timesUs[i] / speed);
    const t = Math.max(want, prev + 1);
    if (t - want > MAX_SHIFT_US) throw new TraceError(`request ${i} of the trace would leave ${t - want} µs after its recorded time (too many requests within one µs at speed ${speed}): lower the speed`);
    gaps[i] = i === 0 ? t : t - prev;
    prev = t;
  }
  return gaps;
}

function offsetTimes(text: string): number[] {
  const out: number[] = [];
  const lines = text.split('\n');
  let prev = -Infinity;
  for (let i = 0; i < lines.length; i++) {
    const s = lines[i].trim();
    if (s === '' || s.startsWith('#')) continue;
    if (!/^\d+(\.\d+)?$/.test(s)) throw new TraceError(`line ${i + 1}: '${s.slice(0, 40)}' is not an offset in ms (a number >= 0, e.g. 12.5)`);
    const us = Math.round(Number(s) * 1000);
    if (us < prev) throw new TraceError(`line ${i + 1}: ${s} ms is before the line above it: a trace's offsets do not go backwards`);
    prev = us;
    out.push(us);
  }
  return out;
}

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/** Microseconds since the epoch of an RFC 3339 time (k6 writes nanoseconds; µs are kept). */
export function rfc3339Us(s: string): number {
  const m = RFC3339.exec(s);
  const ms = m ? Date.parse(`${m[1]}${m[3]}`) : NaN;
  if (!m || Number.isNaN(ms)) throw new TraceError(`'${s}' is not an RFC 3339 time like 2017-05-09T14:34:45.625742514+02:00`);
  const frac = (m[2] ?? '').padEnd(6, '0').slice(0, 6);
  return ms * 1000 + Number(frac);
}

function k6Times(text: string): number[] {
  const out: number[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const s = lines[i].trim();
    if (s === '') continue;
    let o: { type?: unknown; metric?: unknown; data?: { time?: unknown } };
    try {
      o = JSON.parse(s) as typeof o;
    } catch {
      throw new TraceError(`line ${i + 1} of the k6 export is not JSON: give the file of \`k6 run --out json=FILE\` (one object a line)`);
    }
    if (o.type !== 'Point' || o.metric !== 'http_reqs') continue;
    if (typeof o.data?.time !== 'string') throw new TraceError(`line ${i + 1}: an http_reqs point without data.time`);
    try {
      out.push(rfc3339Us(o.data.time));
    } catch (err) {
      throw new TraceError(`line ${i + 1}: ${(err as Error).message}`);
    }
  }
  return out.sort((a, b) => a - b);
}

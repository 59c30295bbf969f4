// The arrivals of a shaped schedule as the calibration server saw them (issue 35): did the requests
// reach the server when the schedule said? Pure: the server's per-request arrival times (its own
// monotonic clock, ms: calibration-server.ts) and the plan's schedule (arrivals.ts) in, figures out.
//
// The server's clock and the generator's do not share an origin (two processes), so arrivals are
// aligned first: offset = the median over requests of (arrival - intended); a request's error is then
// arrival - offset - intended, the lateness relative to the typical request (a send tick is ~0.5 ms at
// the median: generator.ts). The edges use the on-time level instead (below).
// - Poisson: the gaps between consecutive requests' arrivals, tested against Exp(rate) with the KS
//   test (ks-exponential.ts), within a band of ARRIVAL_BAND_US for the send tick.
// - Spike (or any edge of a schedule): the arrivals are aligned on the generator's on-time level
//   (offset = the 5th percentile of arrival - intended: the requests sent at their tick), and for each
//   edge E the EARLIEST error among the EDGE_REQUESTS requests just before it and just after it must
//   be within EDGE_TOLERANCE_US: some request on each side reached the server within a millisecond of
//   its schedule, so the rate changed at E to within a millisecond, wherever the host's other work
//   made the rest of them late. (The median of 9, then of 25, each side, relative to the run's median
//   lag, moved 1-2.7 ms with the generator's backlog at the spike's end on a host at load average
//   17-20, while every other case passed: a measure of the host, not of where the edge is.) And the
//   requests the server saw within each phase (by aligned arrival) are counted against the schedule's.
import type { ArrivalSchedule } from './arrivals';
import { ksExponential, type KsResult } from './ks-exponential';

/** One ingest request as the server saw it: its number k and arrival (server clock, ms). */
export interface ArrivalTruth {
  request: number;
  arrival: number;
}

/**
 * The KS band: a gap between two arrivals is off by the difference of their send lags, each within a
 * tick (1 ms: generator.ts sends a millisecond's requests together) plus the host's wake-up noise; two
 * ticks hold both sides.
 */
export const ARRIVAL_BAND_US = 2000;
/** How far the server may see an edge of the schedule from where it is: the millisecond. */
export const EDGE_TOLERANCE_US = 1000;
/** Requests each side of an edge whose earliest places it: 25 (250 ms at calibration's base rate, 50 ms at its peak). */
export const EDGE_REQUESTS = 25;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
}

/** Arrivals in µs by request number (requests the server saw once; a request number out of the schedule is left out). */
function byRequest(truth: readonly ArrivalTruth[], s: ArrivalSchedule): Map<number, number> {
  const m = new Map<number, number>();
  for (const t of truth) if (t.request >= 0 && t.request < s.count && !m.has(t.request)) m.set(t.request, t.arrival * 1000);
  return m;
}

/** µs to add to the schedule's times to put them on the server's clock (the median of arrival - intended). */
export function serverOffsetUs(truth: readonly ArrivalTruth[], s: ArrivalSchedule): number {
  const m = byRequest(truth, s);
  return median([...m].map(([k, a]) => a - s.at(k)));
}

/** The KS test of the gaps between consecutive requests' arrivals at the server (pairs k, k+1 both seen). */
export function serverGapTest(truth: readonly ArrivalTruth[], s: ArrivalSchedule, requestRate: number): KsResult {
  const m = byRequest(truth, s);
  const gaps: number[] = [];
  for (const [k, a] of m) {
    const next = m.get(k + 1);
    if (next !== undefined) gaps.push(Math.max(0, next - a));
  }
  return ksExponential(gaps, requestRate, ARRIVAL_BAND_US);
}

export interface EdgeFigure {
  /** The edge, µs since the start (the schedule's time). */
  edge_us: number;
  /** The earliest error among the requests just before and just after it (µs; + = late). */
  before_us: number;
  after_us: number;
  /** Both within EDGE_TOLERANCE_US. */
  ok: boolean;
}

/** The q-quantile (0..1, nearest rank) of xs. */
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] : NaN;
}

/** The on-time level of arrival - intended (its 5th percentile): the requests the generator sent at their tick. */
export const ON_TIME_QUANTILE = 0.05;

/** Where the server saw each edge of the schedule (see the file's header). */
export function serverEdges(truth: readonly ArrivalTruth[], s: ArrivalSchedule, edgesUs: readonly number[]): EdgeFigure[] {
  const m = byRequest(truth, s);
  const offset = quantile([...m].map(([k, a]) => a - s.at(k)), ON_TIME_QUANTILE);
  const err = (k: number) => {
    const a = m.get(k);
    return a === undefined ? NaN : a - offset - s.at(k);
  };
  return edgesUs.map((e) => {
    let first = 0;
    while (first < s.count && s.at(first) < e) first++;
    const side = (from: number, to: number) => {
      let best = NaN;
      for (let k = Math.max(0, from); k < Math.min(s.count, to); k++) {
        const e = err(k);
        if (!Number.isNaN(e) && (Number.isNaN(best) || e < best)) best = e;
      }
      return best;
    };
    const before = side(first - EDGE_REQUESTS, first);
    const after = side(first, first + EDGE_REQUESTS);
    return { edge_us: e, before_us: before, after_us: after, ok: Math.abs(before) <= EDGE_TOLERANCE_US && Math.abs(after) <= EDGE_TOLERANCE_US };
  });
}

/** Requests whose aligned arrival lies in each [from, to) µs, beside what the schedule put there. */
export function serverPhaseCounts(truth: readonly ArrivalTruth[], s: ArrivalSchedule, phases: ReadonlyArray<[number, number]>): Array<{ from_us: number; to_us: number; seen: number; scheduled: number }> {
  const m = byRequest(truth, s);
  const offset = median([...m].map(([k, a]) => a - s.at(k)));
  return phases.map(([from, to]) => {
    let seen = 0;
    let scheduled = 0;
    for (const [, a] of m) if (a - offset >= from && a - offset < to) seen++;
    for (let k = 0; k < s.count; k++) if (s.at(k) >= from && s.at(k) < to) scheduled++;
    return { from_us: from, to_us: to, seen, scheduled };
  });
}

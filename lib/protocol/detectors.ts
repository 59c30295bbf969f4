// Tail detectors, two-grained (the protocol's "What this leaves" explains why both exist):
//
// - Windows, on 10-s buckets: >= 2 consecutive buckets whose p99 is > 3x the run's median 10-s bucket
//   p99. This rule alone can miss a single frozen second in five or six, depending on where the stall
//   falls against the bucket edges, so:
// - Freeze-seconds, on 1-s buckets: a second whose worst request took > 150 ms AND in which > 10 % of
//   the requests took > 50 ms. Reported with their count and cadence.
//
// A bucket without latency samples (nothing sent that second or ten) has no p99: it is neither above
// the window threshold nor a freeze-second, and it ends a window. Such a bucket only exists when
// every request was dropped or nothing was offered, and drops fail the gate on their own.
import type { BucketStat } from './buckets';
import { median } from './percentile';

export const WINDOW_FACTOR = 3;
export const WINDOW_MIN_BUCKETS = 2;
export const FREEZE_WORST_US = 150_000;
export const FREEZE_SLOW_US = 50_000;
export const FREEZE_SLOW_FRACTION = 0.1;

/** Median of the p99s of the buckets that have samples; null when none has. */
export function medianBucketP99(tenSecond: readonly BucketStat[]): number | null {
  const p99s = tenSecond.filter((b) => b.p99_us !== null).map((b) => b.p99_us as number);
  return p99s.length ? median(p99s) : null;
}

/**
 * Windows as [first bucket start_s, last bucket start_s]: maximal runs of >= 2 consecutive 10-s
 * buckets with p99 strictly above WINDOW_FACTOR x the median bucket p99.
 */
export function windows(tenSecond: readonly BucketStat[], medianP99: number | null): Array<[number, number]> {
  if (medianP99 === null) return [];
  const limit = WINDOW_FACTOR * medianP99;
  const out: Array<[number, number]> = [];
  let runStart = -1;
  let runLen = 0;
  const close = (lastIdx: number) => {
    if (runLen >= WINDOW_MIN_BUCKETS) out.push([tenSecond[runStart].start_s, tenSecond[lastIdx].start_s]);
    runStart = -1;
    runLen = 0;
  };
  for (let i = 0; i < tenSecond.length; i++) {
    const p = tenSecond[i].p99_us;
    if (p !== null && p > limit) {
      if (runStart < 0) runStart = i;
      runLen++;
    } else if (runStart >= 0) close(i - 1);
  }
  if (runStart >= 0) close(tenSecond.length - 1);
  return out;
}

export function isFreezeSecond(b: BucketStat): boolean {
  return b.samples > 0 && (b.max_us as number) > FREEZE_WORST_US && b.over_50ms > FREEZE_SLOW_FRACTION * b.samples;
}

/** Indices (start_s) of the freeze-seconds among 1-s buckets, ascending. */
export function freezeSeconds(perSecond: readonly BucketStat[]): number[] {
  return perSecond.filter(isFreezeSecond).map((b) => b.start_s);
}

/** Maximal runs of consecutive freeze-seconds, as [first, last]: one stall of 3 s is one episode. */
export function freezeEpisodes(seconds: readonly number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const s of seconds) {
    const last = out[out.length - 1];
    if (last && s === last[1] + 1) last[1] = s;
    else out.push([s, s]);
  }
  return out;
}

/**
 * Cadence: the median interval, in seconds, between the starts of consecutive freeze episodes
 * ("recurring every ~30 s"); null with fewer than two episodes. Episodes rather than single seconds,
 * so an 11-second freeze does not read as a 1-second rhythm.
 */
export function freezeCadenceS(seconds: readonly number[]): number | null {
  const eps = freezeEpisodes(seconds);
  if (eps.length < 2) return null;
  const gaps: number[] = [];
  for (let i = 1; i < eps.length; i++) gaps.push(eps[i][0] - eps[i - 1][0]);
  return median(gaps);
}

// Time buckets of one scenario's requests, by INTENDED time: a request belongs to the second of its
// intended_us, whatever happened to it afterwards. That is what keeps a stall honest: the requests
// that waited through it are charged to the second they were meant to go out in.
//
// Latency samples are the scenario's rows that were sent (status != -1), failures included: a
// timed-out or 5xx request took that long too, and excluding errors would hide a slow failure. The
// latency is done - sent ('service'), or done - intended ('corrected', coordinated-omission corrected).
//
// Every second from 0 to the run's last one is a bucket, including empty seconds (samples 0, no
// percentiles): a second in which nothing completed must not silently vanish from the series.
import { percentileOfSorted } from './percentile';
import { INGEST, SampleColumns, STATUS_DROPPED, isOk } from './sample-row';

export type LatencyKind = 'service' | 'corrected';

/** Latencies of one scenario grouped by 1-s bucket, ascending within each bucket. */
export interface SecondGroups {
  durationS: number;
  /** values[offsets[s] .. offsets[s+1]) are second s's latencies (µs), sorted. */
  offsets: Int32Array;
  values: Float64Array;
  offered: Int32Array;
  sent: Int32Array;
  ok: Int32Array;
  dropped: Int32Array;
}

export interface BucketStat {
  /** First second of the bucket (0-based, from the start of the repeat). */
  start_s: number;
  /** Seconds it covers: the width asked for, less for a partial last bucket. */
  width_s: number;
  /** Rows whose intended time falls in the bucket: sent + dropped. */
  offered: number;
  sent: number;
  ok: number;
  failed: number;
  dropped: number;
  /** Latency samples (= sent). */
  samples: number;
  /** µs, nearest-rank; null for a bucket without samples. */
  p50_us: number | null;
  p99_us: number | null;
  max_us: number | null;
  /** Samples with latency strictly over 50 ms (the freeze-second rule). */
  over_50ms: number;
}

/**
 * The run's length in whole seconds as the stream shows it, for a stream without a plan: the second of
 * the latest intended time of an ingest row, plus one (of any row when there is no ingest row). The
 * probe does not stretch it: a probe row after the last ingest row would add seconds with no ingest
 * in them to the drift's last third. A stream with a plan takes the plan's length (stream-plan.ts).
 */
export function streamDurationS(cols: SampleColumns): number {
  let max = -1;
  let any = -1;
  for (let i = 0; i < cols.length; i++) {
    const t = cols.intended[i];
    if (t > any) any = t;
    if (cols.scenario[i] === INGEST && t > max) max = t;
  }
  if (max < 0) max = any;
  return max < 0 ? 0 : Math.floor(max / 1e6) + 1;
}

/** Groups one scenario's rows into 1-s buckets [0, durationS). Rows past durationS go in the last one. */
export function groupBySecond(cols: SampleColumns, scenarioCode: number, durationS: number, kind: LatencyKind = 'service'): SecondGroups {
  const n = Math.max(0, durationS);
  const offered = new Int32Array(n);
  const sent = new Int32Array(n);
  const ok = new Int32Array(n);
  const dropped = new Int32Array(n);
  const sec = (i: number) => Math.min(n - 1, Math.floor(cols.intended[i] / 1e6));
  // Pass 1: counts per second.
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== scenarioCode) continue;
    if (n === 0) throw new RangeError('groupBySecond: the stream has rows but the duration given is 0 s');
    const s = sec(i);
    offered[s]++;
    const st = cols.status[i];
    if (st === STATUS_DROPPED) dropped[s]++;
    else {
      sent[s]++;
      if (isOk(st)) ok[s]++;
    }
  }
  const offsets = new Int32Array(n + 1);
  for (let s = 0; s < n; s++) offsets[s + 1] = offsets[s] + sent[s];
  // Pass 2: place latencies, then sort each second's slice.
  const values = new Float64Array(offsets[n]);
  const fill = offsets.slice(0, n);
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== scenarioCode || cols.status[i] === STATUS_DROPPED) continue;
    const s = sec(i);
    values[fill[s]++] = cols.done[i] - (kind === 'service' ? cols.sent[i] : cols.intended[i]);
  }
  for (let s = 0; s < n; s++) if (sent[s] > 1) values.subarray(offsets[s], offsets[s + 1]).sort();
  return { durationS: n, offsets, values, offered, sent, ok, dropped };
}

/** All latencies of seconds [fromS, toS), ascending (a fresh array). */
export function latenciesOfSeconds(g: SecondGroups, fromS: number, toS: number): Float64Array {
  const a = Math.max(0, Math.min(fromS, g.durationS));
  const b = Math.max(a, Math.min(toS, g.durationS));
  const out = g.values.slice(g.offsets[a], g.offsets[b]);
  if (b - a > 1) out.sort();
  return out;
}

/** Buckets of widthS seconds (1 or 10 in the protocol); the last one may be partial (its width_s says so). */
export function buckets(g: SecondGroups, widthS: number): BucketStat[] {
  if (!(Number.isInteger(widthS) && widthS >= 1)) throw new RangeError(`bucket width must be a whole number of seconds >= 1, got ${widthS}`);
  const out: BucketStat[] = [];
  for (let start = 0; start < g.durationS; start += widthS) {
    const end = Math.min(g.durationS, start + widthS);
    const lat = widthS === 1 ? g.values.subarray(g.offsets[start], g.offsets[end]) : latenciesOfSeconds(g, start, end);
    let offered = 0;
    let sent = 0;
    let ok = 0;
    let dropped = 0;
    for (let s = start; s < end; s++) {
      offered += g.offered[s];
      sent += g.sent[s];
      ok += g.ok[s];
      dropped += g.dropped[s];
    }
    out.push(statOf(start, end - start, offered, sent, ok, dropped, lat));
  }
  return out;
}

function statOf(start: number, width: number, offered: number, sent: number, ok: number, dropped: number, sorted: Float64Array): BucketStat {
  const n = sorted.length;
  return {
    start_s: start,
    width_s: width,
    offered,
    sent,
    ok,
    failed: sent - ok,
    dropped,
    samples: n,
    p50_us: n ? percentileOfSorted(sorted, 50) : null,
    p99_us: n ? percentileOfSorted(sorted, 99) : null,
    max_us: n ? sorted[n - 1] : null,
    over_50ms: n - upperBound(sorted, 50_000),
  };
}

/** Number of values <= x in an ascending array. */
export function upperBound(sorted: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The buckets a per-bucket figure (worst 10-s p99, median bucket p99, windows) is taken over: the
 * full-width ones. A partial last bucket (a run of 31 s has a 1-s one) holds a few seconds' samples,
 * and its p99 is not a 10-s p99: it stays in the series but is not judged as one. A run shorter than
 * one bucket has only its partial bucket, which is then the whole run and is used.
 */
export function fullBuckets(bs: readonly BucketStat[], widthS: number): readonly BucketStat[] {
  const full = bs.filter((b) => b.width_s === widthS);
  return full.length ? full : bs;
}

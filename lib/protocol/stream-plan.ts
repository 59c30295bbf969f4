// The plan a sample stream was measured under, and the schedule it implies. Pure: no I/O (the
// generator writes the plan into the stream, lib/loadgen/sample-writer.ts; the reader reads it back,
// lib/loadgen/sample-reader.ts).
//
// Without its plan a stream cannot be judged for delivery: a stream with no rows in seconds 10-19, or
// one that keeps every 10th request, or one that stops at 450 s of a configured 600 s, has nothing in
// it that says so. So the generator writes its schedule with the samples: a first record
//   #plan {"v":1,"mode":"open","rate":1000,"batch":10,"seconds":600,"probe_rate":5,"run_tag":"..."}
// before the CSV header, and, when it closes the stream, a last record
//   #end {"cut_short":false,"reason":null}
// Both lie inside the one gzip member the reader checks (CRC-32, length), so they are sealed with the
// rows. A stream without a `#plan` is an older one (or another tool's): it is read as before, and its
// delivery is not judged unless the caller gives the plan (`rig analyze --rate R --seconds S`).
//
// The schedule is the generator's own (lib/loadgen/generator.ts): request n of the ingest scenario is
// intended at floor(n x 1e6 / (rate / batch)) µs, probe request k at floor(k x 1e6 / probe_rate) µs
// with scenario PROBE_SCENARIOS[k mod 3], for every time before `seconds`. A plan therefore names every
// ingest row a stream may hold, whoever gives it: one plan, one strictness (issue 34). A plan given by
// the flags (`rig analyze --rate --seconds`) is held to the same schedule as the stream's own, or a
// stream of 3,000 requests judged against a flags plan of 300 would read "delivered 330 of 300" and
// pass; only its probe rate is unknown (null), so probe rows are held to its window alone.
//
// A plan may carry `arrivals` (issue 35: poisson, ramp, spike, diurnal, trace; arrivals.ts): then
// ingest request n is at the shape's time instead. It may carry a load node's `share` (issue 37,
// node-share.ts: the stream holds only the requests k with k mod nodes = node, probe requests alike)
// or, on a merge of N nodes' streams, `nodes`: never both. Either, or arrivals with either, makes the
// record version 2, `{"v":2,...,"arrivals":{...},"share":{"node":i,"nodes":N}}`. The constant schedule
// from one node is written as version 1, exactly as before, so its stream is byte-identical to
// today's; a reader that knows only version 1 refuses a version-2 stream rather than judge its rows
// against the wrong schedule. A row is held to the shaped schedule first (its index k by its time),
// then to the share (k mod nodes).
//
// A plan may also carry `tenants` and `duplicates` (issue 35, item 2; clients.ts), version 2 too: they
// change no time of the schedule, only which tenant sends request k and which request's keys it repeats.
//
// And `batch_sizes` and `timestamps` (issue 35, item 2; batch-sizes.ts, client-timestamps.ts), version 2
// too: how many events request k carries (its row's `events` is held to it) and how each event is
// stamped. Neither changes a time of the schedule.
import { arrivalSchedule, arrivalsProblem, schedulePerSecond, type ArrivalSchedule, type Arrivals } from './arrivals';
import { PROBE_SCENARIOS, SCENARIOS, SampleFormatError, type SampleColumns, INGEST } from './sample-row';
import type { StreamPlan } from './stream-plan-types';
import { duplicatesProblem, tenantsProblem, type DuplicatesPlan, type TenantsPlan } from './clients';
import { batchSizesProblem, type BatchSizesPlan } from './batch-sizes';
import { timestampsProblem, type TimestampsPlan } from './client-timestamps';
import { owns, requestOf, shareCount, shareProblem, WHOLE, type NodeShare } from './node-share';

// The plan's shape lives in stream-plan-types.ts, which the row format's SampleColumns can import
// without importing this file back; it is re-exported here, where the plan's readers look for it.
export type { StreamPlan } from './stream-plan-types';

export const PLAN_RECORD = '#plan ';
export const END_RECORD = '#end ';
export const PLAN_VERSION = 1;
/**
 * The record's version when the plan carries arrivals (a shape other than constant), a load node's
 * share (`"share":{"node":i,"nodes":N}`, issue 37) or the merge of N nodes' streams (`"nodes":N`), or
 * arrivals with one of the two. A reader that knows only version 1 refuses it by its version, rather
 * than judge its rows against the wrong schedule (a shaped one, or a third of one).
 */
export const PLAN_VERSION_2 = 2;
/** Issue 35's name for version 2 (a plan with arrivals). */
export const PLAN_VERSION_ARRIVALS = PLAN_VERSION_2;
/** Issue 37's name for version 2 (a load node's share, or a merge of nodes). */
export const PLAN_VERSION_NODES = PLAN_VERSION_2;

export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanError';
  }
}

/** The `#plan` line (with its newline) the writer puts before the CSV header. */
export function formatPlanRecord(p: Pick<StreamPlan, 'mode' | 'rate' | 'batch' | 'seconds' | 'probe_rate' | 'run_tag' | 'arrivals' | 'share' | 'nodes' | 'tenants' | 'duplicates' | 'batch_sizes' | 'timestamps'>): string {
  const fields = { mode: p.mode, rate: p.rate, batch: p.batch, seconds: p.seconds, probe_rate: p.probe_rate, run_tag: p.run_tag };
  // Version 2 carries arrivals, then a node's share or a merge's node count (a share wins over a count).
  const shape = p.arrivals ? { arrivals: p.arrivals } : {};
  const split = p.share && p.share.nodes > 1 ? { share: { node: p.share.node, nodes: p.share.nodes } } : p.nodes !== undefined && p.nodes > 1 ? { nodes: p.nodes } : {};
  // The constant schedule from one node (no arrivals, no share, no merge): version 1, byte for byte the
  // record every earlier stream carries.
  // Tenants and duplicates (issue 35, item 2) ride after them, also version 2.
  // Batch sizes and client timestamps (issue 35, item 2) after those, version 2 as well.
  const clients = {
    ...(p.tenants ? { tenants: p.tenants } : {}),
    ...(p.duplicates ? { duplicates: p.duplicates } : {}),
    ...(p.batch_sizes ? { batch_sizes: p.batch_sizes } : {}),
    ...(p.timestamps ? { timestamps: p.timestamps } : {}),
  };
  if (!p.arrivals && !('share' in split) && !('nodes' in split) && Object.keys(clients).length === 0) return `${PLAN_RECORD}${JSON.stringify({ v: PLAN_VERSION, ...fields })}\n`;
  return `${PLAN_RECORD}${JSON.stringify({ v: PLAN_VERSION_2, ...fields, ...shape, ...split, ...clients })}\n`;
}

/** The `#end` line (with its newline) the writer puts after the last row when it closes the stream. */
export function formatEndRecord(cutShort: boolean, reason: string | null): string {
  return `${END_RECORD}${JSON.stringify({ cut_short: cutShort, reason: reason === null ? null : reason.slice(0, 200) })}\n`;
}

/**
 * The plan of a `#plan` record's JSON (the text after `#plan `), checked field by field: a record that
 * is not exactly one the writer makes is refused, never half-used. The stream is not cut short until
 * its `#end` record says so (parseEndRecord).
 */
export function parsePlanRecord(json: string): StreamPlan {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw new PlanError('the #plan record is not JSON');
  }
  if (typeof o !== 'object' || o === null) throw new PlanError('the #plan record is not a JSON object');
  if (o.v !== PLAN_VERSION && o.v !== PLAN_VERSION_2) throw new PlanError(`the #plan record has version ${String(o.v)}; this reader knows versions ${PLAN_VERSION} and ${PLAN_VERSION_2}`);
  const carries = o.arrivals !== undefined || o.share !== undefined || o.nodes !== undefined || o.tenants !== undefined || o.duplicates !== undefined || o.batch_sizes !== undefined || o.timestamps !== undefined;
  if (o.v === PLAN_VERSION && carries) throw new PlanError('the #plan record\'s version 1 carries no arrivals, share or nodes, nor tenants or duplicates, nor batch sizes or timestamps (a record with any is version 2)');
  const mode = o.mode;
  if (mode !== 'open' && mode !== 'closed') throw new PlanError(`the #plan record's mode must be 'open' or 'closed', got ${JSON.stringify(mode)}`);
  const plan: StreamPlan = {
    mode,
    rate: mode === 'open' ? (o.rate as number) : null,
    batch: o.batch as number,
    seconds: o.seconds as number,
    probe_rate: o.probe_rate as number,
    run_tag: typeof o.run_tag === 'string' ? o.run_tag : null,
    cut_short: false,
    cut_reason: null,
    source: 'stream',
  };
  if (o.v === PLAN_VERSION_2) {
    // Arrivals (a shaped schedule), and/or exactly one of a node's share or a merge of nodes.
    const share = o.share as { node?: unknown; nodes?: unknown } | undefined;
    if (!carries) throw new PlanError('the #plan record of version 2 must carry "arrivals" (a shaped schedule), "tenants", "duplicates", "batch_sizes", "timestamps" and/or exactly one of "share" (a load node\'s stream) or "nodes" (a merged stream); it carries none');
    if (share !== undefined && o.nodes !== undefined) throw new PlanError('the #plan record of version 2 must carry exactly one of "share" (a load node\'s stream) or "nodes" (a merged stream), not both');
    if (o.arrivals !== undefined) {
      if (typeof o.arrivals !== 'object' || o.arrivals === null) throw new PlanError("the #plan record's arrivals must be an object");
      plan.arrivals = o.arrivals as Arrivals;
    }
    if (share !== undefined) {
      if (typeof share !== 'object' || share === null) throw new PlanError('the #plan record\'s share must be {"node": i, "nodes": N}');
      const s = { node: share.node as number, nodes: share.nodes as number };
      const bad = shareProblem(s);
      if (bad || s.nodes < 2) throw new PlanError(`the #plan record's share: ${bad ?? `nodes must be at least 2, got ${s.nodes}`}`);
      plan.share = s;
    } else if (o.nodes !== undefined) {
      const n = o.nodes as number;
      if (!Number.isInteger(n) || n < 2 || n > 1024) throw new PlanError(`the #plan record's nodes must be a whole number within 2..1024, got ${String(o.nodes)}`);
      plan.nodes = n;
    }
    for (const key of ['tenants', 'duplicates', 'batch_sizes', 'timestamps'] as const) {
      const v = o[key];
      if (v === undefined) continue;
      if (typeof v !== 'object' || v === null) throw new PlanError(`the #plan record's ${key} must be an object`);
      if (mode !== 'open') throw new PlanError(`the #plan record's ${key} belong to a schedule: a closed loop has none`);
      if (key === 'tenants') plan.tenants = v as TenantsPlan;
      else if (key === 'duplicates') plan.duplicates = v as DuplicatesPlan;
      else if (key === 'batch_sizes') plan.batch_sizes = v as BatchSizesPlan;
      else plan.timestamps = v as TimestampsPlan;
    }
    if ((plan.share || plan.nodes) && mode !== 'open') throw new PlanError('the #plan record of version 2 must be an open loop: only a schedule is split over nodes');
  }
  const why = planProblem(plan);
  if (why) throw new PlanError(`the #plan record's ${why}`);
  return plan;
}

/** The `#end` record's JSON: whether the run was cut short, and why. */
export function parseEndRecord(json: string): { cut_short: boolean; reason: string | null } {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw new PlanError('the #end record is not JSON');
  }
  if (typeof o !== 'object' || o === null || typeof o.cut_short !== 'boolean') throw new PlanError('the #end record must say cut_short: true or false');
  return { cut_short: o.cut_short, reason: typeof o.reason === 'string' ? o.reason : null };
}

/** What is wrong with a plan's fields (naming the field), or null. */
export function planProblem(p: Pick<StreamPlan, 'mode' | 'rate' | 'batch' | 'seconds' | 'probe_rate' | 'arrivals' | 'share' | 'nodes' | 'tenants' | 'duplicates' | 'batch_sizes' | 'timestamps'>): string | null {
  // Each generator offers at most 100,000 requests/s: a node's share of the schedule, or each of the merged nodes'.
  const senders = p.share?.nodes ?? p.nodes ?? 1;
  if (!Number.isInteger(p.batch) || p.batch < 1 || p.batch > 1000) return `batch must be a whole number of events within 1..1000, got ${p.batch}`;
  if (!(typeof p.seconds === 'number' && Number.isFinite(p.seconds) && p.seconds > 0 && p.seconds <= 7 * 86_400)) return `seconds must be > 0 (at most 7 days), got ${p.seconds}`;
  if (p.mode === 'open' && !(typeof p.rate === 'number' && Number.isFinite(p.rate) && p.rate > 0 && p.rate / p.batch / senders <= 100_000)) {
    return `rate must be > 0 events per second (at most 100,000 requests/s${senders > 1 ? ' per load node' : ''}), got ${p.rate}`;
  }
  if (p.probe_rate !== null && !(typeof p.probe_rate === 'number' && Number.isFinite(p.probe_rate) && p.probe_rate >= 0 && p.probe_rate <= 1000)) {
    return `probe_rate must be within 0..1000, got ${p.probe_rate}`;
  }
  const clients =
    (p.tenants && tenantsProblem(p.tenants)) ||
    (p.duplicates && duplicatesProblem(p.duplicates)) ||
    (p.batch_sizes && batchSizesProblem(p.batch_sizes, p.batch)) ||
    (p.timestamps && timestampsProblem(p.timestamps));
  if (clients) return clients;
  if (p.arrivals) {
    if (p.mode !== 'open') return 'arrivals are a schedule: a closed loop has none';
    return arrivalsProblem(p.arrivals, p.rate as number, p.batch, p.seconds);
  }
  return null;
}

/**
 * A plan for a stream without its own, from the caller's flags (`rig analyze --rate R --batch B
 * --seconds S`): the same schedule as the generator's, so its rows are held to it exactly. The probe
 * rate is not a flag: null (unknown) holds probe rows to the window only.
 */
export function flagsPlan(rate: number, batch: number, seconds: number, probeRate: number | null = null): StreamPlan {
  const plan: StreamPlan = { mode: 'open', rate, batch, seconds, probe_rate: probeRate, run_tag: null, cut_short: false, cut_reason: null, source: 'flags' };
  const why = planProblem(plan);
  if (why) throw new PlanError(why);
  return plan;
}

/**
 * The plan of a campaign attempt whose stream predates the `#plan` record, from its load.json (written
 * by the repeat activity and sealed in the manifest with the stream): null when it lacks a field.
 */
export function evidencePlan(load: { mode?: 'open' | 'closed'; rate?: number; batch?: number; seconds?: number; run_tag?: string; cut_short?: boolean; cut_reason?: string }): StreamPlan | null {
  if (!load.mode || load.batch === undefined || load.seconds === undefined || (load.mode === 'open' && load.rate === undefined)) return null;
  const plan: StreamPlan = {
    mode: load.mode,
    rate: load.mode === 'open' ? (load.rate as number) : null,
    batch: load.batch,
    seconds: load.seconds,
    probe_rate: null,
    run_tag: load.run_tag ?? null,
    cut_short: load.cut_short ?? false,
    cut_reason: load.cut_reason ?? null,
    source: 'evidence',
  };
  return planProblem(plan) ? null : plan;
}

// ---- the schedule ----

/** The run's window in µs: every scheduled time is before it. */
export function windowUs(p: Pick<StreamPlan, 'seconds'>): number {
  return Math.round(p.seconds * 1e6);
}

/** The run's length in whole seconds: the 1-s buckets the plan covers (a 0.5-s warm-up is 1). */
export function planSeconds(p: Pick<StreamPlan, 'seconds'>): number {
  return Math.ceil(windowUs(p) / 1e6);
}

/** Requests per second of the ingest schedule (0 for a closed loop), computed as the generator does. */
export function requestRate(p: Pick<StreamPlan, 'mode' | 'rate' | 'batch'>): number {
  return p.mode === 'open' && p.rate !== null ? p.rate / p.batch : 0;
}

/** Intended time of request n of a schedule at `rate` requests per second (the generator's formula). */
export function scheduledUs(rate: number, n: number): number {
  return Math.floor((n * 1e6) / rate);
}

/** How many n >= 0 have scheduledUs(rate, n) < durationUs: the requests a schedule holds. */
export function countBefore(rate: number, durationUs: number): number {
  let n = Math.ceil((durationUs * rate) / 1e6);
  while (n > 0 && scheduledUs(rate, n - 1) >= durationUs) n--;
  while (scheduledUs(rate, n) < durationUs) n++;
  return n;
}

/** The request number whose intended time is exactly t, or -1 when no request of the schedule is at t. */
export function scheduleIndex(rate: number, t: number): number {
  const guess = Math.floor((t * rate) / 1e6);
  for (let n = Math.max(0, guess - 2); n <= guess + 2; n++) if (scheduledUs(rate, n) === t) return n;
  return -1;
}

/**
 * The plan's ingest schedule (arrivals.ts) when it carries arrivals; null for the constant schedule
 * (read through scheduledUs/countBefore/scheduleIndex, as always) and for a closed loop. The whole
 * schedule: a load node's share of it is requestOf(share, m) over it (node-share.ts).
 */
export function shapedSchedule(p: Pick<StreamPlan, 'mode' | 'rate' | 'batch' | 'seconds' | 'arrivals'>): ArrivalSchedule | null {
  if (p.mode !== 'open' || !p.arrivals || p.rate === null) return null;
  return arrivalSchedule({ rate: p.rate, batch: p.batch, seconds: p.seconds, arrivals: p.arrivals });
}

/**
 * Ingest requests the plan schedules in each second [0, planSeconds): what must be delivered there. A
 * load node's stream (its plan's share) counts only its own requests (node-share.ts), of the shaped
 * schedule when the plan carries arrivals.
 */
export function scheduledPerSecond(p: StreamPlan): Int32Array {
  const d = planSeconds(p);
  const share = p.share ?? WHOLE;
  const shaped = shapedSchedule(p);
  if (shaped) return sharePerSecond(shaped, share, d);
  const out = new Int32Array(d);
  const rate = requestRate(p);
  if (rate === 0) return out;
  const total = shareCount(share, countBefore(rate, windowUs(p)));
  // Second s holds the n with floor(n*1e6/rate) in [s*1e6, (s+1)*1e6): count the boundaries, not each n.
  let prev = 0;
  for (let s = 0; s < d; s++) {
    const upto = Math.min(total, shareCount(share, countBefore(rate, (s + 1) * 1e6)));
    out[s] = upto - prev;
    prev = upto;
  }
  return out;
}

/**
 * A shaped schedule's requests per second, of one node's share: its m-th request is the schedule's
 * requestOf(share, m), at that request's shaped time (the generator's own rule). The whole schedule
 * (one node, or a merge) is arrivals.ts's schedulePerSecond.
 */
function sharePerSecond(s: ArrivalSchedule, share: NodeShare, seconds: number): Int32Array {
  if (share.nodes === 1) return schedulePerSecond(s, seconds);
  const out = new Int32Array(seconds);
  const mine = shareCount(share, s.count);
  for (let m = 0; m < mine; m++) {
    const sec = Math.floor(s.at(requestOf(share, m)) / 1e6);
    if (sec < seconds) out[sec]++;
  }
  return out;
}

/**
 * Refuses the first row (in stream order) that the plan did not schedule, naming its line: a row at or
 * after the end of the window, an open-loop ingest row that is not at one of the schedule's times,
 * and, when the probe rate is known, a probe row that is not at one of its times (or of the wrong
 * endpoint for its time). The same for every plan, the stream's own or the flags' (one plan, one
 * strictness). A stray row is never allowed to stretch the run (the drift thirds, the per-second
 * series) or to stand in for a request that was not sent.
 */
export function refuseOffSchedule(cols: SampleColumns, p: StreamPlan): void {
  const end = windowUs(p);
  const rr = requestRate(p);
  const shaped = shapedSchedule(p);
  const from = p.source === 'flags' ? ' (from the flags)' : '';
  const share = p.share ?? WHOLE;
  const whose = (k: number) => `request ${k} of the schedule is node ${k % share.nodes}'s, and this stream is node ${share.node}'s of ${share.nodes}: a row outside its share`;
  for (let i = 0; i < cols.length; i++) {
    const t = cols.intended[i];
    const code = cols.scenario[i];
    const line = i + cols.firstRowLine;
    const name = SCENARIOS[code];
    if (t >= end) throw new SampleFormatError(line, `${name} row intended at ${t} µs, after the plan's ${p.seconds} s: a row outside the schedule`);
    if (code === INGEST) {
      if (p.mode === 'open') {
        const k = shaped ? shaped.indexOf(t) : scheduleIndex(rr, t);
        if (k < 0) {
          if (shaped) throw new SampleFormatError(line, `ingest row intended at ${t} µs is not on the plan's ${p.arrivals?.shape} schedule: a row outside the schedule`);
          throw new SampleFormatError(line, `ingest row intended at ${t} µs is not on the plan's schedule${from} (${rr} requests/s: request n at floor(n x 1e6 / ${rr}) µs): a row outside the schedule`);
        }
        if (!owns(share, k)) throw new SampleFormatError(line, `ingest row intended at ${t} µs: ${whose(k)}`);
      }
    } else if (p.probe_rate !== null) {
      const k = p.probe_rate > 0 ? scheduleIndex(p.probe_rate, t) : -1;
      if (k < 0) throw new SampleFormatError(line, `${name} row intended at ${t} µs is not on the plan's probe schedule (${p.probe_rate} requests/s): a row outside the schedule`);
      if (!owns(share, k)) throw new SampleFormatError(line, `${name} row intended at ${t} µs: probe ${whose(k)}`);
      const want = PROBE_SCENARIOS[k % PROBE_SCENARIOS.length];
      if (want !== name) throw new SampleFormatError(line, `${name} row intended at ${t} µs: the plan's probe request ${k} at that time is ${want}: a row outside the schedule`);
    }
  }
}

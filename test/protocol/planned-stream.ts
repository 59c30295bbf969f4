// Streams as the rig's generator writes them (a `#plan` record, the header, rows on the schedule, an
// `#end` record), and the damages a hostile or broken stream shows: what the hostile-stream unit and
// property tests feed to the real reader and the one verdict function, and what
// test/loadgen/analyze-damaged.test.ts feeds to `rig analyze` itself.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { hash32 } from '../../lib/loadgen/prng';
import { evaluateRun, type EvaluateOptions, type Evaluation } from '../../lib/protocol/evaluate';
import { SAMPLE_HEADER, formatSampleRow, type ProbeScenario, type SampleRow } from '../../lib/protocol/sample-row';
import { countBefore, formatEndRecord, formatPlanRecord, scheduledUs, type StreamPlan } from '../../lib/protocol/stream-plan';

export interface StreamShape {
  /** Events per second offered, in requests of `batch`. */
  rate: number;
  batch: number;
  seconds: number;
  /** Probe requests per second (0: none). */
  probeRate?: number;
  /** Latency (done - sent) of ingest request n at second s, ms. */
  latencyMs?: (n: number, s: number) => number;
  /** Schedule lag (sent - intended) of request n, µs; default a few hundred µs. */
  lagUs?: (n: number) => number;
  seed?: number;
}

export interface Stream {
  plan: StreamPlan | null;
  rows: SampleRow[];
  /** The `#end` record: null writes none (a stream its writer never closed). */
  end: { cutShort: boolean; reason: string | null } | null;
  /**
   * A second gzip member: the writer's text from the row `before` on (its `#end` included; `before`
   * = rows.length: only the `#end`) is compressed as a member of its own, and `appended` is one more
   * member after the stream. Undefined: the one member the writer makes.
   */
  members?: { before?: number; appended?: string };
}

/** Every request of the shape's schedule, answered 201 (ingest) or 200 (probe), on time. */
export function makeStream(sh: StreamShape): Stream {
  const seed = sh.seed ?? 1;
  const rr = sh.rate / sh.batch;
  const window = Math.round(sh.seconds * 1e6);
  const rows: SampleRow[] = [];
  const lat = sh.latencyMs ?? ((n: number) => 5 + (hash32(seed, n) % 1000) / 1000);
  const lag = sh.lagUs ?? ((n: number) => 100 + (hash32(seed ^ 0x5bd1e995, n) % 400));
  for (let n = 0, total = countBefore(rr, window); n < total; n++) {
    const t = scheduledUs(rr, n);
    const sent = t + lag(n);
    const quantity = sh.batch + (hash32(seed, n + 7) % (sh.batch * 9 + 1));
    rows.push({ scenario: 'ingest', intended_us: t, sent_us: sent, done_us: sent + Math.round(lat(n, Math.floor(t / 1e6)) * 1000), status: 201, events: sh.batch, quantity });
  }
  const pr = sh.probeRate ?? 0;
  const names = ['probe:aggregate', 'probe:invoices', 'probe:customers'] as const;
  for (let k = 0, total = pr > 0 ? countBefore(pr, window) : 0; k < total; k++) {
    const t = scheduledUs(pr, k);
    rows.push({ scenario: names[k % 3], intended_us: t, sent_us: t + 200, done_us: t + 3200, status: 200, events: 0, quantity: 0 });
  }
  const plan: StreamPlan = { mode: 'open', rate: sh.rate, batch: sh.batch, seconds: sh.seconds, probe_rate: pr, run_tag: 'hostile', cut_short: false, cut_reason: null, source: 'stream' };
  return { plan, rows, end: { cutShort: false, reason: null } };
}

/** The stream's text, as one reading of all its members would see it (what zlib's gunzip returns). */
export function streamText(s: Stream): string {
  return textOf(s, 0, s.rows.length, true) + (s.members?.appended ?? '');
}

/** Rows [from, to) as text; the plan and the header when `withHead` (the stream's first part only). */
function textOf(s: Stream, from: number, to: number, withEnd: boolean, withHead = from === 0): string {
  let text = withHead ? `${s.plan ? formatPlanRecord(s.plan) : ''}${SAMPLE_HEADER}\n` : '';
  for (let i = from; i < to; i++) text += formatSampleRow(s.rows[i]);
  if (withEnd && s.plan && s.end) text += formatEndRecord(s.end.cutShort, s.end.reason);
  return text;
}

/** The stream's bytes: as the writer makes them (one gzip member), unless `members` says other. */
export function streamBytes(s: Stream): Buffer {
  const gz = (text: string) => zlib.gzipSync(text, { level: 1 });
  const m = s.members;
  if (!m) return gz(textOf(s, 0, s.rows.length, true));
  const at = m.before ?? s.rows.length;
  const parts = m.before === undefined ? [gz(textOf(s, 0, at, true))] : [gz(textOf(s, 0, at, false)), gz(textOf(s, at, s.rows.length, true, false))];
  if (m.appended !== undefined) parts.push(gz(m.appended));
  return Buffer.concat(parts);
}

/** What the database holds when it stored exactly what was acknowledged. */
export function truthfulDb(rows: readonly SampleRow[]): { rows_written: number; quantity_gained: number } {
  let events = 0;
  let quantity = 0;
  for (const r of rows) {
    if (r.scenario === 'ingest' && r.status >= 200 && r.status < 300) {
      events += r.events;
      quantity += r.quantity;
    }
  }
  return { rows_written: events, quantity_gained: quantity };
}

let files = 0;

/**
 * The stream written to `dir`, read by the real reader and judged by the one verdict function, with a
 * p99 limit of 50 ms and the database's counts as they would be (truthfulDb), unless `o` says other.
 */
export async function judgeStream(dir: string, s: Stream, o: EvaluateOptions & { plan?: StreamPlan | null; durationS?: number } = {}): Promise<Evaluation> {
  const file = path.join(dir, `s${files++}.csv.gz`);
  fs.writeFileSync(file, streamBytes(s));
  try {
    const { analysis } = await analyzeFile(file, { plan: o.plan, durationS: o.durationS });
    return evaluateRun(analysis, { p99LimitMs: 50, reconciliation: truthfulDb(s.rows), ...o });
  } finally {
    fs.rmSync(file, { force: true });
  }
}

// ---- damages ----

const ingest = (r: SampleRow) => r.scenario === 'ingest';
const secondOf = (r: SampleRow) => Math.floor(r.intended_us / 1e6);

/** Second s sent nothing: its ingest rows are gone. */
export function removeSecond(s: Stream, sec: number): Stream {
  return { ...s, rows: s.rows.filter((r) => !(ingest(r) && secondOf(r) === sec)) };
}

/** Only every k-th ingest request is kept. */
export function keepEvery(s: Stream, k: number): Stream {
  let n = 0;
  return { ...s, rows: s.rows.filter((r) => !ingest(r) || n++ % k === 0) };
}

/** Nothing intended from `atS` on: the run stopped there; `cutShort` says whether its `#end` admits it. */
export function cutEnd(s: Stream, atS: number, cutShort: boolean): Stream {
  return { ...s, rows: s.rows.filter((r) => r.intended_us < atS * 1e6), end: { cutShort, reason: cutShort ? 'SIGINT' : null } };
}

/** Row i written twice. */
export function duplicateRow(s: Stream, i: number): Stream {
  const rows = [...s.rows];
  rows.splice(i + 1, 0, { ...rows[i] });
  return { ...s, rows };
}

/** The generator stalled for `seconds` from `atS`: what was due in that time leaves at its end, in one burst. */
export function delayBurst(s: Stream, atS: number, seconds: number): Stream {
  const from = atS * 1e6;
  const until = from + seconds * 1e6;
  return {
    ...s,
    rows: s.rows.map((r) => {
      if (!ingest(r) || r.intended_us < from || r.intended_us >= until || r.sent_us === null || r.done_us === null) return r;
      const sent = Math.round(until);
      return { ...r, sent_us: sent, done_us: sent + (r.done_us - r.sent_us) };
    }),
  };
}

/** One extra fast, successful ingest row intended at `atUs`. */
export function strayRow(s: Stream, atUs: number): Stream {
  return { ...s, rows: [...s.rows, { scenario: 'ingest', intended_us: atUs, sent_us: atUs + 100, done_us: atUs + 600, status: 201, events: s.plan?.batch ?? 1, quantity: s.plan?.batch ?? 1 }] };
}

/** A stray probe request of `scenario` intended at `atUs`, answered 200 in 3 ms. */
export function strayProbeRow(s: Stream, atUs: number, scenario: ProbeScenario): Stream {
  return { ...s, rows: [...s.rows, { scenario, intended_us: atUs, sent_us: atUs + 200, done_us: atUs + 3200, status: 200, events: 0, quantity: 0 }] };
}

/** Row i with some columns changed: a row that cannot have happened (a 2xx of 0 events, say). */
export function editRow(s: Stream, i: number, o: Partial<SampleRow>): Stream {
  const rows = [...s.rows];
  rows[i] = { ...rows[i], ...o };
  return { ...s, rows };
}

/**
 * The writer's text in two gzip members, the second from row `before` on: gunzip reads the two as
 * the undamaged stream, so only the reader's one-member rule can tell.
 */
export function splitMember(s: Stream, before: number): Stream {
  return { ...s, members: { ...s.members, before } };
}

/** One more gzip member after the stream's end (two streams concatenated, `cat a.gz b.gz`). */
export function appendMember(s: Stream, text: string): Stream {
  return { ...s, members: { ...s.members, appended: text } };
}

/** Row i's events column past what its 32-bit column holds (4,294,967,306 would wrap to 10). */
export function overflowColumn(s: Stream, i: number): Stream {
  return editRow(s, i, { events: 2 ** 32 + 10 });
}

/** The same rows without their plan: an older stream, or another tool's. */
export function withoutPlan(s: Stream): Stream {
  return { ...s, plan: null, end: null };
}

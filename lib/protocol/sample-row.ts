// The sample stream's row format, defined once: the generator writes rows with formatSampleRow and
// every reader parses them with parseSampleRecord. Pure: no I/O (the gzip reader lives in lib/loadgen).
//
// One row per request: `scenario,intended_us,sent_us,done_us,status,events,quantity`.
// - times are integer microseconds from the start of the repeat;
// - status is the HTTP status, 0 for a transport error, -1 for a request dropped because no slot
//   was free (then sent_us and done_us are empty);
// - events is the number of usage events the request carried (a dropped ingest row carries the batch
//   it would have sent), quantity the sum of their quantities (0 on a dropped row: no body was built;
//   0 on probe rows).
//
// Rows that cannot have happened are refused like corrupt ones (docs/instrument.md, "A strict reader"):
// every integer column must fit its storage type (no value is ever stored wrapped), and a 2xx ingest
// row must carry 1..MAX_BATCH events with a quantity they can sum to (each event's quantity is >= 1,
// lib/loadgen/body.ts, so quantity >= events).
//
// The parser is strict on purpose: a corrupt or truncated row is an error naming its line, never a
// row silently skipped, because a published figure must be derivable from every request.

import { MAX_BATCH } from './hardcount-api';
import type { StreamPlan } from './stream-plan-types';

export const SAMPLE_HEADER = 'scenario,intended_us,sent_us,done_us,status,events,quantity';

export const SCENARIOS = ['ingest', 'probe:aggregate', 'probe:invoices', 'probe:customers'] as const;
export type Scenario = (typeof SCENARIOS)[number];
export type ProbeScenario = Exclude<Scenario, 'ingest'>;
export const PROBE_SCENARIOS: readonly ProbeScenario[] = ['probe:aggregate', 'probe:invoices', 'probe:customers'];

/** Scenario codes as stored in SampleColumns.scenario (index into SCENARIOS). */
export const INGEST = 0;

export const STATUS_DROPPED = -1;
export const STATUS_TRANSPORT_ERROR = 0;

export interface SampleRow {
  scenario: Scenario;
  intended_us: number;
  /** null when dropped. */
  sent_us: number | null;
  /** null when dropped. */
  done_us: number | null;
  status: number;
  events: number;
  quantity: number;
}

/** A row is a success when the server answered 2xx. */
export function isOk(status: number): boolean {
  return status >= 200 && status < 300;
}

/** A row failed when it was sent and got no 2xx (transport error, 4xx, 5xx). Drops are counted apart. */
export function isFailed(status: number): boolean {
  return status !== STATUS_DROPPED && !isOk(status);
}

export class SampleFormatError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.name = 'SampleFormatError';
  }
}

/** The CSV line (with its trailing newline) of one row. */
export function formatSampleRow(r: SampleRow): string {
  if (r.status === STATUS_DROPPED) return `${r.scenario},${r.intended_us},,,-1,${r.events},${r.quantity}\n`;
  return `${r.scenario},${r.intended_us},${r.sent_us},${r.done_us},${r.status},${r.events},${r.quantity}\n`;
}

/**
 * Columnar storage of a stream: typed arrays instead of one object per row, so a 2M-row stream
 * fits in ~80 MB and the statistics run over contiguous memory. sent/done are NaN on dropped rows.
 */
export class SampleColumns {
  length = 0;
  /** The line of row 0 in its stream: 2 after the header alone, 3 after a `#plan` record (stream-plan.ts). */
  firstRowLine = 2;
  /** The plan the stream carries (its `#plan` and `#end` records), or null for a stream without one. */
  plan: StreamPlan | null = null;
  scenario: Uint8Array;
  intended: Float64Array;
  sent: Float64Array;
  done: Float64Array;
  status: Int16Array;
  events: Int32Array;
  quantity: Float64Array;

  constructor(capacity = 1024) {
    const c = Math.min(MAX_ROWS, Math.max(16, capacity));
    this.scenario = new Uint8Array(c);
    this.intended = new Float64Array(c);
    this.sent = new Float64Array(c);
    this.done = new Float64Array(c);
    this.status = new Int16Array(c);
    this.events = new Int32Array(c);
    this.quantity = new Float64Array(c);
  }

  static fromRows(rows: readonly SampleRow[]): SampleColumns {
    const c = new SampleColumns(rows.length);
    for (const r of rows) c.push(r);
    return c;
  }

  /** Validates like the parser does (line numbers are row positions from firstRowLine). */
  push(r: SampleRow): void {
    const line = this.length + this.firstRowLine;
    const code = SCENARIOS.indexOf(r.scenario);
    if (code < 0) throw new SampleFormatError(line, `unknown scenario '${String(r.scenario)}'`);
    const dropped = r.status === STATUS_DROPPED;
    this.append(code, r.intended_us, dropped ? NaN : (r.sent_us ?? NaN), dropped ? NaN : (r.done_us ?? NaN), r.status, r.events, r.quantity, line);
  }

  append(code: number, intended: number, sent: number, done: number, status: number, events: number, quantity: number, line: number): void {
    checkRow(code, intended, sent, done, status, events, quantity, line);
    if (this.length >= MAX_ROWS) throw new SampleFormatError(line, `more than ${MAX_ROWS} rows: not a stream this reader can hold`);
    if (this.length === this.intended.length) this.grow();
    const i = this.length++;
    this.scenario[i] = code;
    this.intended[i] = intended;
    this.sent[i] = sent;
    this.done[i] = done;
    this.status[i] = status;
    this.events[i] = events;
    this.quantity[i] = quantity;
  }

  row(i: number): SampleRow {
    const dropped = this.status[i] === STATUS_DROPPED;
    return {
      scenario: SCENARIOS[this.scenario[i]],
      intended_us: this.intended[i],
      sent_us: dropped ? null : this.sent[i],
      done_us: dropped ? null : this.done[i],
      status: this.status[i],
      events: this.events[i],
      quantity: this.quantity[i],
    };
  }

  private grow(): void {
    const n = Math.min(MAX_ROWS, this.intended.length * 2);
    const g = <T extends Uint8Array | Float64Array | Int16Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.scenario = g(this.scenario, (k) => new Uint8Array(k));
    this.intended = g(this.intended, (k) => new Float64Array(k));
    this.sent = g(this.sent, (k) => new Float64Array(k));
    this.done = g(this.done, (k) => new Float64Array(k));
    this.status = g(this.status, (k) => new Int16Array(k));
    this.events = g(this.events, (k) => new Int32Array(k));
    this.quantity = g(this.quantity, (k) => new Float64Array(k));
  }
}

const INT32_MAX = 2 ** 31 - 1;

function checkRow(code: number, intended: number, sent: number, done: number, status: number, events: number, quantity: number, line: number): void {
  if (!Number.isInteger(intended) || intended < 0) throw new SampleFormatError(line, `intended_us must be a non-negative integer, got ${intended}`);
  if (intended > MAX_TIME_US) tooLate(line, 'intended_us', intended);
  if (sent > MAX_TIME_US) tooLate(line, 'sent_us', sent);
  if (done > MAX_TIME_US) tooLate(line, 'done_us', done);
  if (!Number.isInteger(status) || !(status === STATUS_DROPPED || status === STATUS_TRANSPORT_ERROR || (status >= 100 && status <= 599))) {
    throw new SampleFormatError(line, `status must be -1 (dropped), 0 (transport error) or an HTTP status 100-599, got ${status}`);
  }
  if (!Number.isInteger(events) || events < 0) throw new SampleFormatError(line, `events must be a non-negative integer, got ${events}`);
  if (events > INT32_MAX) throw new SampleFormatError(line, `events ${events} does not fit its column (a 32-bit integer, at most ${INT32_MAX})`);
  if (!Number.isInteger(quantity) || quantity < 0) throw new SampleFormatError(line, `quantity must be a non-negative integer, got ${quantity}`);
  if (quantity > Number.MAX_SAFE_INTEGER) throw new SampleFormatError(line, `quantity ${quantity} does not fit its column (an exact integer, at most ${Number.MAX_SAFE_INTEGER})`);
  if (code === INGEST && isOk(status)) {
    if (events < 1 || events > MAX_BATCH) throw new SampleFormatError(line, `a 2xx ingest row must carry 1 to ${MAX_BATCH} events, got ${events}`);
    if (quantity < events) throw new SampleFormatError(line, `a 2xx ingest row's quantity ${quantity} is less than its ${events} events (each event's quantity is at least 1)`);
  }
  if (status === STATUS_DROPPED) {
    if (!Number.isNaN(sent) || !Number.isNaN(done)) throw new SampleFormatError(line, 'a dropped row (status -1) must have empty sent_us and done_us');
    return;
  }
  if (!Number.isInteger(sent) || !Number.isInteger(done)) throw new SampleFormatError(line, `a sent row (status ${status}) must have integer sent_us and done_us`);
  if (sent < intended) throw new SampleFormatError(line, `sent_us ${sent} is before intended_us ${intended}`);
  if (done < sent) throw new SampleFormatError(line, `done_us ${done} is before sent_us ${sent}`);
}

function tooLate(line: number, name: string, v: number): never {
  throw new SampleFormatError(line, `${name} ${v} is more than 7 days after the start of the repeat`);
}

const COMMA = 44;
const MINUS = 45;
const ZERO = 48;
const NINE = 57;
const CR = 13;
const SCENARIO_BYTES = SCENARIOS.map((s) => Buffer.from(s, 'latin1'));
const MAX_DIGITS = 15; // below 2^53: every value stays an exact integer in a double
/**
 * No time in a repeat is a week from its start. A larger value is a corrupt row, refused by name,
 * not a duration to allocate a bucket for every second of.
 */
export const MAX_TIME_US = 7 * 86_400 * 1e6;

/**
 * Parses bytes [start, end) (one line, without its '\n') into `into`. Throws SampleFormatError naming
 * `line` on anything that is not exactly a valid row. Working on bytes, not strings, is what lets
 * `rig analyze` read over a million rows a second.
 */
export function parseSampleRecord(buf: Uint8Array, start: number, end: number, line: number, into: SampleColumns): void {
  if (end > start && buf[end - 1] === CR) end--; // tolerate CRLF
  // scenario
  let p = start;
  while (p < end && buf[p] !== COMMA) p++;
  if (p >= end) throw new SampleFormatError(line, end === start ? 'empty line' : 'expected 7 comma-separated fields, found 1');
  const code = scenarioCode(buf, start, p);
  if (code < 0) throw new SampleFormatError(line, `unknown scenario '${Buffer.from(buf.subarray(start, p)).toString('latin1')}' (expected one of ${SCENARIOS.join(', ')})`);
  p++;
  const fields = [0, 0, 0, 0, 0, 0];
  const names = ['intended_us', 'sent_us', 'done_us', 'status', 'events', 'quantity'];
  for (let f = 0; f < 6; f++) {
    const fieldStart = p;
    let neg = false;
    if (p < end && buf[p] === MINUS) {
      neg = true;
      p++;
    }
    let v = 0;
    let digits = 0;
    while (p < end) {
      const c = buf[p];
      if (c === COMMA) break;
      if (c < ZERO || c > NINE) {
        throw new SampleFormatError(line, `${names[f]} is not an integer: '${Buffer.from(buf.subarray(fieldStart, fieldEnd(buf, fieldStart, end))).toString('latin1')}'`);
      }
      v = v * 10 + (c - ZERO);
      digits++;
      p++;
    }
    if (digits > MAX_DIGITS) throw new SampleFormatError(line, `${names[f]} has more than ${MAX_DIGITS} digits`);
    if (digits === 0) {
      if (neg) throw new SampleFormatError(line, `${names[f]} is not an integer: '-'`);
      if (f === 1 || f === 2) v = NaN; // sent_us / done_us may be empty (dropped rows)
      else throw new SampleFormatError(line, `${names[f]} is empty`);
    } else if (neg) {
      if (f !== 3) throw new SampleFormatError(line, `${names[f]} must not be negative`);
      v = -v;
    }
    fields[f] = v;
    if (f < 5) {
      if (p >= end) throw new SampleFormatError(line, `expected 7 comma-separated fields, found ${f + 2}`);
      p++; // the comma
    } else if (p < end) {
      throw new SampleFormatError(line, 'expected 7 comma-separated fields, found more');
    }
  }
  into.append(code, fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], line);
}

/** One line as a string (tests, small tools). */
export function parseSampleLine(text: string, line = 2): SampleRow {
  const c = new SampleColumns(1);
  const b = Buffer.from(text, 'latin1');
  parseSampleRecord(b, 0, b.length, line, c);
  return c.row(0);
}

/** True when bytes [start, end) are exactly the header. */
export function isSampleHeader(buf: Uint8Array, start: number, end: number): boolean {
  if (end > start && buf[end - 1] === CR) end--;
  if (end - start !== SAMPLE_HEADER.length) return false;
  for (let i = 0; i < SAMPLE_HEADER.length; i++) if (buf[start + i] !== SAMPLE_HEADER.charCodeAt(i)) return false;
  return true;
}

function scenarioCode(buf: Uint8Array, start: number, end: number): number {
  const len = end - start;
  outer: for (let s = 0; s < SCENARIO_BYTES.length; s++) {
    const name = SCENARIO_BYTES[s];
    if (name.length !== len) continue;
    for (let i = 0; i < len; i++) if (buf[start + i] !== name[i]) continue outer;
    return s;
  }
  return -1;
}

function fieldEnd(buf: Uint8Array, from: number, end: number): number {
  let p = from;
  while (p < end && buf[p] !== COMMA) p++;
  return p;
}

/** A stream holds at most this many rows: past it the columns would not fit in memory anyway. */
export const MAX_ROWS = 2 ** 28;

/**
 * The first pair of rows with the same scenario and intended time, as row indices (earlier first), or
 * null. In an open loop every request of a scenario has its own intended time (request n's is
 * floor(n x 1e6 / rate)), so a second row at the same time is a row written twice, and would count
 * its request twice. A closed loop's ingest `intended` is the moment a worker sent (two workers can
 * send in the same microsecond): pass `closedLoop` to skip ingest rows (its probe is still scheduled).
 * One typed-array sort: O(n log n), no object per row.
 */
export function duplicateRows(cols: SampleColumns, opts: { closedLoop?: boolean } = {}): [number, number] | null {
  const ns = SCENARIOS.length;
  const keys = new Float64Array(cols.length);
  let n = 0;
  for (let i = 0; i < cols.length; i++) {
    if (opts.closedLoop && cols.scenario[i] === INGEST) continue;
    keys[n++] = cols.intended[i] * ns + cols.scenario[i]; // < 2.5e12: exact in a double
  }
  const sorted = keys.subarray(0, n).sort();
  let dup = NaN;
  for (let i = 1; i < n; i++) {
    if (sorted[i] === sorted[i - 1]) {
      dup = sorted[i];
      break;
    }
  }
  if (Number.isNaN(dup)) return null;
  let first = -1;
  for (let i = 0; i < cols.length; i++) {
    if (cols.intended[i] * ns + cols.scenario[i] !== dup) continue;
    if (first < 0) first = i;
    else return [first, i];
  }
  return null; // unreachable: the key came from these rows
}

/** Throws SampleFormatError naming the later line of a duplicate pair (lines are row index + firstRowLine). */
export function refuseDuplicateRows(cols: SampleColumns, opts: { closedLoop?: boolean } = {}): void {
  const d = duplicateRows(cols, opts);
  if (d === null) return;
  const [a, b] = d;
  const at = cols.firstRowLine;
  throw new SampleFormatError(b + at, `duplicate row: ${SCENARIOS[cols.scenario[b]]} at intended_us ${cols.intended[b]} is already on line ${a + at} (a request is one row)`);
}

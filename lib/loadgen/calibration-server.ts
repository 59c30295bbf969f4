// A calibration server: the ingest and probe API of lib/protocol/hardcount-api.ts with programmable
// behaviour, on 127.0.0.1 and a free port. The instrument is calibrated by measuring it: a server
// whose service time, stalls, capacity, errors and storage are known exactly, so each statistic and
// gate can be checked against the truth.
//
// It keeps exact counts per run tag (requests, rows stored, quantity stored, 500s answered, events
// acknowledged but not stored) so reconciliation is checked against what was really kept.
//
// It also keeps the truth of time: per ingest request, its arrival (the 'request' event) and the
// moment its answer was written (res.end returned), on this process's monotonic clock. The client's
// latency minus this server time is what the instrument itself adds (calibrate.ts joins the two by
// request number). Calibration runs this class in a process of its own
// (calibration-server-main.ts), so neither the generator nor the parent's work delays its clock.
//
// Service time is held to the deadline precisely: a timer sleeps to within a millisecond of it and
// the last fraction is waited out with setImmediate (Node timers have 1-ms granularity, which alone
// would add ~0.5 ms to every "5 ms" request). That short wait is the only busy part, and only while a
// request is within a millisecond of its answer.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AGGREGATE_PATH,
  CUSTOMERS_PATH,
  HEALTH_PATH,
  INGEST_PATH,
  INVOICES_PATH,
  MAX_BATCH,
  MAX_BODY_BYTES,
  RUN_TAG_PROPERTY,
  type AggregateResponse,
  type ErrorResponse,
  type HealthResponse,
  type IngestResponse,
} from '../protocol/hardcount-api';

export interface Behaviour {
  /** Constant service time of an ingest request, from its arrival to its answer. */
  serviceMs?: number;
  /** Service time rising linearly from fromMs to toMs over overS seconds after the first ingest request. */
  serviceRamp?: { fromMs: number; toMs: number; overS: number };
  /** At most this many ingest requests in service at once; the rest wait in arrival order (capacity). */
  concurrency?: number;
  /**
   * A stall of the requests of one second: the arrival of ingest request #fromRequest (0-based) starts
   * a freeze of ms milliseconds, and the answers to requests #fromRequest..#toRequest-1 are held until
   * it ends. Bounded by request index rather than by the server's clock, so which requests stalled is
   * exact whatever the generator's lag: the truth the freeze-second detector is checked against.
   */
  freeze?: { fromRequest: number; toRequest: number; ms: number };
  /** Every failEvery-th ingest request (the failEvery-th, 2*failEvery-th, ...) is answered 500, nothing stored. */
  failEvery?: number;
  /** Every skipStoreEvery-th event is acknowledged (201, counted as created) but not stored. */
  skipStoreEvery?: number;
  /** Service time of the probe's reads (aggregate, invoices, customers); default 0. */
  probeMs?: number;
}

export interface Tally {
  /** Ingest requests received. */
  requests: number;
  rows: number;
  quantity: number;
  answered500: number;
  /** Acknowledged but not stored (skipStoreEvery). */
  skippedRows: number;
  skippedQuantity: number;
  duplicates: number;
}

/** One ingest request as the server saw it. Times: performance.now() of the server process, ms. */
export interface TruthRow {
  /** The request number n of its idempotency keys `<run tag>-<n>-<position>`; -1 when unreadable. */
  request: number;
  arrival: number;
  /** When its answer's write began: at the request's deadline (arrival + service time), never before. */
  written: number;
  status: number;
}

export interface CalibrationServerOptions {
  apiKey: string;
  customers: string[];
  host?: string;
}

const emptyTally = (): Tally => ({ requests: 0, rows: 0, quantity: 0, answered500: 0, skippedRows: 0, skippedQuantity: 0, duplicates: 0 });

/** Calls fn at performance.now() >= deadline (ms), never before it, late by ~0.05 ms. */
export function at(deadline: number, fn: () => void): void {
  const rem = deadline - performance.now();
  if (rem <= 0) fn();
  else if (rem >= 1.2) setTimeout(() => at(deadline, fn), Math.floor(rem - 0.2));
  else setImmediate(() => at(deadline, fn));
}

export class CalibrationServer {
  private server: http.Server | null = null;
  private behaviour: Behaviour = {};
  private arrivals = 0;
  private eventCounter = 0;
  private firstArrival = -1;
  private freezeUntil = 0;
  private busy = 0;
  /** Running mean (EWMA) of one answer's own cost, ms: the server starts that much before its deadline. */
  private answerCostMs = 0;
  private readonly queue: Array<() => void> = [];
  private readonly tallies = new Map<string, Tally>();
  private readonly truths = new Map<string, TruthRow[]>();
  private readonly keys = new Map<string, Set<string>>();
  private readonly usage = new Map<string, Map<string, { count: number; sum: number }>>();
  private readonly sockets = new Set<import('node:net').Socket>();
  url = '';

  constructor(private readonly opts: CalibrationServerOptions) {}

  async start(): Promise<string> {
    const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => this.handle(req, res));
    server.on('connection', (s) => {
      s.setNoDelay(true);
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.maxHeadersCount = 64;
    server.headersTimeout = 60_000;
    server.requestTimeout = 0;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // A deep accept queue: a burst of new connections must not overflow it (a dropped SYN costs 1 s).
      server.listen({ port: 0, host: this.opts.host ?? '127.0.0.1', backlog: 4096 }, () => resolve());
    });
    this.server = server;
    const a = server.address() as AddressInfo;
    this.url = `http://${a.address}:${a.port}`;
    return this.url;
  }

  /** New behaviour; resets the arrival and event counters it counts by (tallies are kept per run tag). */
  configure(b: Behaviour): void {
    this.behaviour = { ...b };
    this.arrivals = 0;
    this.eventCounter = 0;
    this.firstArrival = -1;
    this.freezeUntil = 0;
  }

  tally(runTag: string): Tally {
    return { ...(this.tallies.get(runTag) ?? emptyTally()) };
  }

  /** The run tag's per-request truth, handed over once (then forgotten: a calibration has ~20k requests). */
  takeTruth(runTag: string): TruthRow[] {
    const rows = this.truths.get(runTag) ?? [];
    this.truths.delete(runTag);
    return rows;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = null;
    for (const sock of this.sockets) sock.destroy();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const arrival = performance.now();
    const url = new URL(req.url ?? '/', 'http://calibration');
    if (req.method === 'GET' && url.pathname === HEALTH_PATH) {
      const h: HealthResponse = { ok: true, db_role: 'calibration', rls: false, livemode: false };
      return json(res, 200, h);
    }
    if (req.headers.authorization !== `Bearer ${this.opts.apiKey}`) {
      req.resume();
      return json(res, 401, { error: 'missing or unknown API key', field: 'authorization' } satisfies ErrorResponse);
    }
    if (req.method === 'POST' && url.pathname === INGEST_PATH) return this.ingest(req, res, arrival);
    const read = (status: number, body: unknown) => at(arrival + (this.behaviour.probeMs ?? 0), () => json(res, status, body));
    if (req.method === 'GET' && url.pathname === AGGREGATE_PATH) {
      const customer = url.searchParams.get('customer_id');
      if (!customer) return json(res, 400, { error: 'customer_id is required', field: 'customer_id' } satisfies ErrorResponse);
      const meters = [...(this.usage.get(customer) ?? new Map<string, { count: number; sum: number }>()).entries()].map(([meter, v]) => ({ meter, ...v }));
      return read(200, { customer_id: customer, meters } satisfies AggregateResponse);
    }
    if (req.method === 'GET' && url.pathname === INVOICES_PATH) return read(200, { data: [] });
    if (req.method === 'GET' && url.pathname === CUSTOMERS_PATH) {
      return read(200, { data: this.opts.customers.map((id) => ({ id, external_id: id })) });
    }
    req.resume();
    return json(res, 404, { error: `no route ${req.method} ${url.pathname}` } satisfies ErrorResponse);
  }

  private ingest(req: http.IncomingMessage, res: http.ServerResponse, arrival: number): void {
    const b = this.behaviour;
    const index = this.arrivals++;
    if (this.firstArrival < 0) this.firstArrival = arrival;
    if (b.freeze && index === b.freeze.fromRequest) this.freezeUntil = arrival + b.freeze.ms;
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return json(res, 413, { error: `body over ${MAX_BODY_BYTES} bytes` } satisfies ErrorResponse);
      let parsed: ParsedBatch;
      try {
        parsed = parseBatch(Buffer.concat(chunks).toString('utf8'));
      } catch (err) {
        return json(res, 400, { error: (err as BatchError).message, field: (err as BatchError).field } satisfies ErrorResponse);
      }
      const tally = this.tallyOf(parsed.tag);
      tally.requests++;
      // Service starts at arrival, or, when the server is at its concurrency, when a slot frees.
      const serve = (start: number) => {
        this.busy++;
        // Prepare the answer one answer's own cost early, then write it at the deadline: the answer
        // is WRITTEN at the service time, never before it.
        const deadline = start + this.serviceMs(arrival);
        at(deadline - this.answerCostMs, () => this.answer(res, index, parsed, tally, arrival, deadline));
      };
      if (b.concurrency !== undefined && this.busy >= b.concurrency) this.queue.push(() => serve(performance.now()));
      else serve(arrival);
    });
  }

  private serviceMs(arrival: number): number {
    const b = this.behaviour;
    if (b.serviceRamp) {
      const t = Math.min(1, Math.max(0, (arrival - this.firstArrival) / 1000 / b.serviceRamp.overS));
      return b.serviceRamp.fromMs + (b.serviceRamp.toMs - b.serviceRamp.fromMs) * t;
    }
    return b.serviceMs ?? 0;
  }

  private answer(res: http.ServerResponse, index: number, batch: ParsedBatch, tally: Tally, arrival: number, deadline: number): void {
    const b = this.behaviour;
    if (b.freeze && index >= b.freeze.fromRequest && index < b.freeze.toRequest && performance.now() < this.freezeUntil) {
      at(this.freezeUntil, () => this.answer(res, index, batch, tally, arrival, this.freezeUntil));
      return;
    }
    const began = performance.now();
    const truth = this.truths.get(batch.tag) ?? [];
    this.truths.set(batch.tag, truth);
    let status: number;
    let body: unknown;
    if (b.failEvery && (index + 1) % b.failEvery === 0) {
      tally.answered500++;
      status = 500;
      body = { error: 'calibration: programmed failure' } satisfies ErrorResponse;
    } else {
      let created = 0;
      let duplicates = 0;
      for (const e of batch.events) {
        const keys = this.keysOf(e.tag);
        const t = e.tag === batch.tag ? tally : this.tallyOf(e.tag);
        if (keys.has(e.idempotency_key)) {
          duplicates++;
          t.duplicates++;
          continue;
        }
        keys.add(e.idempotency_key);
        created++;
        this.eventCounter++;
        if (b.skipStoreEvery && this.eventCounter % b.skipStoreEvery === 0) {
          t.skippedRows++;
          t.skippedQuantity += e.quantity;
          continue;
        }
        t.rows++;
        t.quantity += e.quantity;
        let m = this.usage.get(e.customer_id);
        if (!m) this.usage.set(e.customer_id, (m = new Map()));
        const u = m.get(e.meter) ?? { count: 0, sum: 0 };
        u.count++;
        u.sum += e.quantity;
        m.set(e.meter, u);
      }
      status = 201;
      body = { accepted: batch.events.length, created, duplicates } satisfies IngestResponse;
    }
    const prepared = performance.now() - began;
    at(deadline, () => {
      // `written` is when the answer's write begins (at its deadline, never before): the server's
      // time is its service time; the write itself (~0.1 ms) falls to the client's side of the excess.
      const writing = performance.now();
      json(res, status, body);
      const written = performance.now();
      truth.push({ request: batch.request, arrival, written: writing, status });
      // What answering costs this process (storage, JSON, the write): measured on a 2-core host at
      // ~0.3 ms, which a server that began at the deadline would add to every "5 ms" answer.
      this.answerCostMs += (Math.min(prepared + (written - writing), 2) - this.answerCostMs) * 0.05;
      this.busy--;
      const next = this.queue.shift();
      if (next) next();
    });
  }

  private tallyOf(tag: string): Tally {
    let t = this.tallies.get(tag);
    if (!t) this.tallies.set(tag, (t = emptyTally()));
    return t;
  }

  private keysOf(tag: string): Set<string> {
    let k = this.keys.get(tag);
    if (!k) this.keys.set(tag, (k = new Set()));
    return k;
  }
}

interface ParsedEvent {
  customer_id: string;
  meter: string;
  quantity: number;
  idempotency_key: string;
  /** properties.rig_run, '' when absent. */
  tag: string;
}
interface ParsedBatch {
  /** The first event's run tag: the request is counted under it. */
  tag: string;
  /** n of the first event's key `<tag>-<n>-<position>` (lib/loadgen/body.ts); -1 when it has another shape. */
  request: number;
  events: ParsedEvent[];
}
class BatchError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function parseBatch(text: string): ParsedBatch {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BatchError('body', 'body is not JSON');
  }
  const events = (body as { events?: unknown }).events;
  if (!Array.isArray(events) || events.length === 0 || events.length > MAX_BATCH) throw new BatchError('events', `events must be an array of 1..${MAX_BATCH} events`);
  let tag = '';
  const out: ParsedEvent[] = [];
  events.forEach((e: Record<string, unknown>, i) => {
    if (typeof e?.customer_id !== 'string' || !e.customer_id) throw new BatchError(`events[${i}].customer_id`, 'customer_id must be a non-empty string');
    if (typeof e.meter !== 'string' || !e.meter) throw new BatchError(`events[${i}].meter`, 'meter must be a non-empty string');
    if (typeof e.quantity !== 'number' || !Number.isInteger(e.quantity) || e.quantity < 0) throw new BatchError(`events[${i}].quantity`, 'quantity must be a non-negative integer');
    if (typeof e.idempotency_key !== 'string' || !e.idempotency_key) throw new BatchError(`events[${i}].idempotency_key`, 'idempotency_key must be a non-empty string');
    const props = e.properties as Record<string, unknown> | undefined;
    const t = typeof props?.[RUN_TAG_PROPERTY] === 'string' ? (props[RUN_TAG_PROPERTY] as string) : '';
    if (i === 0) tag = t;
    out.push({ customer_id: e.customer_id, meter: e.meter, quantity: e.quantity, idempotency_key: e.idempotency_key, tag: t });
  });
  return { tag, request: requestNumber(tag, out[0].idempotency_key), events: out };
}

/** The request number in a generator's idempotency key `<run tag>-<n>-<position>`, or -1. */
export function requestNumber(tag: string, key: string): number {
  if (!key.startsWith(`${tag}-`)) return -1;
  const m = /^(\d+)-\d+$/.exec(key.slice(tag.length + 1));
  return m ? Number(m[1]) : -1;
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

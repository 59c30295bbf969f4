// The load generator's engine. It runs in its own child process (child.ts), so its event loop serves
// nothing but the schedule and the replies.
//
// Open loop: request n's intended time is start + n x interval, from a monotonic clock, never "last
// send + interval", so a 10-minute run does not drift. With arrivals (poisson, ramp, spike, diurnal,
// trace: lib/protocol/arrivals.ts) it is start + the shape's time of request n, fixed before the first
// request and written into the stream's plan; the constant schedule keeps its own one-line formula. A
// load node (issue 37) sends only its share: its m-th request is the schedule's request
// requestOf(share, m) (lib/protocol/node-share.ts), at that request's time, shaped or constant, so the
// nodes' streams merge back into the one schedule. A timer wakes the scheduler when the next
// request is due (Node timers have 1-ms granularity); each wake-up sends every request whose time has
// come, catching up by intended time after any delay. A request whose time comes while all request
// slots are busy is DROPPED: never sent, written to the stream with status -1. There is no busy spin:
// between due times the process sleeps.
//
// Several clients (issue 35; lib/protocol/clients.ts): with tenants, request k goes with the key of
// its tenant's (one request maker per key); with duplicates, a repeat carries its original's body (the
// same idempotency keys and quantities). Both fixed in the plan, neither changes a time.
// Batch sizes and client timestamps (issue 35; lib/protocol/batch-sizes.ts, client-timestamps.ts): request k
// carries its drawn size, each event its client timestamp (the schedule's time of its request, as a
// wall-clock instant, less its seeded offset); both fixed in the plan too, and a repeat carries its
// original's (the same body).
//
// Closed loop (ceilings only): V workers, each sending its next request when its reply arrives.
//
// Probe: its own schedule at PROBE_RATE, its own slots and connections, cycling through the usage
// aggregate of a random customer, the invoice list and the customer list.
//
// The hot path makes no promise, closure or timer per request: a request is an Exchange from a free
// list and one buffer of bytes (http1/request-head.ts), written in one write on a keep-alive connection
// of http1/socket-pool.ts, its reply read by http1/response-parser.ts; the pool calls written() and
// done() back. Timers: one for the next due time of the schedule (a tick sends everything due), one a
// second for progress, one for the end; none per request.
//
// Times: `intended` is the schedule; `sent` is when the request's bytes are written to its socket, so
// a wait for a free connection is schedule lag, not server time; `done` is when the reply has ended
// (or the request failed). A request the pool sends again (a kept-alive connection closed under it
// before any answer: http1/connection.ts) takes the second write's time as `sent`: the first went to
// a server that had already left, and the wait is the generator's, schedule lag too.
import * as hdr from 'hdr-histogram-js';
import { AGGREGATE_PATH, CUSTOMERS_PATH, HEALTH_PATH, INGEST_PATH, INVOICES_PATH } from '../protocol/hardcount-api';
import { isOk } from '../protocol/sample-row';
import { arrivalSchedule, type ArrivalSchedule } from '../protocol/arrivals';
import { requestOf, shareCount, type NodeShare } from '../protocol/node-share';
import { countBefore } from '../protocol/stream-plan';
import { ClientMap } from '../protocol/clients';
import { BatchSizes } from '../protocol/batch-sizes';
import { ClientTimestamps } from '../protocol/client-timestamps';
import { BodyMaker } from './body';
import { Exchange, type ExchangeOwner } from './http1/exchange';
import { IngestRequests, getRequest } from './http1/request-head';
import { SocketPool } from './http1/socket-pool';
import type { Endpoint } from './http1/connection';
import type { ResolvedLoadOptions } from './options';
import { hash32 } from './prng';
import { SampleWriter } from './sample-writer';
import { MemorySamples, type MemorySeries } from './memory-samples';

const INGEST_CODE = 0;
const PROBE_CODES = [1, 2, 3]; // probe:aggregate, probe:invoices, probe:customers
const PROBE_SALT = 0x27d4eb2f;

/** One line a second on stdout. Counts are of that second (wall clock since start). */
export interface ProgressLine {
  type: 'progress';
  /** Seconds since the start of the repeat at the end of this interval. */
  second: number;
  offered: number;
  sent: number;
  done: number;
  dropped: number;
  failed: number;
  /** p99 (ms) of the ingest requests completed this second (HDR, 3 significant digits); null if none. */
  p99_ms: number | null;
  in_flight: number;
  probe: { sent: number; done: number; failed: number; dropped: number } | null;
}

export interface LoadSummary {
  type: 'summary';
  run_tag: string;
  mode: 'open' | 'closed';
  stream: string;
  rows: number;
  /** Open loop: requests the schedule held for the whole duration. */
  scheduled: number;
  offered: number;
  sent: number;
  ok: number;
  failed: number;
  dropped: number;
  events_sent: number;
  quantity_sent: number;
  /** Events and quantity in requests answered 2xx. */
  events_ok: number;
  quantity_ok: number;
  probe: { offered: number; sent: number; ok: number; failed: number; dropped: number };
  /** HDR approximations for the live view; verdicts use the exact stream analysis. */
  latency_p50_ms: number | null;
  latency_p99_ms: number | null;
  schedule_lag_p50_ms: number | null;
  schedule_lag_p99_ms: number | null;
  cpu_user_us: number;
  cpu_system_us: number;
  cpu_us_per_request: number | null;
  elapsed_s: number;
  interrupted: boolean;
  reason: string | null;
  /**
   * A load node's start (issue 37), when it was given a common instant: that instant, and how late this
   * node's clock found itself there (0 when it waited for it). Absent without one.
   */
  start_at_ms?: number;
  start_late_ms?: number;
  /** The generator's own RSS and heap over the run (issue 35's soak: is it flat?); read every 10 s. */
  memory: MemorySeries;
}

type Emit = (line: ProgressLine | LoadSummary) => void;

const MAX_TRACKED_US = 3_600_000_000;

function histogram() {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: MAX_TRACKED_US, numberOfSignificantValueDigits: 3 });
}

/** Moments the child reports to its parent: the load's edges, where the rig reads what brackets it. */
export interface GeneratorBounds {
  /** Awaited after the connections are warm, right before the first request is sent. */
  beforeFirstRequest?: () => Promise<void>;
  /** Called once every reply is in, before the stream is flushed (not awaited). */
  afterLastReply?: () => void;
}

export class Generator implements ExchangeOwner {
  private readonly t0 = { ms: 0 };
  private readonly writer: SampleWriter;
  /** One request maker per tenant (its API key in the head); one without tenants. */
  private readonly requests: IngestRequests[];
  /** Who sends request k and which request's body it carries (tenants, duplicates); null: one client, no repeats. */
  private readonly clients: ClientMap | null;
  /** Request k's drawn size (issue 35), or null: `batch` events each. */
  private readonly sizes: BatchSizes | null;
  private readonly bodies: BodyMaker;
  private readonly pool: SocketPool;
  private readonly probePool: SocketPool | null;
  private readonly probeBase: string;
  private readonly host: string;
  private readonly apiKey: string;
  /** The probe's two fixed requests (invoices, customers); the aggregate's path changes each time. */
  private readonly probeFixed: Buffer[];
  /** Exchanges not in use: as many as were ever in flight at once. */
  private readonly free: Exchange[] = [];
  // The options the hot path reads, copied onto the generator: the options object of the warm-up and
  // the one of the measured run have different shapes (hidden classes), and code optimised on one
  // was thrown away on the other; at low rates it then ran unoptimised for the whole run.
  private readonly requestRate: number;
  private readonly maxInFlight: number;
  private readonly batch: number;
  private readonly probeRate: number;
  private readonly probeMaxInFlight: number;
  private readonly durationUs: number;
  private readonly total: number;
  private readonly probeTotal: number;
  /** The shaped schedule (arrivals), or null for the constant one: intendedUs's one branch. */
  private readonly shaped: ArrivalSchedule | null;
  /** This node's part of the schedule: its m-th request is the schedule's requestOf(share, m). */
  private readonly share: NodeShare;
  private startLateMs: number | null = null;
  private next = 0;
  private probeNext = 0;
  private inFlight = 0;
  private probeInFlight = 0;
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  private probeTimer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  private pumping = false;
  private progressTimer: NodeJS.Timeout | null = null;
  private endTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private ended = false;
  private interrupted = false;
  private reason: string | null = null;
  private drained: (() => void) | null = null;
  private finished: Promise<LoadSummary> | null = null;
  private cpu0: NodeJS.CpuUsage = { user: 0, system: 0 };
  // totals
  private offered = 0;
  private sent = 0;
  private ok = 0;
  private failed = 0;
  private dropped = 0;
  private eventsSent = 0;
  private quantitySent = 0;
  private eventsOk = 0;
  private quantityOk = 0;
  private readonly probeTotals = { offered: 0, sent: 0, ok: 0, failed: 0, dropped: 0 };
  // this second
  private sec = { offered: 0, sent: 0, done: 0, dropped: 0, failed: 0 };
  private secProbe = { sent: 0, done: 0, failed: 0, dropped: 0 };
  private second = 0;
  private readonly secHist = histogram();
  private readonly latHist = histogram();
  private readonly lagHist = histogram();
  private readonly memory = new MemorySamples();

  /** `keys`: the API key, or with tenants each tenant's key in order (tenant 1's first). */
  constructor(
    private readonly o: ResolvedLoadOptions,
    keys: string | readonly string[],
    private readonly emit: Emit,
    private readonly bounds: GeneratorBounds = {},
  ) {
    this.requestRate = o.requestRate;
    this.maxInFlight = o.maxInFlight;
    this.batch = o.batch;
    this.probeRate = o.probeRate;
    this.probeMaxInFlight = o.probeMaxInFlight;
    const u = new URL(o.url);
    const prefix = u.pathname.replace(/\/+$/, '');
    this.probeBase = prefix;
    this.host = u.host;
    const tenantKeys = typeof keys === 'string' ? [keys] : keys;
    const apiKey = tenantKeys[0] ?? '';
    this.apiKey = apiKey;
    if (o.tenants && tenantKeys.length !== o.tenants.count) throw new Error(`Generator: ${o.tenants.count} tenants need ${o.tenants.count} API keys, got ${tenantKeys.length}`);
    const endpoint: Endpoint = {
      host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80,
      tls: u.protocol === 'https:',
    };
    const timeoutMs = o.requestTimeoutSeconds * 1000;
    this.pool = new SocketPool(endpoint, o.maxInFlight, this, timeoutMs);
    this.probePool = o.probeRate > 0 ? new SocketPool(endpoint, o.probeMaxInFlight, this, timeoutMs) : null;
    const open = o.mode === 'open';
    this.sizes = open && o.batchSizes ? new BatchSizes(o.batchSizes, o.batch) : null;
    const stamps = open && o.timestamps ? new ClientTimestamps(o.timestamps) : null;
    // Left out without them: the bodies are then today's to the byte.
    const drawn = { ...(this.sizes ? { sizes: this.sizes } : {}), ...(stamps ? { timestamps: stamps, intendedUs: (n: number) => this.intendedUs(n) } : {}) };
    const bodies = new BodyMaker({ runTag: o.runTag, meter: o.meter, customers: o.customers, batch: o.batch, seed: o.seed, quantityMax: o.quantityMax, ...drawn });
    this.bodies = bodies;
    // Every tenant has the same customer ids and meter key (lib/targets/tenant-fixtures.ts): one body
    // maker, one head per tenant's key.
    this.requests = (o.tenants ? tenantKeys : [apiKey]).map((k) => new IngestRequests(prefix + INGEST_PATH, this.host, k, bodies));
    this.probeFixed = [getRequest(prefix + INVOICES_PATH, this.host, apiKey), getRequest(prefix + CUSTOMERS_PATH, this.host, apiKey)];
    this.durationUs = Math.round(o.seconds * 1e6);
    this.shaped = o.mode === 'open' && o.arrivals ? arrivalSchedule({ rate: o.rate, batch: o.batch, seconds: o.seconds, arrivals: o.arrivals }) : null;
    this.share = o.share;
    const shaped = this.shaped;
    const rr = o.requestRate;
    this.clients = o.mode === 'open' && (o.tenants || o.duplicates) ? new ClientMap(o.tenants, o.duplicates, shaped ? (k) => shaped.at(k) : (k) => Math.floor((k * 1e6) / rr)) : null;
    // Counted in this node's requests: `next` and `probeNext` are m, the schedule's index is
    // requestOf(share, m); the schedule's own count is the shaped one when it is shaped.
    this.total = o.mode === 'open' ? shareCount(this.share, this.shaped ? this.shaped.count : countBefore(o.requestRate, this.durationUs)) : 0;
    this.probeTotal = o.probeRate > 0 ? shareCount(this.share, countBefore(o.probeRate, this.durationUs)) : 0;
    // The stream carries its plan: what was offered, so a reader judges delivery against it.
    this.writer = new SampleWriter(o.out, {
      mode: o.mode,
      rate: o.mode === 'open' ? o.rate : null,
      batch: o.batch,
      seconds: o.seconds,
      probe_rate: o.probeRate,
      run_tag: o.runTag,
      // Left out, not null, without arrivals: the constant plan's record is today's to the byte.
      ...(o.mode === 'open' && o.arrivals ? { arrivals: o.arrivals } : {}),
      ...(o.share.nodes > 1 ? { share: o.share } : {}),
      ...(o.mode === 'open' && o.tenants ? { tenants: o.tenants } : {}),
      ...(o.mode === 'open' && o.duplicates ? { duplicates: o.duplicates } : {}),
      ...(this.sizes && o.batchSizes ? { batch_sizes: o.batchSizes } : {}),
      ...(stamps && o.timestamps ? { timestamps: o.timestamps } : {}),
    });
  }

  /** Microseconds since the start of the repeat (monotonic). */
  nowUs(): number {
    return Math.floor((performance.now() - this.t0.ms) * 1000);
  }

  /** Opens connections, then runs the repeat to its end (or until stop()). */
  run(): Promise<LoadSummary> {
    this.finished ??= this.runInner();
    return this.finished;
  }

  /** Cuts the run short: nothing more is offered; in-flight requests get graceSeconds, then are aborted. */
  stop(reason: string): void {
    if (this.stopping) return;
    this.interrupted = true;
    this.reason = reason;
    this.beginDrain(this.o.graceSeconds);
  }

  private async runInner(): Promise<LoadSummary> {
    await this.warm();
    if (this.stopping) return this.finish();
    // The rig's readings that bracket the load (its WAL) are taken here: after the connections are
    // warm, before the first request.
    await this.bounds.beforeFirstRequest?.();
    if (this.stopping) return this.finish();
    // Start the measured run on a collected heap (the child runs with --expose-gc): the garbage of
    // the warm-up would otherwise be collected, in one long pause, in the first second of the run.
    (globalThis as { gc?: () => void }).gc?.();
    this.t0.ms = await this.startInstant();
    // Client timestamps count from this instant on the wall clock (the schedule's time 0).
    this.bodies.epochMs = performance.timeOrigin + this.t0.ms;
    if (this.stopping) return this.finish();
    this.cpu0 = process.cpuUsage();
    this.memory.tick(0);
    const drained = new Promise<void>((resolve) => (this.drained = resolve));
    this.progressTimer = setTimeout(() => this.tickProgress(), 1000);
    if (this.o.mode === 'open') this.pump();
    else for (let w = 0; w < this.o.workers; w++) this.workerNext(w);
    if (this.probePool) this.probePump();
    this.endTimer = setTimeout(this.endCheck, Math.ceil(this.o.seconds * 1000));
    await drained;
    // Every reply is in (or abandoned): the bracket's end, before the stream is flushed.
    this.bounds.afterLastReply?.();
    return this.finish();
  }

  /**
   * Time 0 of the schedule on the monotonic clock. With a common start instant (several load nodes), the
   * moment this host's clock reaches it: waited for when it is ahead, and taken as it is when this node
   * comes late (its first requests then go out late, and its own instrument gate says so: lateness is
   * never hidden by moving the schedule).
   */
  private async startInstant(): Promise<number> {
    const at = this.o.startAtMs;
    if (!at) return performance.now();
    const aheadMs = at - Date.now();
    const t0 = performance.now() + aheadMs;
    this.startLateMs = Math.max(0, -aheadMs);
    if (aheadMs > 0) await new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, t0 - performance.now())));
    return t0;
  }

  private async warm(): Promise<void> {
    const health = getRequest(this.probeBase + HEALTH_PATH, this.host, '');
    await this.pool.warm(this.o.warmConnections, health);
    if (this.probePool) await this.probePool.warm(Math.min(2, this.o.probeMaxInFlight), health);
  }

  // ---- open loop ----

  private intendedUs(n: number): number {
    const s = this.shaped;
    return s === null ? Math.floor((n * 1e6) / this.requestRate) : s.at(n);
  }

  /**
   * Sends every request due now: one tick of the schedule. `now` is read once: requests that fall due
   * while this batch is being sent wait for the next tick (setImmediate when already late), so replies
   * are read in between. Re-reading the clock inside the loop would let a slow stretch (a cold JIT, a
   * GC) keep the loop sending for hundreds of ms without ever reading a reply, a spiral into drops
   * that measures the generator instead of the server.
   *
   * Only its timer calls it: one timer per tick, for the next due time rounded up to Node's 1-ms
   * granularity, so above 1k requests/s a tick is a millisecond's worth of requests. Replies do not
   * send (they did, to send a due request at the next event rather than the next millisecond): a
   * clock read and a schedule check per reply, and sends spread one per event, cost 10-25 % more CPU
   * per request at 10k requests/s (four paired runs on a busy 2-core host) than sending each
   * millisecond's requests together, whose replies then come back together and are read in fewer
   * wake-ups. The price is schedule lag within the tick
   * (p50 ~0.5 ms), well inside the instrument's limits (docs/instrument.md).
   */
  private pump = (): void => {
    if (this.pumping || this.stopping) return;
    this.pumping = true;
    const now = this.nowUs();
    while (this.next < this.total) {
      const k = requestOf(this.share, this.next);
      const intended = this.intendedUs(k);
      if (intended > now) break;
      this.fire(k, intended);
      this.next++;
    }
    this.pumping = false;
    if (this.next < this.total && this.timer === null) this.timer = this.wake(this.onTimer, this.intendedUs(requestOf(this.share, this.next)));
  };

  private onTimer = (): void => {
    this.timer = null;
    this.pump();
  };

  /**
   * A timer for the next due time; setImmediate (a 0-ms wake) when it is already due. The wait is
   * rounded up to whole milliseconds (Node's timer granularity): rounded down, the timer fires before
   * the request is due, finds nothing to send and sleeps again, two wake-ups per request where one
   * will do. At 200 requests/s that was 1.8 wake-ups per request, and on a VM a wake-up is the
   * generator's largest cost at low rates (~60-150 µs of CPU each on this project's 2-core hosts);
   * rounded up, 1.0, for ~0.1 ms more schedule lag at the median (docs/benchmarks.md).
   */
  private wake(fn: () => void, dueUs: number): NodeJS.Timeout | NodeJS.Immediate {
    const waitMs = (dueUs - this.nowUs()) / 1000;
    if (waitMs <= 0) return setImmediate(fn);
    return setTimeout(fn, Math.ceil(waitMs));
  }

  private fire(n: number, intended: number): void {
    this.offered++;
    this.sec.offered++;
    if (this.inFlight >= this.maxInFlight) {
      this.dropped++;
      this.sec.dropped++;
      // A dropped row carries the events its request would have sent: its original's drawn size.
      const s = this.sizes;
      this.writer.row(INGEST_CODE, intended, 0, 0, -1, s === null ? this.batch : s.of(this.clients === null ? n : this.clients.originalOf(n)), 0);
      return;
    }
    this.send(n, intended, -1);
  }

  private send(n: number, intended: number, worker: number): void {
    const x = this.exchange(INGEST_CODE, intended, this.batch, worker);
    // A repeat carries its original's body (keys, quantities) and goes with its original's tenant's key.
    const c = this.clients;
    const req = c === null ? this.requests[0] : this.requests[c.tenantOf(n)];
    x.request = req.make(c === null ? n : c.originalOf(n));
    x.quantity = req.quantity;
    x.events = req.events;
    this.inFlight++;
    this.eventsSent += x.events;
    this.quantitySent += x.quantity;
    this.pool.dispatch(x);
  }

  private exchange(code: number, intended: number, events: number, worker: number): Exchange {
    const x = this.free.pop() ?? new Exchange();
    x.code = code;
    x.intended = intended;
    x.events = events;
    x.quantity = 0;
    x.worker = worker;
    return x;
  }

  /** The pool wrote x's bytes to a socket now (again, if it re-sent x: then only its time moves). */
  written(x: Exchange): void {
    const again = x.sent >= 0;
    x.sent = this.nowUs();
    if (again) return;
    if (x.code === INGEST_CODE) {
      this.sent++;
      this.sec.sent++;
    } else {
      this.probeTotals.sent++;
      this.secProbe.sent++;
    }
  }

  // ---- closed loop ----

  private workerNext(w: number): void {
    // One clock read: the time checked against the end is the request's `intended`, so no row of a
    // closed loop is ever intended at or after the end of its plan (the reader refuses such a row).
    const now = this.nowUs();
    if (this.stopping || now >= this.durationUs) return;
    this.offered++;
    this.sec.offered++;
    this.send(this.next++, now, w);
  }

  // ---- probe ----

  private probeIntendedUs(k: number): number {
    return Math.floor((k * 1e6) / this.probeRate);
  }

  private probePump = (): void => {
    this.probeTimer = null;
    if (this.stopping || !this.probePool) return;
    const now = this.nowUs();
    while (this.probeNext < this.probeTotal) {
      const k = requestOf(this.share, this.probeNext);
      const intended = this.probeIntendedUs(k);
      if (intended > now) break;
      this.probeFire(k, intended);
      this.probeNext++;
    }
    if (this.probeNext < this.probeTotal) this.probeTimer = this.wake(this.probePump, this.probeIntendedUs(requestOf(this.share, this.probeNext)));
  };

  private probeFire(k: number, intended: number): void {
    const code = PROBE_CODES[k % 3];
    this.probeTotals.offered++;
    if (this.probeInFlight >= this.probeMaxInFlight) {
      this.probeTotals.dropped++;
      this.secProbe.dropped++;
      this.writer.row(code, intended, 0, 0, -1, 0, 0);
      return;
    }
    let path = '';
    if (code === 1) {
      const c = this.o.customers[hash32(this.o.seed ^ PROBE_SALT, k) % this.o.customers.length];
      const from = new Date(Date.now() - 30 * 86_400_000).toISOString();
      path = `${this.probeBase}${AGGREGATE_PATH}?customer_id=${encodeURIComponent(c)}&from=${encodeURIComponent(from)}`;
    }
    const x = this.exchange(code, intended, 0, -1);
    x.request = code === 1 ? getRequest(path, this.host, this.apiKey) : this.probeFixed[code - 2];
    this.probeInFlight++;
    (this.probePool as SocketPool).dispatch(x);
  }

  // ---- completion ----

  /** x has ended (the pool settles each exchange exactly once): its row, its counts, its slot. */
  done(x: Exchange, status: number): void {
    if (x.sent < 0) {
      // Failed before it was ever written (connect error, aborted while waiting): a transport error
      // at this moment; it still held a slot, so it is a row like any other.
      this.written(x);
      status = 0;
    }
    // Read after written(): `sent` is taken first, so done >= sent holds (the reader refuses a row
    // finished before it was sent, and with it the whole stream).
    const done = this.nowUs();
    const r = x;
    this.writer.row(r.code, r.intended, r.sent, done, status, r.events, r.quantity);
    const good = isOk(status);
    if (r.code === INGEST_CODE) {
      this.inFlight--;
      this.sec.done++;
      // Schedule lag is taken here rather than at the write: a re-sent request's `sent` is its last write.
      this.lagHist.recordValue(Math.min(r.sent - r.intended, MAX_TRACKED_US));
      const lat = Math.min(done - r.sent, MAX_TRACKED_US);
      this.secHist.recordValue(lat);
      this.latHist.recordValue(lat);
      if (good) {
        this.ok++;
        this.eventsOk += r.events;
        this.quantityOk += r.quantity;
      } else {
        this.failed++;
        this.sec.failed++;
      }
      if (r.worker >= 0 && !this.stopping) this.workerNext(r.worker);
    } else {
      this.probeInFlight--;
      this.secProbe.done++;
      if (good) this.probeTotals.ok++;
      else {
        this.probeTotals.failed++;
        this.secProbe.failed++;
      }
    }
    x.reset();
    this.free.push(x);
    if (this.stopping && this.inFlight === 0 && this.probeInFlight === 0) this.drained?.();
  }

  // ---- progress, end ----

  private tickProgress = (): void => {
    this.second++;
    const p99 = this.secHist.totalCount ? this.secHist.getValueAtPercentile(99) / 1000 : null;
    this.emit({
      type: 'progress',
      second: this.second,
      ...this.sec,
      p99_ms: p99,
      in_flight: this.inFlight,
      probe: this.probePool ? { ...this.secProbe } : null,
    });
    this.sec = { offered: 0, sent: 0, done: 0, dropped: 0, failed: 0 };
    this.secProbe = { sent: 0, done: 0, failed: 0, dropped: 0 };
    this.secHist.reset();
    this.memory.tick(this.second);
    if (this.ended) return;
    // Aligned to whole seconds since start, so one-second lines do not drift either.
    this.progressTimer = setTimeout(this.tickProgress, Math.max(1, (this.second + 1) * 1000 - (performance.now() - this.t0.ms)));
  };

  /**
   * At the end of the duration: send whatever is still due (every scheduled request's intended time is
   * before the end, so none is lost to a timer firing early or late), then drain.
   */
  private endCheck = (): void => {
    this.endTimer = null;
    const now = this.nowUs();
    if (now < this.durationUs) {
      this.endTimer = setTimeout(this.endCheck, Math.max(1, Math.ceil((this.durationUs - now) / 1000)));
      return;
    }
    if (this.o.mode === 'open') this.pump();
    this.probePump();
    this.beginDrain(this.o.drainSeconds);
  };

  private beginDrain(seconds: number): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const t of [this.timer, this.probeTimer]) if (t) clear(t);
    if (this.endTimer) clearTimeout(this.endTimer);
    this.timer = this.probeTimer = this.endTimer = null;
    if (this.inFlight === 0 && this.probeInFlight === 0) {
      this.drained?.();
      return;
    }
    // Whatever has not answered by then is aborted: the pool settles it as a transport error (status
    // 0), so the stream still accounts for every request that was sent.
    setTimeout(() => {
      this.pool.destroy();
      this.probePool?.destroy();
    }, seconds * 1000).unref();
  }

  private async finish(): Promise<LoadSummary> {
    this.stopping = true;
    this.ended = true;
    if (this.progressTimer) clearTimeout(this.progressTimer);
    const cpu = process.cpuUsage(this.cpu0);
    const elapsed = this.t0.ms ? (performance.now() - this.t0.ms) / 1000 : 0;
    await Promise.allSettled([this.pool.close(), this.probePool?.close()]);
    await this.writer.close({ cutShort: this.interrupted, reason: this.reason });
    const q = (h: ReturnType<typeof histogram>, p: number) => (h.totalCount ? h.getValueAtPercentile(p) / 1000 : null);
    return {
      type: 'summary',
      run_tag: this.o.runTag,
      mode: this.o.mode,
      stream: this.o.out,
      rows: this.writer.rows,
      scheduled: this.total,
      offered: this.offered,
      sent: this.sent,
      ok: this.ok,
      failed: this.failed,
      dropped: this.dropped,
      events_sent: this.eventsSent,
      quantity_sent: this.quantitySent,
      events_ok: this.eventsOk,
      quantity_ok: this.quantityOk,
      probe: { ...this.probeTotals },
      latency_p50_ms: q(this.latHist, 50),
      latency_p99_ms: q(this.latHist, 99),
      schedule_lag_p50_ms: q(this.lagHist, 50),
      schedule_lag_p99_ms: q(this.lagHist, 99),
      cpu_user_us: cpu.user,
      cpu_system_us: cpu.system,
      cpu_us_per_request: this.sent ? (cpu.user + cpu.system) / this.sent : null,
      elapsed_s: Math.round(elapsed * 1000) / 1000,
      interrupted: this.interrupted,
      reason: this.reason,
      memory: this.memory.series(),
      ...(this.o.startAtMs ? { start_at_ms: this.o.startAtMs, start_late_ms: this.startLateMs ?? 0 } : {}),
    };
  }
}

function clear(t: NodeJS.Timeout | NodeJS.Immediate): void {
  if ('hasRef' in t && 'refresh' in t) clearTimeout(t as NodeJS.Timeout);
  else clearImmediate(t as NodeJS.Immediate);
}

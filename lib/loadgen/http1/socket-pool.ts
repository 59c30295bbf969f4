// The generator's connections: keep-alive HTTP/1.1 connections (connection.ts), one request at a time
// each, up to one per request slot, like k6's VUs each holding a connection. The pool is the same
// shape the undici-based one had, for the same reasons:
//
// - A request that finds no idle connection waits in a FIFO for the first one to free up, and new
//   connections are opened at most MAX_CONNECTING at a time. Opening one per waiting request (what a
//   general-purpose pool does) turns a 30-ms hiccup at 10k requests/s into hundreds of connects, which
//   cost the generator's event loop more than the hiccup did: replies are read late, more connections
//   open, and the run ends in a storm of drops that measures the generator, not the server.
// - Every request still holds its slot while it waits: the generator's drop rule is unchanged. Its
//   `sent` is taken when its bytes are written to a socket, so a wait for a connection is schedule lag
//   (sent - intended), not server time, as k6 keeps blocked time out of http_req_duration.
// - Idle connections are reused most recently used first: few sockets stay hot.
//
// warm() opens connections before the schedule starts, each carrying one GET (the health check), so
// the run starts on connections that have been used once (handshake, buffers, the server's accept
// and its first request all done). A connection the server's Keep-Alive hint says is about to expire
// is closed rather than reused. A request with no answer after the request timeout, and a connect
// with none after the connect timeout, are ended by a sweep once a second (not a timer per request).
import { ConnState, Connection, type ConnectionEvents, type Endpoint } from './connection';
import { Exchange, WARM_UP, type ExchangeOwner } from './exchange';

const MAX_CONNECTING = 16;
const CONNECT_TIMEOUT_MS = 10_000;
const SWEEP_MS = 1000;

export class SocketPool implements ConnectionEvents {
  private readonly conns = new Set<Connection>();
  /** Idle connections, most recently used last. */
  private readonly idle: Connection[] = [];
  private waitHead: Exchange | null = null;
  private waitTail: Exchange | null = null;
  private connecting = 0;
  private closing = false;
  private warming: (() => void) | null = null;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly maxConnections: number,
    private readonly owner: ExchangeOwner,
    private readonly requestTimeoutMs: number,
  ) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  get size(): number {
    return this.conns.size;
  }

  /** Opens n connections now, each carrying one GET of `request`; resolves when all have answered or failed. */
  warm(n: number, request: Buffer): Promise<void> {
    const count = Math.min(n, this.maxConnections) - this.conns.size;
    if (count <= 0 || this.closing) return Promise.resolve();
    return new Promise((resolve) => {
      let left = count;
      this.warming = () => {
        if (--left === 0) {
          this.warming = null;
          resolve();
        }
      };
      for (let i = 0; i < count; i++) {
        const x = new Exchange();
        x.code = WARM_UP;
        x.request = request;
        this.open(x);
      }
    });
  }

  /** Sends x on an idle connection, on a new one, or when one frees up. */
  dispatch(x: Exchange): void {
    if (this.closing) {
      this.settle(x, 0);
      return;
    }
    const c = this.takeIdle();
    if (c) c.send(x);
    else if (this.conns.size < this.maxConnections && this.connecting < MAX_CONNECTING) this.open(x);
    else {
      if (this.waitTail) this.waitTail.next = x;
      else this.waitHead = x;
      this.waitTail = x;
    }
  }

  /** Aborts everything: waiting requests and requests on the wire end as transport errors. */
  destroy(): void {
    this.closing = true;
    clearInterval(this.sweeper);
    for (let x = this.dequeue(); x; x = this.dequeue()) this.settle(x, 0);
    for (const c of this.conns) c.destroy();
  }

  /** At the end of a run (nothing in flight): closes every connection. */
  close(): Promise<void> {
    this.destroy();
    return Promise.resolve();
  }

  // ---- ConnectionEvents ----

  connected(): void {
    this.connecting--;
    this.openForWaiting();
  }

  written(_c: Connection, x: Exchange): void {
    if (x.code !== WARM_UP) this.owner.written(x);
  }

  answered(c: Connection, x: Exchange, status: number): void {
    if (c.state === ConnState.Idle) {
      const next = this.dequeue();
      if (next) c.send(next);
      else this.idle.push(c);
    }
    this.settle(x, status);
  }

  closed(c: Connection, x: Exchange | null, resend: boolean): void {
    this.conns.delete(c);
    if (!c.didConnect) this.connecting--;
    const i = this.idle.lastIndexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
    if (x) {
      if (resend && !this.closing) {
        x.resent = true;
        this.dispatch(x);
      } else this.settle(x, 0);
    }
    this.openForWaiting();
  }

  // ---- inside ----

  private settle(x: Exchange, status: number): void {
    if (x.code === WARM_UP) this.warming?.();
    else this.owner.done(x, status);
  }

  private open(x: Exchange): void {
    this.connecting++;
    this.conns.add(new Connection(this, this.endpoint, x));
  }

  private takeIdle(): Connection | null {
    while (this.idle.length) {
      const c = this.idle.pop() as Connection;
      if (c.state !== ConnState.Idle) continue;
      if (c.idleLimitMs >= 0 && performance.now() - c.since > c.idleLimitMs) {
        c.destroy();
        continue;
      }
      return c;
    }
    return null;
  }

  private dequeue(): Exchange | null {
    const x = this.waitHead;
    if (x) {
      this.waitHead = x.next;
      if (!this.waitHead) this.waitTail = null;
      x.next = null;
    }
    return x;
  }

  /** Connections may be opened again (one connected or closed): give them to waiting requests. */
  private openForWaiting(): void {
    while (this.waitHead && !this.closing && this.conns.size < this.maxConnections && this.connecting < MAX_CONNECTING) {
      this.open(this.dequeue() as Exchange);
    }
  }

  private sweep(): void {
    const now = performance.now();
    for (const c of this.conns) {
      const age = now - c.since;
      if (c.state === ConnState.Busy && age > this.requestTimeoutMs) {
        c.timedOut = true;
        c.destroy();
      } else if (c.state === ConnState.Connecting && age > CONNECT_TIMEOUT_MS) c.destroy();
      else if (c.state === ConnState.Idle && c.idleLimitMs >= 0 && age > c.idleLimitMs) c.destroy();
    }
  }
}

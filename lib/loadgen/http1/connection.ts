// One keep-alive HTTP/1.1 connection of the generator: one request at a time (no pipelining: a slow
// answer must not delay the requests queued behind it, and one request per connection is what k6,
// wrk and autocannon measure with).
//
// Why not node:http or undici: per request they make promises, closures, header objects and
// strings, and undici's dispatcher state machine ran on every reply; at 10k requests/s that was most
// of the generator's CPU (docs/benchmarks.md, profile). Here a request is one buffer written in one
// write, and a reply is bytes fed to ResponseParser, which only finds its status and its end.
//
// Plain sockets read with `onread` into one buffer shared by every connection (the callbacks run one
// at a time and the parser keeps nothing of it): no Buffer and no stream machinery per read. TLS
// sockets (an https URL) read with 'data' events; the rest is the same.
//
// A kept-alive connection the server closes: if it closes while idle, the pool forgets it. If it
// closes after a request was written on it and before any byte of the answer came, the server most
// likely closed it as idle at the moment the request left (the keep-alive race every HTTP/1.1 client
// has); the request is sent again, once, on another connection, as Go's net/http does for a request
// on a reused connection that carries an idempotency key (ours do: `<run tag>-<n>-<position>` per
// event, deduplicated by the server). A connection's first request is never re-sent, nor one that had
// part of its answer, nor one that timed out: those are transport errors (status 0).
import net from 'node:net';
import tls from 'node:tls';
import type { Exchange } from './exchange';
import { ResponseParser, type ResponseSink } from './response-parser';

export interface Endpoint {
  host: string;
  port: number;
  tls: boolean;
}

/** What a connection tells its pool. */
export interface ConnectionEvents {
  /** Connected: its first request has just been written. */
  connected(c: Connection): void;
  written(c: Connection, x: Exchange): void;
  /** A whole answer to x came; c.state says whether c may carry the next request. */
  answered(c: Connection, x: Exchange, status: number): void;
  /** c is closed and gone; x was on it with no (whole) answer, and is not re-sent when resend is false. */
  closed(c: Connection, x: Exchange | null, resend: boolean): void;
}

export const enum ConnState {
  Connecting,
  Idle,
  Busy,
  Closed,
}

/**
 * Stop reusing a connection this long before the server's Keep-Alive timeout runs out (undici's
 * keepAliveTimeoutThreshold is the same idea): the hint is in whole seconds and our clock is not the
 * server's. A hint of 1 s or less means the connection is not reused at all.
 */
const KEEP_ALIVE_MARGIN_MS = 1000;

const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

export class Connection implements ResponseSink {
  state = ConnState.Connecting;
  /** The request on the wire (or waiting for the connect); null when idle. */
  current: Exchange | null;
  /** Whole answers read on this connection. */
  answered = 0;
  /** performance.now() of the last change: connect started, request written, answer ended. */
  since: number;
  /** After an answer: how long it may idle before the server is likely to close it (-1: no hint). */
  idleLimitMs = -1;
  /** It connected (the pool counts connections still connecting). */
  didConnect = false;
  /** The pool's sweep gave up on its request (no re-send). */
  timedOut = false;
  private readonly parser = new ResponseParser(this);
  private readonly socket: net.Socket;
  /** The status of the answer the parser finished in the current read; -1 when none. */
  private gotStatus = -1;
  private gotReuse = false;
  /** Bytes came that answer nothing: the connection is not trusted any more. */
  private unsolicited = false;

  constructor(
    private readonly events: ConnectionEvents,
    ep: Endpoint,
    first: Exchange,
  ) {
    this.current = first;
    this.since = performance.now();
    if (ep.tls) {
      const s = tls.connect({ host: ep.host, port: ep.port, servername: net.isIP(ep.host) ? undefined : ep.host, ALPNProtocols: ['http/1.1'] });
      s.setNoDelay(true);
      s.on('secureConnect', () => this.onConnect());
      s.on('data', (d: Buffer) => this.onRead(d, d.length));
      this.socket = s;
    } else {
      this.socket = net.connect({
        host: ep.host,
        port: ep.port,
        noDelay: true,
        onread: {
          buffer: READ_BUFFER,
          callback: (n: number, buf: Uint8Array) => {
            this.onRead(buf as Buffer, n);
            return true;
          },
        },
      });
      this.socket.on('connect', () => this.onConnect());
    }
    // Errors end in 'close', where the request on the connection is settled.
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => this.onClose());
  }

  /** Writes x on this (connected, idle) connection. */
  send(x: Exchange): void {
    this.state = ConnState.Busy;
    this.current = x;
    this.since = performance.now();
    this.socket.write(x.request);
    this.events.written(this, x);
  }

  /** Closes it now; a request on it is settled by 'close' (a transport error, never re-sent). */
  destroy(): void {
    if (this.state === ConnState.Closed) return;
    this.state = ConnState.Closed;
    this.socket.destroy();
  }

  onResponse(status: number, reuse: boolean): void {
    if (this.current === null || this.gotStatus >= 0) {
      this.unsolicited = true;
      return;
    }
    this.gotStatus = status;
    this.gotReuse = reuse;
  }

  private onConnect(): void {
    if (this.state !== ConnState.Connecting) return;
    this.didConnect = true;
    this.events.connected(this);
    const x = this.current;
    if (x) this.send(x);
    else this.state = ConnState.Idle;
  }

  private onRead(buf: Buffer, n: number): void {
    const ok = this.parser.execute(buf, 0, n);
    if (this.gotStatus >= 0) this.answer();
    if (!ok || this.unsolicited) this.destroy();
  }

  /** The answer the parser just finished: settle the request and say whether the connection goes on. */
  private answer(): void {
    const x = this.current as Exchange;
    const status = this.gotStatus;
    this.gotStatus = -1;
    this.current = null;
    this.answered++;
    this.since = performance.now();
    let reuse = this.gotReuse && !this.unsolicited && this.state === ConnState.Busy;
    const hint = this.parser.keepAliveMs;
    if (hint >= 0) {
      this.idleLimitMs = hint - KEEP_ALIVE_MARGIN_MS;
      if (this.idleLimitMs <= 0) reuse = false;
    }
    if (reuse) this.state = ConnState.Idle;
    else this.destroy();
    this.events.answered(this, x, status);
  }

  private onClose(): void {
    const wasConnecting = this.state === ConnState.Connecting;
    this.state = ConnState.Closed;
    // A body that runs until the close has just ended (a server without Content-Length or chunked).
    if (this.current && this.parser.finish() && this.gotStatus >= 0) {
      this.answer();
      this.events.closed(this, null, false);
      return;
    }
    const x = this.current;
    this.current = null;
    const resend = x !== null && !wasConnecting && !this.timedOut && !this.parser.started && this.answered > 0 && !x.resent;
    this.events.closed(this, x, resend);
  }
}

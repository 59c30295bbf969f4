// One request and what the generator keeps of it until its row is written: the fields of the sample
// row, the bytes to send, and a link for the pool's wait queue. The generator recycles them (a free
// list as long as the most requests ever in flight), so the hot path makes no object per request but
// the request's bytes.

export class Exchange {
  /** Scenario code (index into SCENARIOS); WARM_UP for the pool's own warm-up requests. */
  code = 0;
  /** µs from the start of the repeat. */
  intended = 0;
  /** When its bytes were written to a socket (µs); -1 until then. */
  sent = -1;
  events = 0;
  quantity = 0;
  /** Closed loop: the worker that sent it; -1 in the open loop and the probe. */
  worker = -1;
  request: Buffer = EMPTY;
  /** Sent again already, once, after a kept-alive connection closed under it (see connection.ts). */
  resent = false;
  /** The next exchange in the pool's wait queue. */
  next: Exchange | null = null;

  reset(): void {
    this.sent = -1;
    this.resent = false;
    this.next = null;
    this.request = EMPTY;
  }
}

const EMPTY = Buffer.alloc(0);

/** The code of a request the pool sends on its own to open and warm a connection (never a row). */
export const WARM_UP = -1;

/** Who is told about each exchange: the generator. */
export interface ExchangeOwner {
  /** Its bytes were written to a socket (again, if the pool re-sent it). */
  written(x: Exchange): void;
  /** It ended: an HTTP status, or 0 for a transport error (refused, reset, timed out, unparsable). */
  done(x: Exchange, status: number): void;
}

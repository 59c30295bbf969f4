// A minimal HTTP/1.1 response parser for the generator's hot path: it reads the status code and the
// framing of each response and skips its body. The generator needs nothing else from a reply (the
// sample row keeps the status; bodies are never read), so no header is turned into a string and no
// object is made per response.
//
// What it reads (RFC 9112):
// - the status line `HTTP/1.x SSS reason`; 1xx answers (except 101) are interim and skipped, the final
//   answer follows them;
// - framing, in the RFC's order: 204/304 have no body; `Transfer-Encoding` ending in `chunked` is
//   chunked (chunk extensions and trailers are skipped); another transfer coding, or neither it nor
//   `Content-Length`, means the body runs until the server closes (section 6.3, rule 8);
//   `Content-Length` otherwise (several different values are an error, as the RFC says);
// - `Connection: close` (and HTTP/1.0 without `Connection: keep-alive`): the connection is not reused;
// - `Keep-Alive: timeout=N`: how long the server keeps an idle connection, so the pool can stop using
//   one before the server closes it (undici and browsers read it the same way).
//
// Bytes may come in any cut: a head or a chunk-size line split across TCP reads, a body in many reads,
// several responses (or an interim one and the final one) in one read. The caller may reuse the buffer
// it passes in after execute() returns: a split head is copied, nothing else is kept.
//
// We never send HEAD or CONNECT, so a response's framing never depends on the request's method.

export interface ResponseSink {
  /** A whole response has been read. reuse: the connection may carry the next request. */
  onResponse(status: number, reuse: boolean): void;
}

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkExt,
  ChunkDataEnd,
  Trailer,
  TrailerLine,
  UntilClose,
}

const CR = 13;
const LF = 10;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
/** A response head larger than this is refused (node:http's own default limit is 16 KB). */
const MAX_HEAD = 64 * 1024;
const MAX_CHUNK = 2 ** 40;

const name = (s: string) => Buffer.from(s, 'latin1');
const CONTENT_LENGTH = name('content-length');
const TRANSFER_ENCODING = name('transfer-encoding');
const CONNECTION = name('connection');
const KEEP_ALIVE = name('keep-alive');
const CHUNKED = name('chunked');
const CLOSE = name('close');
const TIMEOUT = name('timeout=');

export class ResponseParser {
  /** Why the stream was refused; set when execute() returns false. */
  error: string | null = null;
  /** Bytes of the current response seen so far (0 between responses). */
  started = false;
  /** The server's Keep-Alive timeout hint in ms, from the latest response that gave one; -1 if none. */
  keepAliveMs = -1;
  private state = State.Head;
  /** A head split across reads, kept until its end arrives. */
  private partial: Buffer | null = null;
  private remaining = 0;
  private status = 0;
  private reuse = true;

  constructor(private readonly sink: ResponseSink) {}

  /** Parses buf[start, end). Returns false (and sets error) when the bytes are not an HTTP/1.x response. */
  execute(buf: Buffer, start: number, end: number): boolean {
    let p = start;
    while (p < end) {
      this.started = true;
      switch (this.state) {
        case State.Head: {
          let head = buf;
          let hs = p;
          let he: number;
          if (this.partial === null) {
            const i = buf.indexOf(HEAD_END, p);
            if (i < 0 || i + 4 > end) {
              this.keepPartial(buf, p, end);
              return this.error === null;
            }
            he = i + 4;
            p = he;
          } else {
            // Join what was kept with this read, and look for the end of the head across the seam.
            const old = this.partial.length;
            const joined = Buffer.concat([this.partial, buf.subarray(p, end)]);
            const i = joined.indexOf(HEAD_END, Math.max(0, old - 3));
            if (i < 0) {
              this.partial = null;
              this.keepPartial(joined, 0, joined.length);
              return this.error === null;
            }
            this.partial = null;
            head = joined;
            hs = 0;
            he = i + 4;
            p += he - old;
          }
          if (!this.parseHead(head, hs, he)) return false;
          break;
        }
        case State.Length: {
          const n = Math.min(this.remaining, end - p);
          p += n;
          this.remaining -= n;
          if (this.remaining === 0) this.complete();
          break;
        }
        case State.ChunkSize: {
          const c = buf[p++];
          const d = hexDigit(c);
          if (d >= 0) {
            this.remaining = this.remaining * 16 + d;
            if (this.remaining > MAX_CHUNK) return this.fail('chunk size too large');
          } else if (c === LF) this.endChunkSize();
          else if (c === CR || c === 59 /* ; */ || c === 32 || c === 9) this.state = State.ChunkExt;
          else return this.fail('bad chunk size');
          break;
        }
        case State.ChunkExt: {
          // Skip a chunk extension (or the CR) up to the end of the size line.
          const i = buf.indexOf(LF, p);
          if (i < 0 || i >= end) {
            p = end;
            break;
          }
          p = i + 1;
          this.endChunkSize();
          break;
        }
        case State.ChunkDataEnd: {
          // The chunk's data, then its CRLF: `remaining` counts both.
          const n = Math.min(this.remaining, end - p);
          p += n;
          this.remaining -= n;
          if (this.remaining === 0) {
            if (buf[p - 1] !== LF) return this.fail('chunk not followed by CRLF');
            this.state = State.ChunkSize;
          }
          break;
        }
        case State.Trailer: {
          // At the start of a trailer line: an empty line ends the message.
          const c = buf[p++];
          if (c === LF) this.complete();
          else if (c !== CR) this.state = State.TrailerLine;
          break;
        }
        case State.TrailerLine: {
          const i = buf.indexOf(LF, p);
          if (i < 0 || i >= end) {
            p = end;
            break;
          }
          p = i + 1;
          this.state = State.Trailer;
          break;
        }
        case State.UntilClose:
          p = end;
          break;
      }
    }
    return true;
  }

  /**
   * The server closed the connection. Returns true when that ended a response whose body runs until
   * the close (it has been reported to the sink); false when a response was cut short or none was
   * under way (`started` tells the two apart).
   */
  finish(): boolean {
    if (this.state === State.UntilClose) {
      this.reuse = false;
      this.complete();
      return true;
    }
    return false;
  }

  private keepPartial(buf: Buffer, from: number, to: number): void {
    if (to - from > MAX_HEAD) {
      this.fail('response head too large');
      return;
    }
    // Copied: the caller's read buffer is reused for the next read.
    this.partial = Buffer.from(buf.subarray(from, to));
  }

  private parseHead(b: Buffer, hs: number, he: number): boolean {
    // "HTTP/1.x SSS"
    if (he - hs < 16 || b[hs] !== 72 || b[hs + 1] !== 84 || b[hs + 2] !== 84 || b[hs + 3] !== 80 || b[hs + 4] !== 47 || b[hs + 5] !== 49 || b[hs + 6] !== 46 || b[hs + 8] !== 32) {
      return this.fail('not an HTTP/1.x status line');
    }
    const minor = b[hs + 7] - 48;
    const s0 = b[hs + 9] - 48;
    const s1 = b[hs + 10] - 48;
    const s2 = b[hs + 11] - 48;
    if (minor < 0 || minor > 9 || s0 < 1 || s0 > 5 || s1 < 0 || s1 > 9 || s2 < 0 || s2 > 9) return this.fail('bad status line');
    const status = s0 * 100 + s1 * 10 + s2;
    let length = -1;
    let chunked = false;
    let otherCoding = false;
    let close = minor === 0;
    // Header lines: from after the status line to the blank line.
    let ls = b.indexOf(LF, hs) + 1;
    while (ls < he - 2) {
      let le = b.indexOf(LF, ls);
      if (le < 0 || le >= he) le = he - 1;
      const colon = b.indexOf(58, ls);
      if (colon > ls && colon < le) {
        const n = colon - ls;
        let vs = colon + 1;
        while (vs < le && (b[vs] === 32 || b[vs] === 9)) vs++;
        let ve = le;
        while (ve > vs && (b[ve - 1] === CR || b[ve - 1] === 32 || b[ve - 1] === 9)) ve--;
        if (n === 14 && sameName(b, ls, CONTENT_LENGTH)) {
          const v = parseDecimal(b, vs, ve);
          if (v < 0 || (length >= 0 && v !== length)) return this.fail('bad Content-Length');
          length = v;
        } else if (n === 17 && sameName(b, ls, TRANSFER_ENCODING)) {
          // The last coding decides: chunked last is chunked framing, anything else reads to the close.
          if (ve - vs >= 7 && sameName(b, ve - 7, CHUNKED) && (ve - vs === 7 || b[ve - 8] === 44 || b[ve - 8] === 32 || b[ve - 8] === 9)) {
            chunked = true;
            otherCoding = false;
          } else {
            chunked = false;
            otherCoding = true;
          }
        } else if (n === 10 && sameName(b, ls, CONNECTION)) {
          if (hasToken(b, vs, ve, CLOSE)) close = true;
          else if (hasToken(b, vs, ve, KEEP_ALIVE)) close = false;
        } else if (n === 10 && sameName(b, ls, KEEP_ALIVE)) {
          const t = findToken(b, vs, ve, TIMEOUT);
          if (t >= 0) {
            let e = t;
            while (e < ve && b[e] >= 48 && b[e] <= 57) e++;
            const secs = parseDecimal(b, t, e);
            if (secs >= 0) this.keepAliveMs = secs * 1000;
          }
        }
      }
      ls = le + 1;
    }
    if (status >= 100 && status < 200) {
      if (status === 101) return this.fail('101 Switching Protocols: never asked for');
      // Interim: the final response follows on the same connection.
      this.state = State.Head;
      return true;
    }
    this.status = status;
    this.reuse = !close;
    if (status === 204 || status === 304) this.complete();
    else if (chunked) {
      this.remaining = 0;
      this.state = State.ChunkSize;
    } else if (otherCoding || length < 0) {
      this.reuse = false;
      this.state = State.UntilClose;
    } else if (length === 0) this.complete();
    else {
      this.remaining = length;
      this.state = State.Length;
    }
    return true;
  }

  private endChunkSize(): void {
    if (this.remaining === 0) this.state = State.Trailer;
    else {
      this.remaining += 2; // the data, then its CRLF
      this.state = State.ChunkDataEnd;
    }
  }

  private complete(): void {
    this.state = State.Head;
    this.started = false;
    this.remaining = 0;
    this.sink.onResponse(this.status, this.reuse);
  }

  private fail(why: string): false {
    this.error = why;
    return false;
  }
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** b[at, at + lower.length) equals `lower`, ASCII case-insensitively. */
function sameName(b: Buffer, at: number, lower: Buffer): boolean {
  for (let i = 0; i < lower.length; i++) {
    let c = b[at + i];
    if (c >= 65 && c <= 90) c |= 0x20;
    if (c !== lower[i]) return false;
  }
  return true;
}

/** A non-negative decimal integer filling b[s, e); -1 if it is not one. */
function parseDecimal(b: Buffer, s: number, e: number): number {
  if (e <= s || e - s > 15) return -1;
  let v = 0;
  for (let i = s; i < e; i++) {
    const d = b[i] - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** Position just after `lower` (case-insensitive) in b[s, e), at a token start; -1 if absent. */
function findToken(b: Buffer, s: number, e: number, lower: Buffer): number {
  for (let i = s; i + lower.length <= e; i++) {
    if ((i === s || b[i - 1] === 44 || b[i - 1] === 32 || b[i - 1] === 9) && sameName(b, i, lower)) return i + lower.length;
  }
  return -1;
}

/** The comma-separated list b[s, e) holds the token `lower` (case-insensitive). */
function hasToken(b: Buffer, s: number, e: number, lower: Buffer): boolean {
  const at = findToken(b, s, e, lower);
  if (at < 0) return false;
  let i = at;
  while (i < e && (b[i] === 32 || b[i] === 9)) i++;
  return i === e || b[i] === 44;
}

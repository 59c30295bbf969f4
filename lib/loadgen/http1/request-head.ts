// Requests as bytes, made once where they can be. Every ingest request has the same head but for its
// Content-Length, so the head is serialized once up to that header's value; per request only the
// length's digits and the body (BodyMaker.encode) are written, into one buffer that goes to the socket
// in one write (one syscall, no writev of head and body, no string to encode).
//
// The headers are what any Hardcount-compatible server needs and nothing more: Host (HTTP/1.1 requires
// it), Content-Type and Content-Length on the POST, Authorization. No `Connection` header: HTTP/1.1
// connections are persistent unless a side says otherwise.
import { intLength, writeInt } from '../ascii-int';
import type { BodyMaker } from '../body';

/** CR LF CR LF plus the longest Content-Length we write (a body is at most a few MB). */
const LENGTH_ROOM = 16 + 4;

function headerLines(host: string, apiKey: string): string {
  return `Host: ${host}\r\n${apiKey ? `Authorization: Bearer ${apiKey}\r\n` : ''}`;
}

/** A whole GET request: `GET path HTTP/1.1` and the common headers. */
export function getRequest(path: string, host: string, apiKey: string): Buffer {
  return Buffer.from(`GET ${path} HTTP/1.1\r\n${headerLines(host, apiKey)}\r\n`, 'latin1');
}

/** Ingest POSTs for one run: request n's bytes (head and body) in one buffer. */
export class IngestRequests {
  private readonly prefix: Buffer;
  /** Where the body is encoded: after the longest possible head, so the head is put right before it. */
  private scratch: Buffer;
  private readonly bodyAt: number;
  /** The quantity of the batch make() built last. */
  quantity = 0;
  /** The events of the batch make() built last (its drawn size, issue 35). */
  events = 0;

  constructor(
    path: string,
    host: string,
    apiKey: string,
    private readonly bodies: BodyMaker,
  ) {
    this.prefix = Buffer.from(`POST ${path} HTTP/1.1\r\n${headerLines(host, apiKey)}Content-Type: application/json\r\nContent-Length: `, 'latin1');
    this.bodyAt = this.prefix.length + LENGTH_ROOM;
    this.scratch = Buffer.allocUnsafe(this.bodyAt + bodies.maxBytes);
  }

  /**
   * Request n, as bytes to write. A fresh buffer each time (a small one comes from Node's shared
   * pool): the socket may still hold the previous request's bytes when the next one is built.
   */
  make(n: number): Buffer {
    const s = this.scratch;
    const end = this.bodies.encode(n, s, this.bodyAt);
    this.quantity = this.bodies.quantity;
    this.events = this.bodies.count;
    const length = end - this.bodyAt;
    // The head ends right where the body starts: its Content-Length digits and CR LF CR LF go just
    // before bodyAt, the fixed prefix before them.
    const digits = intLength(length);
    const start = this.bodyAt - 4 - digits - this.prefix.length;
    this.prefix.copy(s, start);
    let p = writeInt(s, start + this.prefix.length, length);
    s[p++] = 13;
    s[p++] = 10;
    s[p++] = 13;
    s[p++] = 10;
    const out = Buffer.allocUnsafe(end - start);
    s.copy(out, 0, start, end);
    return out;
  }
}

// Small HTTP helpers for node:http: JSON answers, a body reader with a hard size limit, and the one
// error type every handler throws for a 4xx (its `field` names the offending input).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorResponse } from '../lib/protocol/hardcount-api';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
    /** Answer with `connection: close` (the client may still be sending a body we will not read). */
    readonly closeConnection = false,
  ) {
    super(message);
  }
  body(): ErrorResponse {
    return this.field === undefined ? { error: this.message } : { error: this.message, field: this.field };
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * The request body as text, at most `limit` bytes. An over-limit body is read to its end and discarded
 * before the 413 goes out, so that a client still sending reads the answer instead of a reset
 * connection; past DRAIN_FACTOR x limit (or a declared length that large) the answer goes out at once
 * and the connection is closed.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const tooLarge = (close = false) => new HttpError(413, `body over ${limit} bytes`, 'body', close);
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit * DRAIN_FACTOR) return Promise.reject(tooLarge(true));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        if (size > limit * DRAIN_FACTOR) settle(() => reject(tooLarge(true)));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () =>
      settle(() => {
        if (size > limit) reject(tooLarge());
        else resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
      }),
    );
    req.on('error', (err) => settle(() => reject(err)));
  });
}

const DRAIN_FACTOR = 8;

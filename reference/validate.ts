// Validation of an ingest body, before any database work: every 4xx names the field it is about
// (e.g. "events[3].quantity"), and one bad event refuses the whole batch (all or nothing).
import { MAX_BATCH, type UsageEventIn } from '../lib/protocol/hardcount-api';
import { HttpError } from './http-util';

/** An event that passed validation; `properties` is already JSON text for the jsonb column. */
export interface ValidEvent {
  customer: string;
  meter: string;
  quantity: number;
  idempotencyKey: string;
  properties: string;
  /** The client's timestamp as given (RFC 3339, checked), for the timestamptz column; null: the service's time. */
  occurredAt: string | null;
  /** The same instant in ms since the epoch (the drop-late test switch reads it); null without one. */
  occurredAtMs: number | null;
}

/** Longest customer id, meter key or idempotency key accepted. */
export const MAX_KEY_LENGTH = 255;

export function parseIngestBody(text: string): ValidEvent[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'malformed JSON', 'body');
  }
  if (!isObject(body)) throw new HttpError(400, 'body must be a JSON object with an events array', 'body');
  const events = body.events;
  if (!Array.isArray(events)) throw new HttpError(400, 'events must be an array', 'events');
  if (events.length === 0) throw new HttpError(400, 'events is empty: a batch has 1 to ' + MAX_BATCH + ' events', 'events');
  if (events.length > MAX_BATCH) {
    throw new HttpError(400, `batch of ${events.length} events is over the limit of ${MAX_BATCH}`, 'events');
  }
  const out: ValidEvent[] = new Array(events.length);
  for (let i = 0; i < events.length; i++) out[i] = validateEvent(events[i], `events[${i}]`);
  return out;
}

function validateEvent(e: unknown, at: string): ValidEvent {
  if (!isObject(e)) throw new HttpError(400, 'an event must be a JSON object', at);
  const ev = e as Partial<Record<keyof UsageEventIn, unknown>>;
  const customer = text(ev.customer_id, `${at}.customer_id`);
  const meter = text(ev.meter, `${at}.meter`);
  const q = ev.quantity;
  const qf = `${at}.quantity`;
  if (typeof q !== 'number' || !Number.isFinite(q)) throw new HttpError(400, 'quantity must be a number', qf);
  if (q < 0) throw new HttpError(400, 'quantity must not be negative', qf);
  if (!Number.isInteger(q)) throw new HttpError(400, 'quantity must be an integer', qf);
  if (!Number.isSafeInteger(q)) throw new HttpError(400, 'quantity is too large', qf);
  const idempotencyKey = text(ev.idempotency_key, `${at}.idempotency_key`);
  let properties = '{}';
  if (ev.properties !== undefined) {
    if (!isObject(ev.properties)) throw new HttpError(400, 'properties must be a JSON object', `${at}.properties`);
    properties = JSON.stringify(ev.properties);
    // jsonb cannot hold U+0000; caught here so the error names the field instead of failing the batch with a 500.
    if (properties.includes('\\u0000')) throw new HttpError(400, 'properties must not contain U+0000', `${at}.properties`);
  }
  const stamp = ev.timestamp === undefined ? null : clientTimestamp(ev.timestamp, `${at}.timestamp`);
  return { customer, meter, quantity: q, idempotencyKey, properties, occurredAt: stamp && stamp.text, occurredAtMs: stamp && stamp.ms };
}

// RFC 3339's date-time (its section 5.6), with a zone: a fraction of at most 6 digits (PostgreSQL keeps
// microseconds), Z or an offset. Leap seconds are refused (PostgreSQL has none).
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * An event's client timestamp (issue 35; docs/your-service.md, "the service contract"): any instant
 * from year 1 to 9999, late or out of order alike, as Hardcount takes it. Refused only when it is not
 * an RFC 3339 date-time with a zone, or names a day or time that does not exist.
 */
function clientTimestamp(v: unknown, field: string): { text: string; ms: number } {
  const fix = 'must be an RFC 3339 date-time with a zone, e.g. "2026-12-05T16:30:00.123Z"';
  if (typeof v !== 'string') throw new HttpError(400, fix, field);
  const m = RFC3339.exec(v);
  if (!m) throw new HttpError(400, fix, field);
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  const days = mo === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(mo) ? 30 : 31;
  const tz = m[8].length > 1 ? [Number(m[9]), Number(m[10])] : [0, 0];
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days || h > 23 || mi > 59 || s > 59 || tz[0] > 23 || tz[1] > 59) throw new HttpError(400, `${fix}: no such day or time`, field);
  // Upper case (RFC 3339 allows a lower-case t and z): the one spelling both Date and PostgreSQL read.
  const text = v.toUpperCase();
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) throw new HttpError(400, fix, field);
  return { text, ms };
}

function text(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.length === 0) throw new HttpError(400, 'must be a non-empty string', field);
  if (v.length > MAX_KEY_LENGTH) throw new HttpError(400, `longer than ${MAX_KEY_LENGTH} characters`, field);
  // text columns cannot hold NUL
  if (v.includes('\u0000')) throw new HttpError(400, 'must not contain U+0000', field);
  return v;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

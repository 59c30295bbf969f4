// Request bodies of the ingest scenario: a batch of usage events in the wire shape of
// lib/protocol/hardcount-api.ts. Every event has a unique idempotency key (run tag, request index,
// position), a customer drawn from the list given, a quantity from the seeded counter-based generator
// and the run tag in properties.rig_run, so the database side counts exactly this repeat's rows.
//
// The JSON is assembled from pre-escaped pieces rather than JSON.stringify of objects: at 10k req/s
// the body is built on the generator's hot path. Between two requests only the customers, the
// quantities and the request number change, so encode() writes the body's bytes straight into the
// caller's buffer from pre-encoded pieces (one per customer with the meter after it, the key's prefix,
// the tail with the run tag) and digits; no string is made. make() gives the same body as a string
// and events() the same events as objects; a test checks the three agree.
//
// Issue 35, item 2: with batch sizes (lib/protocol/batch-sizes.ts) request n carries its own drawn size
// and its events' counters are n x MAX_BATCH + i (unique whatever the sizes); without them n x batch + i,
// as always, so the bodies are today's to the byte. With client timestamps (client-timestamps.ts) every
// event carries `"timestamp"`, its request's intended time as a wall-clock instant (epochMs, set when
// the schedule's time 0 is known, plus intendedUs(n)) less its seeded offset, in RFC 3339 with ms.
import { MAX_BATCH, RUN_TAG_PROPERTY, type IngestRequest, type UsageEventIn } from '../protocol/hardcount-api';
import type { BatchSizes } from '../protocol/batch-sizes';
import type { ClientTimestamps } from '../protocol/client-timestamps';
import { intLength, writeInt } from './ascii-int';
import { hash32, intIn } from './prng';

export interface BodyPlan {
  runTag: string;
  meter: string;
  customers: readonly string[];
  batch: number;
  seed: number;
  /** Quantities are drawn uniformly from [1, quantityMax]. */
  quantityMax: number;
  /** Request n's size drawn from a distribution; absent or null: `batch` events each. */
  sizes?: BatchSizes | null;
  /** Each event stamped with a client timestamp (needs intendedUs); absent or null: no timestamps. */
  timestamps?: ClientTimestamps | null;
  /** Request n's intended time, µs since the schedule's time 0. */
  intendedUs?: (n: number) => number;
}

export interface Body {
  json: string;
  /** Sum of the batch's quantities. */
  quantity: number;
}

const CUSTOMER_SALT = 0x5bd1e995;

/** Before an event's timestamp: it follows the idempotency key's digits. */
const STAMP = Buffer.from('","timestamp":"');
/** An RFC 3339 instant with ms, as toISOString writes it (24 characters; 27 for a six-digit year). */
const STAMP_ROOM = 27;

const OPEN = Buffer.from('{"events":[');
const CLOSE = Buffer.from(']}');

export class BodyMaker {
  private readonly customersJson: string[];
  private readonly head: string;
  private readonly keyPrefix: string;
  private readonly tail: string;
  /** Per customer: `{"customer_id":"…","meter":"…","quantity":` as UTF-8. */
  private readonly eventOpen: Buffer[];
  private readonly keyPrefixBytes: Buffer;
  private readonly tailBytes: Buffer;
  /** No body of this plan is longer (encode() writes into a buffer at least this long). */
  readonly maxBytes: number;
  /** Sum of the quantities of the body encode() wrote last. */
  quantity = 0;
  /** Events in the body encode() or make() wrote last. */
  count = 0;
  /** The wall-clock instant (ms since the epoch) of the schedule's time 0: what client timestamps count from. */
  epochMs = 0;
  private readonly stride: number;

  constructor(private readonly plan: BodyPlan) {
    if (plan.customers.length === 0) throw new Error('BodyMaker: the customer list is empty');
    this.customersJson = plan.customers.map((c) => JSON.stringify(c));
    this.head = `,"meter":${JSON.stringify(plan.meter)},"quantity":`;
    // The key is built from the run tag, which is checked to be [A-Za-z0-9._:-] (no escaping needed).
    this.keyPrefix = `,"idempotency_key":"${plan.runTag}-`;
    this.tail = `","properties":{${JSON.stringify(RUN_TAG_PROPERTY)}:${JSON.stringify(plan.runTag)}}}`;
    this.eventOpen = this.customersJson.map((c) => Buffer.from(`{"customer_id":${c}${this.head}`));
    this.keyPrefixBytes = Buffer.from(this.keyPrefix);
    this.tailBytes = Buffer.from(this.tail);
    const longestOpen = Math.max(...this.eventOpen.map((b) => b.length));
    const largest = plan.sizes ? plan.sizes.largest : plan.batch;
    const stamp = plan.timestamps ? STAMP.length + STAMP_ROOM : 0;
    if (plan.timestamps && !plan.intendedUs) throw new Error('BodyMaker: client timestamps need the schedule (intendedUs)');
    this.stride = plan.sizes ? MAX_BATCH : plan.batch;
    // per event: separator, the open piece, quantity, key prefix, request number, '-', position, its timestamp, tail
    const perEvent = 1 + longestOpen + intLength(plan.quantityMax) + this.keyPrefixBytes.length + 16 + 1 + intLength(largest) + stamp + this.tailBytes.length;
    this.maxBytes = OPEN.length + largest * perEvent + CLOSE.length;
  }

  /** Events in request n: its drawn size, or the batch. */
  sizeOf(n: number): number {
    const s = this.plan.sizes;
    return s ? s.of(n) : this.plan.batch;
  }

  /** Event i of request n's client timestamp, RFC 3339 in UTC with ms (plans with timestamps only). */
  stampOf(n: number, i: number): string {
    const t = this.plan.timestamps as ClientTimestamps;
    const intended = (this.plan.intendedUs as (n: number) => number)(n);
    return new Date(Math.floor(this.epochMs + intended / 1000) - t.offsetMs(n, i)).toISOString();
  }

  /**
   * Writes request n's body as UTF-8 into out at `at` (out must have maxBytes free there) and returns
   * the position after it; the batch's quantity is left in `quantity`, its size in `count`. Byte for
   * byte make(n).json.
   */
  encode(n: number, out: Buffer, at: number): number {
    const { seed, quantityMax } = this.plan;
    const customers = this.eventOpen;
    const size = this.sizeOf(n);
    const base = n * this.stride;
    const stamped = this.plan.timestamps != null;
    let p = at + OPEN.copy(out, at);
    let quantity = 0;
    for (let i = 0; i < size; i++) {
      const k = base + i;
      const q = intIn(seed, k, 1, quantityMax);
      quantity += q;
      if (i) out[p++] = 44; // ,
      p += customers[hash32(seed ^ CUSTOMER_SALT, k) % customers.length].copy(out, p);
      p = writeInt(out, p, q);
      p += this.keyPrefixBytes.copy(out, p);
      p = writeInt(out, p, n);
      out[p++] = 45; // -
      p = writeInt(out, p, i);
      if (stamped) {
        p += STAMP.copy(out, p);
        p += out.write(this.stampOf(n, i), p, 'latin1');
      }
      p += this.tailBytes.copy(out, p);
    }
    this.quantity = quantity;
    this.count = size;
    return p + CLOSE.copy(out, p);
  }

  /** Request n's body (n counts ingest requests from 0). */
  make(n: number): Body {
    const { seed, quantityMax, customers } = this.plan;
    const size = this.sizeOf(n);
    const base = n * this.stride;
    const stamped = this.plan.timestamps != null;
    let json = '{"events":[';
    let quantity = 0;
    for (let i = 0; i < size; i++) {
      const k = base + i;
      const q = intIn(seed, k, 1, quantityMax);
      quantity += q;
      const c = this.customersJson[hash32(seed ^ CUSTOMER_SALT, k) % customers.length];
      const stamp = stamped ? `","timestamp":"${this.stampOf(n, i)}` : '';
      json += `${i ? ',' : ''}{"customer_id":${c}${this.head}${q}${this.keyPrefix}${n}-${i}${stamp}${this.tail}`;
    }
    this.count = size;
    return { json: json + ']}', quantity };
  }

  /** The same batch as objects (tests, tools). */
  events(n: number): IngestRequest {
    const { seed, quantityMax, customers, meter, runTag } = this.plan;
    const size = this.sizeOf(n);
    const base = n * this.stride;
    const stamped = this.plan.timestamps != null;
    const events: UsageEventIn[] = [];
    for (let i = 0; i < size; i++) {
      const k = base + i;
      events.push({
        customer_id: customers[hash32(seed ^ CUSTOMER_SALT, k) % customers.length],
        meter,
        quantity: intIn(seed, k, 1, quantityMax),
        idempotency_key: `${runTag}-${n}-${i}`,
        ...(stamped ? { timestamp: this.stampOf(n, i) } : {}),
        properties: { [RUN_TAG_PROPERTY]: runTag },
      });
    }
    return { events };
  }
}

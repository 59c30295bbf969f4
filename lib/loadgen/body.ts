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
import { RUN_TAG_PROPERTY, type IngestRequest, type UsageEventIn } from '../protocol/hardcount-api';
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
}

export interface Body {
  json: string;
  /** Sum of the batch's quantities. */
  quantity: number;
}

const CUSTOMER_SALT = 0x5bd1e995;

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
    // per event: separator, the open piece, quantity, key prefix, request number, '-', position, tail
    const perEvent = 1 + longestOpen + intLength(plan.quantityMax) + this.keyPrefixBytes.length + 16 + 1 + intLength(plan.batch) + this.tailBytes.length;
    this.maxBytes = OPEN.length + plan.batch * perEvent + CLOSE.length;
  }

  /**
   * Writes request n's body as UTF-8 into out at `at` (out must have maxBytes free there) and returns
   * the position after it; the batch's quantity is left in `quantity`. Byte for byte make(n).json.
   */
  encode(n: number, out: Buffer, at: number): number {
    const { batch, seed, quantityMax } = this.plan;
    const customers = this.eventOpen;
    let p = at + OPEN.copy(out, at);
    let quantity = 0;
    for (let i = 0; i < batch; i++) {
      const k = n * batch + i;
      const q = intIn(seed, k, 1, quantityMax);
      quantity += q;
      if (i) out[p++] = 44; // ,
      p += customers[hash32(seed ^ CUSTOMER_SALT, k) % customers.length].copy(out, p);
      p = writeInt(out, p, q);
      p += this.keyPrefixBytes.copy(out, p);
      p = writeInt(out, p, n);
      out[p++] = 45; // -
      p = writeInt(out, p, i);
      p += this.tailBytes.copy(out, p);
    }
    this.quantity = quantity;
    return p + CLOSE.copy(out, p);
  }

  /** Request n's body (n counts ingest requests from 0). */
  make(n: number): Body {
    const { batch, seed, quantityMax, customers } = this.plan;
    let json = '{"events":[';
    let quantity = 0;
    for (let i = 0; i < batch; i++) {
      const k = n * batch + i;
      const q = intIn(seed, k, 1, quantityMax);
      quantity += q;
      const c = this.customersJson[hash32(seed ^ CUSTOMER_SALT, k) % customers.length];
      json += `${i ? ',' : ''}{"customer_id":${c}${this.head}${q}${this.keyPrefix}${n}-${i}${this.tail}`;
    }
    return { json: json + ']}', quantity };
  }

  /** The same batch as objects (tests, tools). */
  events(n: number): IngestRequest {
    const { batch, seed, quantityMax, customers, meter, runTag } = this.plan;
    const events: UsageEventIn[] = [];
    for (let i = 0; i < batch; i++) {
      const k = n * batch + i;
      events.push({
        customer_id: customers[hash32(seed ^ CUSTOMER_SALT, k) % customers.length],
        meter,
        quantity: intIn(seed, k, 1, quantityMax),
        idempotency_key: `${runTag}-${n}-${i}`,
        properties: { [RUN_TAG_PROPERTY]: runTag },
      });
    }
    return { events };
  }
}

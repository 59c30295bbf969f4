// Request bodies of the ingest scenario: a batch of usage events in the wire shape of
// lib/protocol/hardcount-api.ts. Every event has a unique idempotency key (run tag, request index,
// position), a customer drawn from the list given, a quantity from the seeded counter-based generator
// and the run tag in properties.rig_run, so the database side counts exactly this repeat's rows.
//
// The JSON is assembled from pre-escaped pieces rather than JSON.stringify of objects: at 10k req/s
// the body is built on the generator's hot path. bodyEvents() gives the same events as objects, and a
// test checks the two agree.
import { RUN_TAG_PROPERTY, type IngestRequest, type UsageEventIn } from '../protocol/hardcount-api';
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

export class BodyMaker {
  private readonly customersJson: string[];
  private readonly head: string;
  private readonly keyPrefix: string;
  private readonly tail: string;

  constructor(private readonly plan: BodyPlan) {
    if (plan.customers.length === 0) throw new Error('BodyMaker: the customer list is empty');
    this.customersJson = plan.customers.map((c) => JSON.stringify(c));
    this.head = `,"meter":${JSON.stringify(plan.meter)},"quantity":`;
    // The key is built from the run tag, which is checked to be [A-Za-z0-9._:-] (no escaping needed).
    this.keyPrefix = `,"idempotency_key":"${plan.runTag}-`;
    this.tail = `","properties":{${JSON.stringify(RUN_TAG_PROPERTY)}:${JSON.stringify(plan.runTag)}}}`;
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

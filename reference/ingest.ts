// POST /v1/usage-events inside a request transaction: resolve external ids to rows (all or nothing:
// an unknown customer or meter refuses the batch before anything is written), find which idempotency
// keys the tenant already has, insert the new events with plain INSERTs, pricing each from
// provider_cost_rates as it is inserted, and count replays (and repeats inside the batch) as duplicates.
//
// Why not INSERT ... ON CONFLICT DO NOTHING: speculative insertion logs a Heap/HEAP_CONFIRM record for
// every row on top of the heap insert, one more WAL record per event (bench:target, batch 500: 7.51 ->
// 6.51 records/event per-event, 7.37 -> 6.36 multi-row), and WAL per event is what every rate of the
// spec scales with (#823). A plain INSERT after a lookup writes the same rows without it. What that
// costs is a race: a concurrent request can commit one of our keys between our lookup and our INSERT,
// which then fails with unique_violation; the whole request transaction is then rolled back and run
// again (ingestRequest), and the retry's lookup sees the key as a duplicate.
//
// Client timestamps (issue 35): an event's `timestamp` is its occurred_at, whatever it is (late, out of
// order); an event without one keeps the column's default, now() (the transaction's start), as always.
import type pg from 'pg';
import type { IngestResponse } from '../lib/protocol/hardcount-api';
import type { InsertMode } from './config';
import { EXTRA_WAL_PREFIX, EXTRA_WAL_SQL, payloadFor } from './extra-wal';
import { HttpError } from './http-util';
import type { KeyContext, RequestPath } from './request-tx';
import { addToDelta, applyRollupDelta, type RollupDelta } from './rollup';
import type { ValidEvent } from './validate';

// One statement per new event, as the spec measured it (36.1M calls for 36.1M events): each prices its
// event through a rate CTE, and each takes its own foreign-key FOR KEY SHARE lookups on customers,
// meters and the tenant row (one Heap/LOCK per parent row and transaction, plus a MultiXact when
// another request holds the same row: the remaining per-event cost #823 names for hot parent rows).
const PER_EVENT_INSERT = `WITH rate AS (
    SELECT unit_cost FROM provider_cost_rates
     WHERE tenant_id = $1::bigint AND meter_id = $3::bigint AND valid_from <= now()
     ORDER BY valid_from DESC LIMIT 1
  )
  INSERT INTO usage_events (tenant_id, customer_id, meter_id, quantity, idempotency_key, properties, cost, occurred_at)
  SELECT $1::bigint, $2::bigint, $3::bigint, $4::bigint, $5::text, $6::jsonb, $4::bigint * (SELECT unit_cost FROM rate), COALESCE($7::timestamptz, now())`;

// #823's lever (HC_INSERT=multi-row): the batch's new events in one statement, priced by a lateral rate
// lookup per row, inserted in batch order. Same rows, same cost.
const MULTI_ROW_INSERT = `INSERT INTO usage_events (tenant_id, customer_id, meter_id, quantity, idempotency_key, properties, cost, occurred_at)
  SELECT $1::bigint, v.c, v.m, v.q, v.k, v.p, v.q * r.unit_cost, COALESCE(v.t, now())
    FROM jsonb_to_recordset($2::jsonb) AS v(o int, c bigint, m bigint, q bigint, k text, p jsonb, t timestamptz)
    LEFT JOIN LATERAL (
      SELECT unit_cost FROM provider_cost_rates pr
       WHERE pr.tenant_id = $1::bigint AND pr.meter_id = v.m AND pr.valid_from <= now()
       ORDER BY pr.valid_from DESC LIMIT 1
    ) r ON true
   ORDER BY v.o`;

// The last resort (see ingestRequest): the same statements with the unique index as arbiter.
const ON_CONFLICT = `
  ON CONFLICT (tenant_id, idempotency_key) DO NOTHING`;

const SQL = {
  perEvent: { name: 'hc_insert_event', text: `${PER_EVENT_INSERT}\n  RETURNING id` },
  perEventArbiter: { name: 'hc_insert_event_arbiter', text: `${PER_EVENT_INSERT}${ON_CONFLICT}\n  RETURNING id` },
  multiRow: { name: 'hc_insert_batch', text: `${MULTI_ROW_INSERT}\n  RETURNING customer_id::text AS c, meter_id::text AS m, quantity::text AS q, occurred_at::text AS t` },
  multiRowArbiter: {
    name: 'hc_insert_batch_arbiter',
    text: `${MULTI_ROW_INSERT}${ON_CONFLICT}\n  RETURNING customer_id::text AS c, meter_id::text AS m, quantity::text AS q, occurred_at::text AS t`,
  },
};

// One round trip resolves the batch (no more round trips than before): its customers, its meters and
// which of its idempotency keys the tenant already has, served by the unique index
// usage_events_idempotency (tenant_id, idempotency_key), under row-level security like the rest. Each
// meter comes with its current unit cost: a duplicate is not inserted, but ON CONFLICT priced it before
// finding the conflict, so a duplicate whose cost overflows still refuses the batch (costOverflows).
const RESOLVE_SQL = `SELECT 'c' AS kind, id::text AS id, external_id AS name, NULL::text AS unit_cost
    FROM customers WHERE external_id = ANY($1::text[])
  UNION ALL
  SELECT 'm', m.id::text, m.key,
         (SELECT pr.unit_cost::text FROM provider_cost_rates pr
           WHERE pr.tenant_id = $3::bigint AND pr.meter_id = m.id AND pr.valid_from <= now()
           ORDER BY pr.valid_from DESC LIMIT 1)
    FROM meters m WHERE m.key = ANY($2::text[])
  UNION ALL
  SELECT 'k', NULL, idempotency_key, NULL
    FROM usage_events WHERE tenant_id = $3::bigint AND idempotency_key = ANY($4::text[])`;

/**
 * Plain-INSERT attempts of one request before the last resort. The second attempt covers the race
 * with a concurrent request (its lookup sees the key committed). A key that still conflicts is one the
 * lookup cannot see: the same tenant's other mode (the constraint is per tenant, row-level security
 * per tenant and mode). The third attempt then runs the statements with ON CONFLICT DO NOTHING, whose
 * arbiter check is not bound by row-level security, which is the answer ingest always gave (a
 * duplicate); only such a request pays the HEAP_CONFIRM records.
 */
const PLAIN_ATTEMPTS = 2;

export interface IngestOptions {
  insert: InsertMode;
  /** Maintain usage_daily_rollup in the same transaction (HC_AGGREGATE=rollup). */
  rollup: boolean;
  /** HC_EXTRA_WAL_BYTES: a WAL record of this many bytes per new event (extra-wal.ts); 0 or absent: none. */
  extraWalBytes?: number;
}

/** POST /v1/usage-events: the request transaction for the key `keyHash`, run again on an idempotency race. */
export async function ingestRequest(
  path: RequestPath,
  keyHash: string,
  events: ValidEvent[],
  opts: IngestOptions,
): Promise<IngestResponse> {
  for (let attempt = 1; ; attempt++) {
    const arbiter = attempt > PLAIN_ATTEMPTS;
    try {
      return await path.run(keyHash, (client, key) => ingest(client, key, events, opts, arbiter));
    } catch (err) {
      // RequestPath.run rolled the transaction back: nothing of this attempt was written.
      if (arbiter || !isIdempotencyConflict(err)) throw err;
    }
  }
}

function isIdempotencyConflict(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === '23505' && e.constraint === 'usage_events_idempotency';
}

/**
 * The ingest work inside one request transaction. `arbiter`: insert every event with ON CONFLICT DO
 * NOTHING (the last resort of ingestRequest) instead of plain INSERTs of the events the lookup found new.
 */
async function ingest(
  client: pg.PoolClient,
  key: KeyContext,
  events: ValidEvent[],
  opts: IngestOptions,
  arbiter = false,
): Promise<IngestResponse> {
  // Row-level security limits the lookups to the key's tenant and mode: a customer of another tenant,
  // or of the other mode, is unknown here.
  const customerNames = [...new Set(events.map((e) => e.customer))];
  const meterNames = [...new Set(events.map((e) => e.meter))];
  const keys = [...new Set(events.map((e) => e.idempotencyKey))];
  const found = await client.query<{ kind: 'c' | 'm' | 'k'; id: string | null; name: string; unit_cost: string | null }>({
    name: 'hc_resolve',
    text: RESOLVE_SQL,
    values: [customerNames, meterNames, key.tenantId, keys],
  });
  const customers = new Map<string, string>();
  const meters = new Map<string, { id: string; unitCost: string | null }>();
  const taken = new Set<string>();
  for (const r of found.rows) {
    if (r.kind === 'c') customers.set(r.name, r.id!);
    else if (r.kind === 'm') meters.set(r.name, { id: r.id!, unitCost: r.unit_cost });
    else taken.add(r.name);
  }
  const resolved = events.map((e, i) => {
    const c = customers.get(e.customer);
    if (c === undefined) throw new HttpError(422, `unknown customer ${JSON.stringify(e.customer)}`, `events[${i}].customer_id`);
    const m = meters.get(e.meter);
    if (m === undefined) throw new HttpError(422, `unknown meter ${JSON.stringify(e.meter)}`, `events[${i}].meter`);
    return { ...e, customerId: c, meterId: m.id, unitCost: m.unitCost };
  });
  // New: not in the table, and the first occurrence of its key in the batch (the first one wins).
  const isNew: boolean[] = new Array(resolved.length);
  if (arbiter) isNew.fill(true);
  else {
    const seen = new Set<string>();
    for (let i = 0; i < resolved.length; i++) {
      const k = resolved[i].idempotencyKey;
      isNew[i] = !taken.has(k) && !seen.has(k);
      seen.add(k);
    }
  }

  const delta: RollupDelta = new Map();
  let created = 0;
  if (opts.insert === 'per-event') {
    const stmt = arbiter ? SQL.perEventArbiter : SQL.perEvent;
    for (let i = 0; i < resolved.length; i++) {
      const e = resolved[i];
      if (!isNew[i]) {
        // ON CONFLICT computed a duplicate's row, cost included, before finding the conflict: keep its answer.
        if (costOverflows(e.quantity, e.unitCost)) throw costError(`events[${i}].quantity`);
        continue;
      }
      let res: pg.QueryResult;
      try {
        res = await client.query({
          ...stmt,
          values: [key.tenantId, e.customerId, e.meterId, e.quantity, e.idempotencyKey, e.properties, e.occurredAt],
        });
      } catch (err) {
        throw pricingError(err, `events[${i}].quantity`);
      }
      if (res.rowCount === 1) {
        created++;
        if (opts.rollup) addToDelta(delta, e.customerId, e.meterId, e.quantity, e.occurredAt);
      }
    }
  } else {
    if (resolved.some((e, i) => !isNew[i] && costOverflows(e.quantity, e.unitCost))) throw costError('events');
    // properties travel as JSON text inside the batch document; jsonb_to_recordset parses them once.
    const parts: string[] = [];
    for (let i = 0; i < resolved.length; i++) {
      if (!isNew[i]) continue;
      const e = resolved[i];
      // A client timestamp rides as "t"; left out without one (v.t is then null, and occurred_at now()).
      const t = e.occurredAt === null ? '' : `,"t":${JSON.stringify(e.occurredAt)}`;
      parts.push(`{"o":${i},"c":${e.customerId},"m":${e.meterId},"q":${e.quantity},"k":${JSON.stringify(e.idempotencyKey)},"p":${e.properties}${t}}`);
    }
    if (parts.length > 0) {
      let res: pg.QueryResult<{ c: string; m: string; q: string; t: string }>;
      try {
        res = await client.query({ ...(arbiter ? SQL.multiRowArbiter : SQL.multiRow), values: [key.tenantId, `[${parts.join(',')}]`] });
      } catch (err) {
        throw pricingError(err, 'events');
      }
      created = res.rowCount ?? 0;
      if (opts.rollup) for (const r of res.rows) addToDelta(delta, r.c, r.m, Number(r.q), r.t);
    }
  }
  if (opts.rollup) await applyRollupDelta(client, key.tenantId, delta);
  // The extra-WAL build: one record per event written, in this transaction (replays and repeats write none).
  if (opts.extraWalBytes && created > 0) await client.query({ ...EXTRA_WAL_SQL, values: [EXTRA_WAL_PREFIX, payloadFor(opts.extraWalBytes), created] });
  return { accepted: events.length, created, duplicates: events.length - created };
}

const COST_LIMIT = 10n ** 20n; // numeric(20,10) holds |cost| < 10^10, i.e. < 10^20 in units of 10^-10

/**
 * Would quantity x unit_cost overflow cost's numeric(20,10), as the INSERT would find? unit_cost is a
 * numeric(20,10) itself and quantity an integer, so the product is exact at scale 10 (no rounding).
 */
function costOverflows(quantity: number, unitCost: string | null): boolean {
  if (unitCost === null) return false; // no rate: the cost is NULL
  const [whole, frac = ''] = unitCost.replace(/^-/, '').split('.');
  const scaled = BigInt(whole + frac.padEnd(10, '0'));
  return BigInt(quantity) * scaled >= COST_LIMIT;
}

function costError(field: string): HttpError {
  return new HttpError(422, 'quantity too large: its cost overflows numeric(20,10)', field);
}

/** A quantity whose cost overflows numeric(20,10) is the client's input, not a server fault. */
function pricingError(err: unknown, field: string): unknown {
  if ((err as { code?: string }).code === '22003') return costError(field);
  return err;
}

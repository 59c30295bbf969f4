// GET /v1/usage-events/aggregate?customer_id=&from=&to=: count and sum per meter for one customer over
// [from, to) (both optional, ISO-8601). Two strategies behind HC_AGGREGATE:
// - scan (default, #819 as measured): COUNT + SUM GROUP BY meter over the customer's rows. Linear in the
//   customer's events (~2.7 µs/event on the spec's rig: it misses a 500 ms budget past ~180k events).
// - rollup: whole UTC days from usage_daily_rollup, and only the partial days at either edge scanned,
//   so the answer is exactly the scan's answer for any window.
import type pg from 'pg';
import type { AggregateResponse } from '../lib/protocol/hardcount-api';
import type { AggregateMode } from './config';
import { HttpError } from './http-util';
import { MAX_KEY_LENGTH } from './validate';

export interface AggregateQuery {
  customer: string;
  from?: Date;
  to?: Date;
}

export function parseAggregateQuery(params: URLSearchParams): AggregateQuery {
  const customer = params.get('customer_id');
  if (!customer) throw new HttpError(400, 'customer_id is required', 'customer_id');
  if (customer.length > MAX_KEY_LENGTH || customer.includes('\u0000')) {
    throw new HttpError(400, 'customer_id is not a valid id', 'customer_id');
  }
  const from = time(params.get('from'), 'from');
  const to = time(params.get('to'), 'to');
  if (from && to && from.getTime() > to.getTime()) throw new HttpError(400, 'to is before from', 'to');
  return { customer, from, to };
}

function time(v: string | null, field: string): Date | undefined {
  if (v === null || v === '') return undefined;
  // ISO-8601 only (Date.parse alone also takes "March 7" and friends)
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(v)) {
    throw new HttpError(400, `${field} is not an ISO-8601 time`, field);
  }
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw new HttpError(400, `${field} is not a valid time`, field);
  return d;
}

const SCAN_SQL = `SELECT m.key AS meter, a.n::text AS count, a.q::text AS sum
    FROM (SELECT meter_id, count(*) AS n, coalesce(sum(quantity), 0) AS q
            FROM usage_events
           WHERE customer_id = $1::bigint
             AND ($2::timestamptz IS NULL OR occurred_at >= $2::timestamptz)
             AND ($3::timestamptz IS NULL OR occurred_at < $3::timestamptz)
           GROUP BY meter_id) a
    JOIN meters m ON m.id = a.meter_id
   ORDER BY m.key`;

// $2/$3: the rollup's day range [from_day, to_day) (either open); $4: whether whole days exist at all;
// $5-$6 and $7-$8: the partial edge ranges to scan (skipped when NULL).
const ROLLUP_SQL = `SELECT m.key AS meter, sum(p.n)::text AS count, sum(p.q)::text AS sum
    FROM (
      SELECT meter_id, event_count AS n, quantity_sum AS q
        FROM usage_daily_rollup
       WHERE $4::boolean AND customer_id = $1::bigint
         AND ($2::date IS NULL OR day >= $2::date)
         AND ($3::date IS NULL OR day < $3::date)
      UNION ALL
      SELECT meter_id, count(*), coalesce(sum(quantity), 0)
        FROM usage_events
       WHERE $5::timestamptz IS NOT NULL AND customer_id = $1::bigint
         AND occurred_at >= $5::timestamptz AND occurred_at < $6::timestamptz
       GROUP BY meter_id
      UNION ALL
      SELECT meter_id, count(*), coalesce(sum(quantity), 0)
        FROM usage_events
       WHERE $7::timestamptz IS NOT NULL AND customer_id = $1::bigint
         AND occurred_at >= $7::timestamptz AND occurred_at < $8::timestamptz
       GROUP BY meter_id
    ) p
    JOIN meters m ON m.id = p.meter_id
   GROUP BY m.key
   ORDER BY m.key`;

const DAY_MS = 86_400_000;

/** Split [from, to) into whole UTC days (read from the rollup) and the partial days at its edges (scanned). */
export function rollupPlan(from?: Date, to?: Date): unknown[] {
  const f = from?.getTime();
  const t = to?.getTime();
  const firstWhole = f === undefined ? undefined : Math.ceil(f / DAY_MS) * DAY_MS;
  const endWhole = t === undefined ? undefined : Math.floor(t / DAY_MS) * DAY_MS;
  const day = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString().slice(0, 10));
  const ts = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  if (firstWhole !== undefined && endWhole !== undefined && firstWhole >= endWhole) {
    // no whole day inside: scan the window itself
    return [day(undefined), day(undefined), false, ts(f), ts(t), null, null];
  }
  const head = f !== undefined && f < firstWhole! ? [ts(f), ts(firstWhole)] : [null, null];
  const tail = t !== undefined && endWhole! < t ? [ts(endWhole), ts(t)] : [null, null];
  return [day(firstWhole), day(endWhole), true, ...head, ...tail];
}

export async function aggregate(
  client: pg.PoolClient,
  q: AggregateQuery,
  mode: AggregateMode,
): Promise<AggregateResponse> {
  // Row-level security: only the key's tenant and mode have this customer.
  const c = await client.query<{ id: string }>({
    name: 'hc_customer_by_external_id',
    text: 'SELECT id::text AS id FROM customers WHERE external_id = $1',
    values: [q.customer],
  });
  if (c.rowCount === 0) throw new HttpError(404, `unknown customer ${JSON.stringify(q.customer)}`, 'customer_id');
  const id = c.rows[0].id;
  const res =
    mode === 'scan'
      ? await client.query<{ meter: string; count: string; sum: string }>({
          name: 'hc_aggregate_scan',
          text: SCAN_SQL,
          values: [id, q.from?.toISOString() ?? null, q.to?.toISOString() ?? null],
        })
      : await client.query<{ meter: string; count: string; sum: string }>({
          name: 'hc_aggregate_rollup',
          text: ROLLUP_SQL,
          values: [id, ...rollupPlan(q.from, q.to)],
        });
  return {
    customer_id: q.customer,
    meters: res.rows.map((r) => ({ meter: r.meter, count: Number(r.count), sum: Number(r.sum) })),
  };
}

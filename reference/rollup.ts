// usage_daily_rollup (#819's fix, HC_AGGREGATE=rollup): one row per tenant, mode, customer, meter and
// UTC day. The ingest path adds to it in the same transaction as the events it counts; rebuildRollup
// recomputes it from usage_events for rows that did not come through the ingest path (COPY-seeded
// history), which the rollup otherwise would not know about.
import pg from 'pg';
import { pgConfig } from '../lib/pg/connection';

/** Created rows of one request, summed per (customer, meter). */
export type RollupDelta = Map<string, { customer: string; meter: string; count: number; sum: number }>;

export function addToDelta(delta: RollupDelta, customer: string, meter: string, quantity: number): void {
  const k = `${customer}:${meter}`;
  const cur = delta.get(k);
  if (cur) {
    cur.count += 1;
    cur.sum += quantity;
  } else {
    delta.set(k, { customer, meter, count: 1, sum: quantity });
  }
}

/**
 * Add a request's created rows to the rollup. Every row a request creates has occurred_at = now() (the
 * transaction's start; the API takes no client timestamps), so its day is now()'s UTC date. Rows are
 * upserted in (customer, meter) order so that concurrent requests lock rollup rows in one global order
 * and cannot deadlock each other.
 */
export async function applyRollupDelta(client: pg.PoolClient, tenantId: string, delta: RollupDelta): Promise<void> {
  if (delta.size === 0) return;
  const rows = [...delta.values()].sort((a, b) =>
    a.customer === b.customer ? cmpId(a.meter, b.meter) : cmpId(a.customer, b.customer),
  );
  await client.query({
    name: 'hc_rollup_upsert',
    text: `INSERT INTO usage_daily_rollup AS r (tenant_id, customer_id, meter_id, livemode, day, event_count, quantity_sum)
           SELECT $1::bigint, u.c, u.m, current_setting('app.livemode')::boolean, (now() AT TIME ZONE 'UTC')::date, u.n, u.q
             FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS u(c, m, n, q, o)
            ORDER BY u.o
           ON CONFLICT (tenant_id, livemode, customer_id, meter_id, day) DO UPDATE
              SET event_count = r.event_count + EXCLUDED.event_count,
                  quantity_sum = r.quantity_sum + EXCLUDED.quantity_sum`,
    values: [tenantId, rows.map((r) => r.customer), rows.map((r) => r.meter), rows.map((r) => r.count), rows.map((r) => r.sum)],
  });
}

function cmpId(a: string, b: string): number {
  const d = BigInt(a) - BigInt(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/**
 * Recompute the rollup from usage_events (as the owner, which row-level security does not bind), for
 * one tenant or all. Run it after seeding history by COPY and before measuring HC_AGGREGATE=rollup.
 */
export async function rebuildRollup(ownerUrl: string, tenantId?: string | number): Promise<number> {
  const client = new pg.Client(pgConfig(ownerUrl, { application_name: 'hardcount-rollup' }));
  await client.connect();
  try {
    await client.query('BEGIN');
    const tenant = tenantId === undefined ? null : String(tenantId);
    await client.query('DELETE FROM usage_daily_rollup WHERE $1::bigint IS NULL OR tenant_id = $1::bigint', [tenant]);
    const res = await client.query(
      `INSERT INTO usage_daily_rollup (tenant_id, customer_id, meter_id, livemode, day, event_count, quantity_sum)
       SELECT tenant_id, customer_id, meter_id, livemode, (occurred_at AT TIME ZONE 'UTC')::date, count(*), sum(quantity)
         FROM usage_events
        WHERE $1::bigint IS NULL OR tenant_id = $1::bigint
        GROUP BY 1, 2, 3, 4, 5`,
      [tenant],
    );
    await client.query('COMMIT');
    return res.rowCount ?? 0;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}

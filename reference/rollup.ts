// usage_daily_rollup (#819's fix, HC_AGGREGATE=rollup): one row per tenant, mode, customer, meter and
// UTC day. The ingest path adds to it in the same transaction as the events it counts; rebuildRollup
// recomputes it from usage_events for rows that did not come through the ingest path (COPY-seeded
// history), which the rollup otherwise would not know about.
import pg from 'pg';
import { pgConfig } from '../lib/pg/connection';

/** Created rows of one request, summed per (customer, meter, occurred_at as given). */
export type RollupDelta = Map<string, { customer: string; meter: string; at: string | null; count: number; sum: number }>;

/**
 * Counts a created row. `at` is its occurred_at as the INSERT took it (a client timestamp, issue 35, or
 * the row's own time read back), or null for now(): the upsert puts it in that instant's UTC day.
 */
export function addToDelta(delta: RollupDelta, customer: string, meter: string, quantity: number, at: string | null = null): void {
  const k = `${customer}:${meter}:${at ?? ''}`;
  const cur = delta.get(k);
  if (cur) {
    cur.count += 1;
    cur.sum += quantity;
  } else {
    delta.set(k, { customer, meter, at, count: 1, sum: quantity });
  }
}

/**
 * Add a request's created rows to the rollup. A row's day is its occurred_at's UTC date: now()'s (the
 * transaction's start) for a row without a client timestamp, the timestamp's for one with (late rows
 * land in their own, maybe earlier, day). The instants are grouped by day in the statement, and the
 * rollup rows upserted in (customer, meter, day) order, so that concurrent requests lock rollup rows in
 * one global order and cannot deadlock each other.
 */
export async function applyRollupDelta(client: pg.PoolClient, tenantId: string, delta: RollupDelta): Promise<void> {
  if (delta.size === 0) return;
  const rows = [...delta.values()];
  await client.query({
    name: 'hc_rollup_upsert',
    text: `INSERT INTO usage_daily_rollup AS r (tenant_id, customer_id, meter_id, livemode, day, event_count, quantity_sum)
           SELECT $1::bigint, u.c, u.m, current_setting('app.livemode')::boolean, (COALESCE(u.t, now()) AT TIME ZONE 'UTC')::date AS d, sum(u.n)::bigint, sum(u.q)::bigint
             FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::timestamptz[]) AS u(c, m, n, q, t)
            GROUP BY u.c, u.m, d
            ORDER BY u.c, u.m, d
           ON CONFLICT (tenant_id, livemode, customer_id, meter_id, day) DO UPDATE
              SET event_count = r.event_count + EXCLUDED.event_count,
                  quantity_sum = r.quantity_sum + EXCLUDED.quantity_sum`,
    values: [tenantId, rows.map((r) => r.customer), rows.map((r) => r.meter), rows.map((r) => r.count), rows.map((r) => r.sum), rows.map((r) => r.at)],
  });
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

// The daily rollup against a recount of usage_events, day by day (UTC): the rows where they differ.
// Shared by the reference service's tests of the rollup (switches.test.ts) and of client timestamps
// (client-timestamps.test.ts), which must both find none.
import type pg from 'pg';

export async function rollupMismatches(db: pg.Pool | pg.Client, tenantId: string | number): Promise<unknown[]> {
  const r = await db.query(
    `SELECT r.customer_id, r.day, r.event_count, r.quantity_sum, e.n, e.q
       FROM usage_daily_rollup r
       FULL JOIN (SELECT customer_id, meter_id, (occurred_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n, sum(quantity) AS q
                    FROM usage_events WHERE tenant_id = $1::bigint GROUP BY 1, 2, 3) e
         ON e.customer_id = r.customer_id AND e.meter_id = r.meter_id AND e.day = r.day
      WHERE (r.tenant_id = $1::bigint OR r.tenant_id IS NULL)
        AND (r.event_count IS DISTINCT FROM e.n OR r.quantity_sum IS DISTINCT FROM e.q)`,
    [tenantId],
  );
  return r.rows;
}

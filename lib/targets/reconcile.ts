// Reconciliation of one repeat: the rows and Σ quantity the database holds for its run tag
// (properties @> {"rig_run": tag}), read as the owner (who bypasses row-level security) in the intended
// livemode partition. Rows of the tag in the other partition are counted too: any is a finding.
import { RUN_TAG_PROPERTY } from '../protocol/hardcount-api';
import { exactNumber, withClient, type Db } from './db';

export interface ReconcileOptions {
  runTag: string;
  livemode: boolean;
  /** Only this tenant's rows (default: any tenant). */
  tenantId?: string;
  /** The property holding the tag, default rig_run. */
  property?: string;
}

export interface Reconciliation {
  runTag: string;
  livemode: boolean;
  rows: number;
  /** Σ quantity in the intended partition (exact). */
  quantity: number;
  /** Rows with this tag in the other partition (expected 0). */
  otherModeRows: number;
}

export async function reconcile(db: Db, opts: ReconcileOptions): Promise<Reconciliation> {
  if (!opts.runTag) throw new Error('reconcile: runTag is empty');
  return withClient(
    db,
    async (c) => {
      const r = await c.query<{ rows: string; quantity: string; other: string }>(
        `SELECT count(*) FILTER (WHERE livemode = $2)::text AS rows,
                coalesce(sum(quantity) FILTER (WHERE livemode = $2), 0)::text AS quantity,
                count(*) FILTER (WHERE livemode <> $2)::text AS other
           FROM usage_events
          WHERE properties @> $1::jsonb AND ($3::bigint IS NULL OR tenant_id = $3::bigint)`,
        [JSON.stringify({ [opts.property ?? RUN_TAG_PROPERTY]: opts.runTag }), opts.livemode, opts.tenantId ?? null],
      );
      const row = r.rows[0];
      return {
        runTag: opts.runTag,
        livemode: opts.livemode,
        rows: exactNumber(row.rows, 'rows'),
        quantity: exactNumber(row.quantity, 'sum of quantity'),
        otherModeRows: exactNumber(row.other, 'rows in the other mode'),
      };
    },
    'rig-reconcile',
  );
}

// Which tenant, mode (livemode partition), meter and customers the bench fixtures live in, read from
// the database as the owner. Every writer of bench rows (seeding, pgbench) writes into exactly this
// scope, and refuses when asked for the other mode: the spec's trap is a run that silently measured a
// partition it did not think it was measuring.
import type pg from 'pg';
import { withClient, type Db } from './db';

export interface FixtureScope {
  tenantId: string;
  livemode: boolean;
  meterId: string;
  meterKey: string;
  /** The fixtures' customer ids (bigint as text), ascending. */
  customerIds: string[];
  /** The meter's current provider unit cost (numeric as text), or null when it has none. */
  unitCost: string | null;
}

/** The tenant bring-up makes the fixtures in (lib/targets/bringup/fixtures.ts). */
export const FIXTURES_TENANT = 'rig-bench';

export interface FixtureScopeOptions {
  /**
   * The fixtures' tenant; default: the tenant named FIXTURES_TENANT when it has customers (on an
   * existing deployment other tenants have theirs), else the only tenant that has customers.
   */
  tenantId?: string;
  /** Default 'api_calls'. */
  meterKey?: string;
}

/** Thrown when what is asked for and what the fixtures are do not agree. */
export class PartitionMismatchError extends Error {}

export async function detectFixtures(db: Db, opts: FixtureScopeOptions = {}): Promise<FixtureScope> {
  return withClient(db, (c) => detect(c, opts));
}

async function detect(c: pg.ClientBase, opts: FixtureScopeOptions): Promise<FixtureScope> {
  const meterKey = opts.meterKey ?? 'api_calls';
  const asked =
    opts.tenantId ??
    (
      await c.query<{ id: string }>(
        'SELECT t.id::text AS id FROM tenants t WHERE t.name = $1 AND EXISTS (SELECT 1 FROM customers c WHERE c.tenant_id = t.id) ORDER BY t.id LIMIT 1',
        [FIXTURES_TENANT],
      )
    ).rows[0]?.id;
  const groups = (
    await c.query<{ tenant_id: string; livemode: boolean; n: string }>(
      `SELECT tenant_id::text, livemode, count(*)::text AS n FROM customers
        WHERE ($1::bigint IS NULL OR tenant_id = $1::bigint) GROUP BY 1, 2 ORDER BY 1, 2`,
      [asked ?? null],
    )
  ).rows;
  if (groups.length === 0) {
    throw new Error(`no fixtures: table customers has no rows${asked ? ` for tenant ${asked}` : ''}. Run bring-up (fixtures) first`);
  }
  const tenants = [...new Set(groups.map((g) => g.tenant_id))];
  if (tenants.length > 1) {
    throw new Error(`customers of several tenants (${tenants.join(', ')}): name the fixtures' tenant (tenantId)`);
  }
  if (groups.length > 1) {
    throw new PartitionMismatchError(
      `the fixtures of tenant ${tenants[0]} have customers in both modes (${groups.map((g) => `livemode=${g.livemode}: ${g.n}`).join(', ')}): ` +
        'the partition to write is ambiguous; re-create the fixtures in one mode',
    );
  }
  const tenantId = tenants[0];
  const livemode = groups[0].livemode;
  const keyModes = (
    await c.query<{ livemode: boolean }>('SELECT DISTINCT livemode FROM api_keys WHERE tenant_id = $1', [tenantId])
  ).rows.map((r) => r.livemode);
  const otherKeys = keyModes.filter((m) => m !== livemode);
  if (otherKeys.length) {
    throw new PartitionMismatchError(
      `fixtures disagree: customers of tenant ${tenantId} are livemode=${livemode} but it has API keys with livemode=${otherKeys[0]}`,
    );
  }
  const meter = (
    await c.query<{ id: string; livemode: boolean }>('SELECT id::text, livemode FROM meters WHERE tenant_id = $1 AND key = $2 ORDER BY livemode = $3 DESC', [
      tenantId,
      meterKey,
      livemode,
    ])
  ).rows[0];
  if (!meter) throw new Error(`no meter '${meterKey}' for tenant ${tenantId}: run bring-up (fixtures) first, or pass the fixtures' meter key`);
  if (meter.livemode !== livemode) {
    throw new PartitionMismatchError(`fixtures disagree: customers are livemode=${livemode} but meter '${meterKey}' is livemode=${meter.livemode}`);
  }
  const customerIds = (
    await c.query<{ id: string }>('SELECT id::text FROM customers WHERE tenant_id = $1 AND livemode = $2 ORDER BY id', [tenantId, livemode])
  ).rows.map((r) => r.id);
  const rate = (
    await c.query<{ unit_cost: string }>(
      'SELECT unit_cost::text FROM provider_cost_rates WHERE tenant_id = $1 AND meter_id = $2 AND valid_from <= now() ORDER BY valid_from DESC LIMIT 1',
      [tenantId, meter.id],
    )
  ).rows[0];
  return { tenantId, livemode, meterId: meter.id, meterKey, customerIds, unitCost: rate?.unit_cost ?? null };
}

/** Throw PartitionMismatchError when a requested mode is not the fixtures' mode. */
export function assertMode(scope: FixtureScope, requested: boolean | undefined, what: string): boolean {
  if (requested !== undefined && requested !== scope.livemode) {
    throw new PartitionMismatchError(
      `${what} refused: it was asked for livemode=${requested}, but the fixtures (tenant ${scope.tenantId}) are livemode=${scope.livemode}. ` +
        `Rows written with livemode=${requested} would land in a partition the service does not read. ` +
        `Ask for livemode=${scope.livemode}, or re-create the fixtures in the other mode`,
    );
  }
  return scope.livemode;
}

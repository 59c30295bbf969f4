// The measurement's fixtures, the same on both rigs: one tenant, N customers (cus_0001..), one meter
// with a provider cost rate, and one API key, all in one livemode partition (live by default).
//
// The spec's trap: livemode is not what an INSERT says. The set_livemode trigger overwrites it from the
// app.livemode setting, so the partition is chosen by setting app.livemode for the transaction, and
// then read back: fixtures that landed in the other partition are refused, because a benchmark against
// them would measure a table nobody thought it was measuring.
//
// Re-runnable: an existing tenant of the same name is reused (customers, meter and rate are added only
// where missing), and a fresh API key replaces that tenant's earlier keys in the partition, because the
// raw key cannot be recovered from its stored hash.
import pg from 'pg';
import { pgConfig } from '../../pg/connection';
import { hashApiKey, newApiKey } from '../../../reference/keys';
import { FIXTURES_TENANT } from '../fixtures-scope';
import { BringupRefusal } from './refusal';
import { Secret } from './secret';

export interface FixtureOptions {
  /** Default `rig-bench`. */
  tenantName?: string;
  /** Default 200 (external ids cus_0001..cus_0200). */
  customers?: number;
  /** Default true: the spec's runs are in live mode. */
  livemode?: boolean;
  /** Meter key, default `api_calls`. */
  meter?: string;
  /** Provider cost per unit, as a decimal string; default `0.0001`. */
  unitCost?: string;
}

export interface Fixtures {
  tenantId: string;
  livemode: boolean;
  meter: string;
  /** External ids, in order. */
  customers: string[];
  /** The raw API key: shown once, never logged; store it with writeSecretFile. */
  apiKey: Secret;
  apiKeyId: string;
}

export function customerIds(n: number): string[] {
  const width = Math.max(4, String(n).length);
  return Array.from({ length: n }, (_, i) => `cus_${String(i + 1).padStart(width, '0')}`);
}

/** Create (or complete) the fixtures as the owner role. Throws BringupRefusal('fixtures') on a partition mismatch. */
export async function createFixtures(ownerUrl: string, opts: FixtureOptions = {}): Promise<Fixtures> {
  const tenantName = opts.tenantName ?? FIXTURES_TENANT;
  const livemode = opts.livemode ?? true;
  const meterKey = opts.meter ?? 'api_calls';
  const unitCost = opts.unitCost ?? '0.0001';
  const customers = customerIds(opts.customers ?? 200);
  const rawKey = newApiKey(livemode);

  const client = new pg.Client(pgConfig(ownerUrl, { application_name: 'rig-bringup' }));
  await client.connect();
  try {
    await client.query('BEGIN');
    // Transaction-local, like the service's SET LOCAL: the trigger reads it for every row below.
    await client.query(`SELECT set_config('app.livemode', $1, true)`, [String(livemode)]);
    // Two bring-ups of one rig at once must not make two tenants.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rig-fixtures:${tenantName}`]);
    let tenantId: string;
    const t = await client.query<{ id: string }>('SELECT id::text AS id FROM tenants WHERE name = $1 ORDER BY id LIMIT 1', [
      tenantName,
    ]);
    if (t.rowCount) tenantId = t.rows[0].id;
    else {
      tenantId = (await client.query<{ id: string }>('INSERT INTO tenants (name) VALUES ($1) RETURNING id::text AS id', [tenantName]))
        .rows[0].id;
    }
    // The INSERTs name no livemode on purpose: the partition comes from app.livemode, as for every row
    // the service and the seeder write. ON CONFLICT is inferred after the BEFORE trigger ran, so the
    // uniqueness is checked within the intended partition.
    await client.query(
      `INSERT INTO customers (tenant_id, external_id, name)
       SELECT $1::bigint, x, 'Bench customer ' || x FROM unnest($2::text[]) AS x
       ON CONFLICT (tenant_id, livemode, external_id) DO NOTHING`,
      [tenantId, customers],
    );
    await client.query(
      `INSERT INTO meters (tenant_id, key, name) VALUES ($1::bigint, $2, $2)
       ON CONFLICT (tenant_id, livemode, key) DO NOTHING`,
      [tenantId, meterKey],
    );
    const meter = await client.query<{ id: string }>(
      'SELECT id::text AS id FROM meters WHERE tenant_id = $1::bigint AND livemode = $2 AND key = $3',
      [tenantId, livemode, meterKey],
    );
    if (meter.rowCount !== 1) {
      throw new BringupRefusal(
        'fixtures',
        `meter ${meterKey} did not land in livemode=${livemode}: is the set_livemode trigger missing?`,
      );
    }
    const meterId = meter.rows[0].id;
    await client.query(
      `INSERT INTO provider_cost_rates (tenant_id, meter_id, unit_cost, valid_from)
       SELECT $1::bigint, $2::bigint, $3::numeric, '2000-01-01T00:00:00Z'
        WHERE NOT EXISTS (SELECT 1 FROM provider_cost_rates WHERE meter_id = $2::bigint)`,
      [tenantId, meterId, unitCost],
    );
    await client.query('DELETE FROM api_keys WHERE tenant_id = $1::bigint AND livemode = $2', [tenantId, livemode]);
    const key = await client.query<{ id: string; livemode: boolean }>(
      'INSERT INTO api_keys (tenant_id, key_hash) VALUES ($1::bigint, $2) RETURNING id::text AS id, livemode',
      [tenantId, hashApiKey(rawKey)],
    );

    // Read back: every fixture row must be in the intended partition.
    const landed = await client.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM customers
        WHERE tenant_id = $1::bigint AND livemode = $2 AND external_id = ANY($3::text[])`,
      [tenantId, livemode, customers],
    );
    if (Number(landed.rows[0].n) !== customers.length || key.rows[0].livemode !== livemode) {
      throw new BringupRefusal(
        'fixtures',
        `fixtures did not land in livemode=${livemode} (${landed.rows[0].n}/${customers.length} customers, ` +
          `key livemode=${key.rows[0].livemode}): the set_livemode trigger did not apply app.livemode`,
      );
    }
    await client.query('COMMIT');
    return { tenantId, livemode, meter: meterKey, customers, apiKey: new Secret(rawKey), apiKeyId: key.rows[0].id };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}

/**
 * The fixtures' customers as createFixtures made them (external ids, in its order: cus_0001.. sorts as
 * it counts), read back as the owner: what a load node on a host of its own sends for, where bring-up's
 * file is not (issue 37: an AWS rig's load nodes beyond the data plane's, which reach the database).
 */
export async function readFixtureCustomers(ownerUrl: string, tenantName = FIXTURES_TENANT): Promise<string[]> {
  const client = new pg.Client(pgConfig(ownerUrl, { application_name: 'rig-load-node' }));
  await client.connect();
  try {
    const r = await client.query<{ external_id: string }>(
      `SELECT c.external_id FROM customers c
        WHERE c.tenant_id = (SELECT id FROM tenants WHERE name = $1 ORDER BY id LIMIT 1)
        ORDER BY c.external_id COLLATE "C"`,
      [tenantName],
    );
    return r.rows.map((x) => x.external_id);
  } finally {
    await client.end();
  }
}


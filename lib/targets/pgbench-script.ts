// pgbench scripts that write the usage_events row shape into the fixtures' partition, for the four
// legs of the denominator. Pure: scope and tag in, script text out. Each leg tags its rows with
// properties.rig_run = <tag>, so the rows a leg wrote are counted exactly afterwards.
import { RUN_TAG_PROPERTY } from '../protocol/hardcount-api';
import type { FixtureScope } from './fixtures-scope';

/** owner-commit: one one-row INSERT per transaction (batch 1, whatever the campaign's batch) as the
 *    owner: the database's own commit rate, the protocol's "one-row commits/s" (the hot-row table's
 *    commit / fsync row: "6,840 commits/s at 16 clients").
 *  owner-1row: B one-row INSERTs per transaction as the owner (the spec's denominator).
 *  rls-1row: the same as hardcount_app with the service's request protocol (key lookup + set_config).
 *  owner-multirow: one B-row INSERT per transaction as the owner (the floor for #823's multi-row mode). */
export type LegName = 'owner-commit' | 'owner-1row' | 'rls-1row' | 'owner-multirow';
export const LEGS: readonly LegName[] = ['owner-commit', 'owner-1row', 'rls-1row', 'owner-multirow'];

/** Rows per transaction a leg runs at: the commit-rate leg is one row, the others the campaign's batch. */
export function legBatch(leg: LegName, batch: number): number {
  return leg === 'owner-commit' ? 1 : batch;
}

export interface ScriptSpec {
  scope: Pick<FixtureScope, 'tenantId' | 'meterId' | 'customerIds' | 'unitCost'>;
  tag: string;
  batch: number;
  /** rls-1row: the key_hash of the fixtures' API key (auth_api_key's argument). */
  keyHash?: string;
  /**
   * pgbench's -M. 'simple' lets the RLS leg send BEGIN and the key lookup in one message (`\;`), as the
   * service does; prepared and extended mode cannot carry two statements in one command, so there they
   * are two commands (one more round trip per transaction). Default 'prepared'.
   */
  protocol?: PgbenchProtocol;
}

export type PgbenchProtocol = 'simple' | 'extended' | 'prepared';

const COLUMNS = 'tenant_id, customer_id, meter_id, quantity, idempotency_key, properties, cost';

function checkSpec(s: ScriptSpec): void {
  if (!/^[A-Za-z0-9._-]+$/.test(s.tag)) throw new Error(`pgbench tag '${s.tag}' must be letters, digits, '.', '_' or '-'`);
  if (!Number.isInteger(s.batch) || s.batch < 1) throw new Error(`batch must be a positive integer, not ${s.batch}`);
  for (const v of [s.scope.tenantId, s.scope.meterId, ...s.scope.customerIds]) {
    if (!/^\d+$/.test(v)) throw new Error(`id '${v}' is not a bigint`);
  }
  if (s.scope.unitCost !== null && !/^-?\d+(\.\d+)?$/.test(s.scope.unitCost)) throw new Error(`unit cost '${s.scope.unitCost}' is not numeric`);
  if (!s.scope.customerIds.length) throw new Error('no customers in the fixtures');
}

/** Are the customer ids one contiguous range (then a random id is min + random, no array lookup)? */
function contiguous(ids: string[]): { min: string; max: string } | undefined {
  const nums = ids.map(BigInt);
  const min = nums[0];
  const max = nums[nums.length - 1];
  return max - min + 1n === BigInt(nums.length) ? { min: String(min), max: String(max) } : undefined;
}

function props(tag: string): string {
  return `'{"${RUN_TAG_PROPERTY}": "${tag}"}'::jsonb`;
}

/** One INSERT of one row, with pgbench variables :q and :c chosen just before it. */
function oneRowInsert(s: ScriptSpec): string[] {
  const range = contiguous(s.scope.customerIds);
  const setC = range ? `\\set c random(${range.min}, ${range.max})` : `\\set ci random(1, ${s.scope.customerIds.length})`;
  const customer = range ? ':c' : `(ARRAY[${s.scope.customerIds.join(',')}]::bigint[])[:ci]`;
  const cost = s.scope.unitCost === null ? 'NULL' : `:q * ${s.scope.unitCost}`;
  return [
    '\\set q random(1, 100)',
    setC,
    `INSERT INTO usage_events (${COLUMNS}) VALUES (${s.scope.tenantId}, ${customer}, ${s.scope.meterId}, :q, 'pgb-${s.tag}-' || gen_random_uuid(), ${props(s.tag)}, ${cost});`,
  ];
}

export function legScript(leg: LegName, s: ScriptSpec): string {
  checkSpec(s);
  const lines: string[] = [`-- rig denominator, leg ${leg}, batch ${legBatch(leg, s.batch)}, tag ${s.tag}`];
  if (leg === 'owner-1row' || leg === 'owner-commit') {
    // One row alone is its own transaction (autocommit): one commit per row, nothing else sent.
    const rows = legBatch(leg, s.batch);
    if (rows > 1) lines.push('BEGIN;');
    for (let i = 0; i < rows; i++) lines.push(...oneRowInsert(s));
    if (rows > 1) lines.push('COMMIT;');
  } else if (leg === 'rls-1row') {
    if (!s.keyHash || !/^[0-9a-f]{64}$/.test(s.keyHash)) throw new Error('rls-1row needs the fixtures API key hash (64 hex digits)');
    // As the service does it (reference/request-tx.ts): BEGIN and the key lookup that sets the tenant and
    // mode transaction-locally, in one round trip; the events; COMMIT.
    const lookup = `SELECT set_config('app.tenant_id', a.tenant_id::text, true), set_config('app.livemode', a.livemode::text, true) FROM auth_api_key('${s.keyHash}') a;`;
    if ((s.protocol ?? 'prepared') === 'simple') lines.push(`BEGIN \\; ${lookup}`);
    else lines.push('BEGIN;', lookup);
    for (let i = 0; i < s.batch; i++) lines.push(...oneRowInsert(s));
    lines.push('COMMIT;');
  } else {
    // pgbench allows 255 variables per statement: the rows are made in SQL instead.
    const range = contiguous(s.scope.customerIds);
    const n = s.scope.customerIds.length;
    const customer = range
      ? `${range.min} + floor(random() * ${n})::bigint`
      : `(ARRAY[${s.scope.customerIds.join(',')}]::bigint[])[1 + floor(random() * ${n})::int]`;
    const cost = s.scope.unitCost === null ? 'NULL' : `r.q * ${s.scope.unitCost}`;
    lines.push(
      `INSERT INTO usage_events (${COLUMNS}) SELECT ${s.scope.tenantId}, ${customer}, ${s.scope.meterId}, r.q, 'pgb-${s.tag}-' || gen_random_uuid(), ${props(s.tag)}, ${cost} FROM (SELECT (1 + floor(random() * 100))::bigint AS q FROM generate_series(1, ${s.batch})) r;`,
    );
  }
  return lines.join('\n') + '\n';
}

/** Rows one transaction of the leg writes. */
export function rowsPerTransaction(leg: LegName, batch: number): number {
  return legBatch(leg, batch);
}

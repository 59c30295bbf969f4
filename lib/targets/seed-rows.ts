// The rows of seeded history, as COPY text: spread evenly over `days` (oldest first, like real history)
// and round-robin over the fixtures' customers, each tagged properties.rig_seed = <tag> so that a seed
// can be counted exactly. Pure: the same inputs give the same bytes (the bench feeds the very same rows
// to `psql \copy` for comparison), and row i is the same whichever range it is generated in, so a
// retried seed can write only the rows an earlier attempt did not commit.
import type { FixtureScope } from './fixtures-scope';

export const SEED_TAG_PROPERTY = 'rig_seed';

/** COPY's column list; livemode is not in it: the set_livemode trigger sets it from app.livemode. */
export const SEED_COLUMNS = ['tenant_id', 'customer_id', 'meter_id', 'quantity', 'idempotency_key', 'properties', 'cost', 'occurred_at'] as const;

export interface SeedRowsSpec {
  scope: Pick<FixtureScope, 'tenantId' | 'meterId' | 'customerIds' | 'unitCost'>;
  rows: number;
  tag: string;
  /** History spans this many days before `end`. */
  days: number;
  end: Date;
  /** Rows per yielded chunk. */
  chunkRows?: number;
}

/** Deterministic small quantities (1..100), like metered API calls. */
function quantityOf(i: number): number {
  return ((i * 2654435761) >>> 0) % 100 + 1;
}

/** The row index in a seeded row's idempotency key (`seed-<tag>-<i>`). */
export const SEED_INDEX_PATTERN = '-([0-9]+)$';

/**
 * Rows [from, to) of the seed, minus the indexes in `skip`; `rows` in each chunk counts the rows
 * yielded. Row i depends only on the spec and i, not on the range.
 */
export function* seedRows(spec: SeedRowsSpec, from = 0, to = spec.rows, skip?: ReadonlySet<number>): Generator<{ text: string; rows: number }> {
  const { scope, rows, tag } = spec;
  if (!scope.customerIds.length) throw new Error('no customers to spread the seed over');
  if (!/^[A-Za-z0-9._-]+$/.test(tag)) throw new Error(`seed tag '${tag}' must be letters, digits, '.', '_' or '-'`);
  const chunkRows = spec.chunkRows ?? 5000;
  const props = `{"${SEED_TAG_PROPERTY}": "${tag}"}`;
  const unitCost = scope.unitCost === null ? null : Number(scope.unitCost);
  const prefix = `${scope.tenantId}\t`;
  const meter = `\t${scope.meterId}\t`;
  const customers = scope.customerIds;
  const end = Math.min(rows, to);
  for (let start = from; start < end; start += chunkRows) {
    const stop = Math.min(end, start + chunkRows);
    const parts: string[] = [];
    for (let i = start; i < stop; i++) {
      if (skip?.has(i)) continue;
      const q = quantityOf(i);
      const at = new Date(seedTimeMs(spec, i)).toISOString();
      const cost = unitCost === null ? '\\N' : (q * unitCost).toFixed(10);
      parts.push(`${prefix}${customers[i % customers.length]}${meter}${q}\tseed-${tag}-${i}\t${props}\t${cost}\t${at}\n`);
    }
    if (parts.length) yield { text: parts.join(''), rows: parts.length };
  }
}

/** occurred_at of row i, in ms: evenly spread over `days` before `end`, oldest first. */
export function seedTimeMs(spec: Pick<SeedRowsSpec, 'rows' | 'days' | 'end'>, i: number): number {
  const spanMs = spec.days * 86_400_000;
  return spec.end.getTime() - spanMs + Math.floor(i * (spanMs / spec.rows));
}

/** The `end` that puts row i at `atMs` (the inverse of seedTimeMs): a retry recovers the first attempt's. */
export function seedEndFrom(spec: Pick<SeedRowsSpec, 'rows' | 'days'>, i: number, atMs: number): Date {
  const spanMs = spec.days * 86_400_000;
  return new Date(atMs + spanMs - Math.floor(i * (spanMs / spec.rows)));
}

/** Σ quantity of rows [0, rows): what the database must hold after the seed. */
export function seedQuantity(rows: number): number {
  let s = 0;
  for (let i = 0; i < rows; i++) s += quantityOf(i);
  return s;
}

// The rows of seeded history, as COPY text: spread evenly over `days` (oldest first, like real history)
// and round-robin over the fixtures' customers, each tagged properties.rig_seed = <tag> so that a seed
// can be counted exactly. Pure: the same inputs give the same bytes (the bench feeds the very same rows
// to `psql \copy` for comparison).
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

export function* seedRows(spec: SeedRowsSpec, from = 0): Generator<{ text: string; rows: number }> {
  const { scope, rows, tag, days } = spec;
  if (!scope.customerIds.length) throw new Error('no customers to spread the seed over');
  if (!/^[A-Za-z0-9._-]+$/.test(tag)) throw new Error(`seed tag '${tag}' must be letters, digits, '.', '_' or '-'`);
  const chunkRows = spec.chunkRows ?? 5000;
  const endMs = spec.end.getTime();
  const spanMs = days * 86_400_000;
  const stepMs = spanMs / rows;
  const props = `{"${SEED_TAG_PROPERTY}": "${tag}"}`;
  const unitCost = scope.unitCost === null ? null : Number(scope.unitCost);
  const prefix = `${scope.tenantId}\t`;
  const meter = `\t${scope.meterId}\t`;
  const customers = scope.customerIds;
  for (let start = from; start < rows; start += chunkRows) {
    const stop = Math.min(rows, start + chunkRows);
    const parts: string[] = new Array(stop - start);
    for (let i = start; i < stop; i++) {
      const q = quantityOf(i);
      const at = new Date(endMs - spanMs + Math.floor(i * stepMs)).toISOString();
      const cost = unitCost === null ? '\\N' : (q * unitCost).toFixed(10);
      parts[i - start] = `${prefix}${customers[i % customers.length]}${meter}${q}\tseed-${tag}-${i}\t${props}\t${cost}\t${at}\n`;
    }
    yield { text: parts.join(''), rows: stop - start };
  }
}

/** Σ quantity of rows [0, rows): what the database must hold after the seed. */
export function seedQuantity(rows: number): number {
  let s = 0;
  for (let i = 0; i < rows; i++) s += quantityOf(i);
  return s;
}

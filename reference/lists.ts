// The two list endpoints the read probe calls (the spec: 2-9 ms at every write rate). One page, newest
// invoices first, customers in creation order; row-level security limits both to the key's tenant and mode.
import type pg from 'pg';
import { HttpError } from './http-util';

export interface Page<T> {
  data: T[];
  has_more: boolean;
}

export interface CustomerOut {
  id: string;
  name: string;
  livemode: boolean;
  created_at: string | null;
}

export interface InvoiceOut {
  id: string;
  customer_id: string;
  livemode: boolean;
  period_start: string | null;
  period_end: string | null;
  /** numeric(20,10) as a string: no float rounding of money. */
  total: string | null;
  created_at: string;
}

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1000;

export function parseLimit(params: URLSearchParams): number {
  const v = params.get('limit');
  if (v === null || v === '') return DEFAULT_PAGE;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > MAX_PAGE) {
    throw new HttpError(400, `limit must be an integer from 1 to ${MAX_PAGE}`, 'limit');
  }
  return Number(v);
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export async function listCustomers(client: pg.PoolClient, limit: number): Promise<Page<CustomerOut>> {
  const res = await client.query<{ external_id: string; name: string; livemode: boolean; created_at: Date | null }>({
    name: 'hc_list_customers',
    text: 'SELECT external_id, name, livemode, created_at FROM customers ORDER BY id LIMIT $1',
    values: [limit + 1],
  });
  const rows = res.rows.slice(0, limit);
  return {
    data: rows.map((r) => ({ id: r.external_id, name: r.name, livemode: r.livemode, created_at: iso(r.created_at) })),
    has_more: res.rows.length > limit,
  };
}

export async function listInvoices(client: pg.PoolClient, limit: number): Promise<Page<InvoiceOut>> {
  const res = await client.query<{
    id: string;
    customer_id: string;
    livemode: boolean;
    period_start: Date | null;
    period_end: Date | null;
    total: string | null;
    created_at: Date;
  }>({
    name: 'hc_list_invoices',
    text: `SELECT i.id::text AS id, c.external_id AS customer_id, i.livemode, i.period_start, i.period_end,
                  i.total::text AS total, i.created_at
             FROM invoices i JOIN customers c ON c.id = i.customer_id
            ORDER BY i.created_at DESC, i.id DESC LIMIT $1`,
    values: [limit + 1],
  });
  const rows = res.rows.slice(0, limit);
  return {
    data: rows.map((r) => ({
      id: r.id,
      customer_id: r.customer_id,
      livemode: r.livemode,
      period_start: iso(r.period_start),
      period_end: iso(r.period_end),
      total: r.total,
      created_at: r.created_at.toISOString(),
    })),
    has_more: res.rows.length > limit,
  };
}

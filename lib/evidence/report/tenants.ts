// A configuration of several clients on the page (issue 35, item 2): each tenant's p99 per repeat, and
// each repeat's repeats of earlier keys against the unique events the database holds. Read from each
// repeat's re-derived report (its `clients`, lib/protocol/clients-analysis.ts); null for a
// configuration of one client without repeats, whose page is then today's. Pure.
import { DASH, ms, num, type Table } from './cells';
import type { ConfigurationModel } from './model-types';

/** Rows: tenant 1 (the hottest) down; columns: each repeat's sent requests and p99. */
export function tenantsTable(c: ConfigurationModel): Table | null {
  const repeats = c.repeats.filter((r) => r.report?.clients?.tenants);
  if (!repeats.length) return null;
  const count = Math.max(...repeats.map((r) => r.report?.clients?.tenants?.length ?? 0));
  const header = ['tenant', ...repeats.flatMap((r) => [`${r.id} sent`, `${r.id} p99`])];
  const rows = Array.from({ length: count }, (_, i) => ({
    cells: [
      String(i + 1),
      ...repeats.flatMap((r) => {
        const t = r.report?.clients?.tenants?.[i];
        return t ? [num(t.sent, 0), ms(t.p99_ms)] : [DASH, DASH];
      }),
    ],
  }));
  return { header, rows };
}

/** Per repeat: requests that repeated an earlier key, and what was claimed once each. */
export function repeatsTable(c: ConfigurationModel): Table | null {
  const repeats = c.repeats.filter((r) => r.report?.clients);
  if (!repeats.length) return null;
  return {
    header: ['repeat', 'repeats of earlier keys', 'of them ok', 'unique requests ok', 'unique events', 'rows written'],
    rows: repeats.map((r) => {
      const x = r.report?.clients;
      const rowsCheck = r.report?.gate.checks.find((k) => k.name === 'rows');
      return { cells: [r.id, num(x?.repeats, 0), num(x?.repeats_ok, 0), num(x?.unique_requests_ok, 0), num(x?.unique_events, 0), rowsCheck?.detail ?? DASH] };
    }),
  };
}

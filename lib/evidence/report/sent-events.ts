// A configuration whose requests drew their sizes or stamped their events (issue 35, item 2) on the
// page: per repeat, the batch sizes as sent (requests, events, mean, smallest-largest) and the events
// late and out of order as sent, with the database's rows beside them. Read from each repeat's
// re-derived report (its `batch_sizes` and `timestamps`, lib/protocol/sent-events.ts); null for a
// configuration without either, whose page is then today's. Pure.
import { DASH, num, type Table } from './cells';
import type { ConfigurationModel } from './model-types';

const pct = (x: number | null | undefined) => (x === null || x === undefined ? DASH : `${num(x * 100, 1)} %`);

/** Rows: the repeats; columns: what their requests carried, as sent. */
export function sentEventsTable(c: ConfigurationModel): Table | null {
  const repeats = c.repeats.filter((r) => r.report?.batch_sizes || r.report?.timestamps);
  if (!repeats.length) return null;
  return {
    header: ['repeat', 'requests sent', 'events sent', 'mean batch', 'smallest-largest', 'late (as sent)', 'out of order (as sent)', 'rows written'],
    rows: repeats.map((r) => {
      const b = r.report?.batch_sizes;
      const t = r.report?.timestamps;
      const rows = r.report?.gate.checks.find((k) => k.name === 'rows');
      return {
        cells: [
          r.id,
          num(b?.requests_sent ?? r.report?.sent, 0),
          num(b?.events_sent ?? t?.events_sent, 0),
          b ? num(b.mean, 2) : DASH,
          b && b.min !== null ? `${b.min}-${b.max}` : DASH,
          t ? `${num(t.late, 0)} (${pct(t.late_share)})` : DASH,
          t ? `${num(t.out_of_order, 0)} (${pct(t.out_of_order_share)})` : DASH,
          rows?.detail ?? DASH,
        ],
      };
    }),
  };
}

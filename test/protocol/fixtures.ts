// Hand-made rows for the statistics tests: times in seconds / milliseconds, converted to the stream's
// microseconds, so each fixture reads like the arithmetic it checks.
import { SampleColumns, type SampleRow, type Scenario } from '../../lib/protocol/sample-row';
import type { StreamPlan } from '../../lib/protocol/stream-plan';

export interface ReqOpts {
  status?: number;
  /** sent - intended, ms */
  lagMs?: number;
  events?: number;
  quantity?: number;
  scenario?: Scenario;
}

/** A sent request intended at `atS` seconds, answered after `latencyMs`. */
export function req(atS: number, latencyMs: number, o: ReqOpts = {}): SampleRow {
  const intended = Math.round(atS * 1e6);
  const sent = intended + Math.round((o.lagMs ?? 0) * 1000);
  return {
    scenario: o.scenario ?? 'ingest',
    intended_us: intended,
    sent_us: sent,
    done_us: sent + Math.round(latencyMs * 1000),
    status: o.status ?? 201,
    events: o.events ?? 1,
    quantity: o.quantity ?? 1,
  };
}

/** A request intended at `atS` seconds that was dropped. */
export function dropped(atS: number, o: { events?: number; scenario?: Scenario } = {}): SampleRow {
  return { scenario: o.scenario ?? 'ingest', intended_us: Math.round(atS * 1e6), sent_us: null, done_us: null, status: -1, events: o.events ?? 1, quantity: 0 };
}

/** n requests evenly spread over second s (at s + i/n), each with latency latencyMs(i). */
export function second(s: number, n: number, latencyMs: (i: number) => number, o: ReqOpts = {}): SampleRow[] {
  return Array.from({ length: n }, (_, i) => req(s + i / n, latencyMs(i), o));
}

export function cols(rows: SampleRow[]): SampleColumns {
  return SampleColumns.fromRows(rows);
}

/**
 * The plan of a run of the rig's own generator (as its `#plan` record reads back): `rate` events/s in
 * requests of `batch`, `seconds` long, a probe at `probeRate`/s.
 */
export function plan(rate: number, batch: number, seconds: number, o: { probeRate?: number; cutShort?: boolean } = {}): StreamPlan {
  return { mode: 'open', rate, batch, seconds, probe_rate: o.probeRate ?? 0, run_tag: 'test', cut_short: o.cutShort ?? false, cut_reason: o.cutShort ? 'SIGINT' : null, source: 'stream' };
}

/** Columns of `rows` carrying `p` as their stream's own plan. */
export function planned(rows: SampleRow[], p: StreamPlan): SampleColumns {
  const c = SampleColumns.fromRows(rows);
  c.plan = p;
  return c;
}

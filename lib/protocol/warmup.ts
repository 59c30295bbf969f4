// The warm-up before a configuration's first repeat (or a ladder's first rung), judged. Pure.
//
// A warm-up is not a measurement: its latency, drops and freezes are exactly the cold start it exists
// to absorb, so none of them is gated, counted or pooled. What it must show is that the target is
// there and sound: something answered 2xx, nothing failed (a 5xx, a 4xx or a transport error now
// would fail every repeat after it), and what the service acknowledged is what the database gained
// under the warm-up's own run tag. A warm-up that fails on these stops the campaign before any
// measured repeat, as a bring-up refusal does.
import type { IngestAnalysis } from './analysis';
import type { Reconciliation } from './gates';
import { INGEST, STATUS_DROPPED, isOk, type SampleColumns } from './sample-row';

export interface WarmupJudgement {
  ok: boolean;
  /** Why it stops the campaign, one sentence each; empty when ok. */
  reasons: string[];
}

/** How many ingest requests ended with each non-2xx status ("0" = transport error), for the reason. */
export function failedStatuses(c: SampleColumns): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < c.length; i++) {
    const s = c.status[i];
    if (c.scenario[i] !== INGEST || s === STATUS_DROPPED || isOk(s)) continue;
    out[String(s)] = (out[String(s)] ?? 0) + 1;
  }
  return out;
}

/** Most frequent first: what the target mostly said is what the reader needs. */
const statusList = (s: Record<string, number>) =>
  Object.entries(s)
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${n} x ${code === '0' ? 'transport error' : code}`)
    .join(', ');

export function judgeWarmup(
  i: Pick<IngestAnalysis, 'sent' | 'ok' | 'failed' | 'events_claimed' | 'quantity_claimed'>,
  rec: Reconciliation | null,
  statuses: Record<string, number> = {},
): WarmupJudgement {
  const reasons: string[] = [];
  const seen = Object.keys(statuses).length ? ` (${statusList(statuses)})` : '';
  if (i.ok === 0) reasons.push(`nothing answered 2xx: ${i.sent} requests sent, ${i.failed} failed${seen}`);
  else if (i.failed > 0) reasons.push(`${i.failed} of ${i.sent} requests failed${seen}: the target is not sound`);
  if (rec === null) reasons.push('not reconciled: the database was not counted');
  else {
    if (rec.rows_written !== i.events_claimed) reasons.push(`the service acknowledged ${i.events_claimed} events but the database gained ${rec.rows_written} rows under the warm-up's run tag`);
    if (rec.quantity_gained !== i.quantity_claimed) reasons.push(`quantity acknowledged ${i.quantity_claimed}, gained ${rec.quantity_gained}`);
  }
  return { ok: reasons.length === 0, reasons };
}

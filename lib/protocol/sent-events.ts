// What a stream's requests carried when its plan draws their sizes or stamps their events (issue 35,
// item 2; batch-sizes.ts, client-timestamps.ts). Each row's index k on the plan's schedule gives its
// original (clients.ts: a repeat carries its original's body), and with it the size and the stamps the
// plan gave that body, so the stream's row format does not change.
//
// - Batch sizes: every ingest row's `events` must be the size its request drew (a dropped row too: it
//   carries what it would have sent). A row that is not is refused, naming its line, like a row off the
//   schedule (stream-plan.ts, refuseOffSchedule): a stream whose sizes are not its plan's is not judged.
//   The figures are the sizes as sent: requests, events, mean, smallest and largest.
// - Client timestamps: the events of every sent row (a repeat's too: they went on the wire again) are
//   counted on time, late or out of order by the plan's draw: the shares as sent. Beside them, the late
//   and out-of-order events among the claims (each original once, as the reconciliation counts them:
//   clients-analysis.ts): what a service that loses late events would be short of.
// Pure: the analysis (analysis.ts) calls it for a plan with batch sizes or timestamps, and only then.
import { BatchSizes } from './batch-sizes';
import { ClientTimestamps, LATE, OUT_OF_ORDER } from './client-timestamps';
import { planClients } from './clients-analysis';
import { INGEST, SCENARIOS, STATUS_DROPPED, SampleFormatError, isOk, type SampleColumns } from './sample-row';
import { requestRate, scheduleIndex, shapedSchedule, type StreamPlan } from './stream-plan';

export interface BatchSizesFigures {
  /** Ingest requests sent (not dropped), repeats included. */
  requests_sent: number;
  events_sent: number;
  /** events_sent / requests_sent; null when none was sent. */
  mean: number | null;
  min: number | null;
  max: number | null;
}

export interface TimestampsFigures {
  /** Events of the sent requests, repeats included: the wire's. */
  events_sent: number;
  late: number;
  out_of_order: number;
  /** late / events_sent, out_of_order / events_sent (null when nothing was sent). */
  late_share: number | null;
  out_of_order_share: number | null;
  /** Late and out-of-order events among the unique claims (each original once): what the database must hold. */
  late_claimed: number;
  out_of_order_claimed: number;
}

export interface SentEventsAnalysis {
  batch_sizes?: BatchSizesFigures;
  timestamps?: TimestampsFigures;
}

/**
 * The batch sizes and timestamps of a stream whose plan carries either, or null (a plan with neither:
 * the analysis is today's). Throws SampleFormatError at the first ingest row whose events are not the
 * size its request drew.
 */
export function analyzeSentEvents(cols: SampleColumns, plan: StreamPlan): SentEventsAnalysis | null {
  if (plan.mode !== 'open' || (!plan.batch_sizes && !plan.timestamps)) return null;
  const sizes = plan.batch_sizes ? new BatchSizes(plan.batch_sizes, plan.batch) : null;
  const stamps = plan.timestamps ? new ClientTimestamps(plan.timestamps) : null;
  const map = planClients(plan);
  const shaped = shapedSchedule(plan);
  const rr = requestRate(plan);
  const claimed = new Set<number>();
  const b = { requests_sent: 0, events_sent: 0, min: Infinity, max: -Infinity };
  const t = { events_sent: 0, late: 0, out_of_order: 0, late_claimed: 0, out_of_order_claimed: 0 };
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== INGEST) continue;
    // Every row is on the schedule (refuseOffSchedule ran first): its index is found.
    const k = shaped ? shaped.indexOf(cols.intended[i]) : scheduleIndex(rr, cols.intended[i]);
    const original = map ? map.originalOf(k) : k;
    const events = cols.events[i];
    if (sizes) {
      const want = sizes.of(original);
      if (events !== want) {
        const whose = original === k ? '' : ` (a repeat of request ${original}, whose body it carries)`;
        throw new SampleFormatError(i + cols.firstRowLine, `${SCENARIOS[INGEST]} row intended at ${cols.intended[i]} µs carries ${events} events; the plan's ${plan.batch_sizes?.distribution} batch sizes give request ${k}${whose} ${want}: a row that is not the plan's`);
      }
    }
    const st = cols.status[i];
    if (st === STATUS_DROPPED) continue;
    b.requests_sent++;
    b.events_sent += events;
    if (events < b.min) b.min = events;
    if (events > b.max) b.max = events;
    if (!stamps) continue;
    const claim = isOk(st) && !claimed.has(original);
    if (claim) claimed.add(original);
    t.events_sent += events;
    for (let j = 0; j < events; j++) {
      const kind = stamps.kindOf(original, j);
      if (kind === LATE) {
        t.late++;
        if (claim) t.late_claimed++;
      } else if (kind === OUT_OF_ORDER) {
        t.out_of_order++;
        if (claim) t.out_of_order_claimed++;
      }
    }
  }
  const share = (x: number, of: number) => (of > 0 ? x / of : null);
  return {
    ...(sizes
      ? {
          batch_sizes: {
            requests_sent: b.requests_sent,
            events_sent: b.events_sent,
            mean: share(b.events_sent, b.requests_sent),
            min: b.requests_sent ? b.min : null,
            max: b.requests_sent ? b.max : null,
          },
        }
      : {}),
    ...(stamps ? { timestamps: { ...t, late_share: share(t.late, t.events_sent), out_of_order_share: share(t.out_of_order, t.events_sent) } } : {}),
  };
}

// Every statistic of one repeat, derived from its sample stream alone (pure: the rows in, the figures
// out). `rig analyze`, `rig measure`, calibration and the campaign's report all call this one
// function, so a figure means the same thing wherever it is printed.
//
// Ingest and probe are analysed apart: the probe's samples never pool into ingest latency.
//
// The run's length is its plan's (stream-plan.ts: the stream's own `#plan` record, or one the caller
// gives for a foreign stream): rows outside the plan's schedule are refused, naming the first, so a
// stray row can neither stretch the run nor stand in for a request; delivery is counted second by
// second against what the plan scheduled. Without a plan the length is the caller's `durationS`
// (rows after it refused the same way), else the stream's own (streamDurationS), and delivery is not
// judged (`delivery: null`).
import { buckets, fullBuckets, groupBySecond, streamDurationS, type BucketStat } from './buckets';
import { freezeCadenceS, freezeSeconds, medianBucketP99, windows } from './detectors';
import { drift, type Drift } from './drift';
import { percentiles } from './percentile';
import { analyzeClients, type ClientsAnalysis } from './clients-analysis';
import { analyzeSentEvents, type BatchSizesFigures, type TimestampsFigures } from './sent-events';
import { analyzePhases, type PhaseAnalysis } from './phases';
import { perWindowP99 } from './window-figures';
import type { WindowFigure } from './window-gates';
import { INGEST, PROBE_SCENARIOS, SCENARIOS, STATUS_DROPPED, SampleFormatError, isOk, type ProbeScenario, type SampleColumns } from './sample-row';
import { planSeconds, refuseOffSchedule, scheduledPerSecond, type StreamPlan } from './stream-plan';

export interface Counts {
  /** Rows: every request whose time came (sent + dropped). */
  offered: number;
  sent: number;
  /** 2xx answers. */
  ok: number;
  /** Sent without a 2xx: transport errors, 4xx, 5xx. */
  failed: number;
  /** Never sent: no free slot when its time came. */
  dropped: number;
  /** Latency samples (= sent). */
  samples: number;
  /** µs (done - sent), nearest-rank; null without samples. */
  p50_us: number | null;
  p99_us: number | null;
  max_us: number | null;
}

export interface IngestAnalysis extends Counts {
  duration_s: number;
  /** Events in every offered request (dropped ones included). */
  events_offered: number;
  /** Events and quantity in requests answered 2xx: what the database must have gained. */
  events_claimed: number;
  quantity_claimed: number;
  offered_rate_rps: number;
  delivered_rate_rps: number;
  offered_rate_evps: number;
  /** Acknowledged (2xx) events per second: the delivered rate. */
  delivered_rate_evps: number;
  /** Coordinated-omission corrected (done - intended), µs. */
  co_p50_us: number | null;
  co_p99_us: number | null;
  /** sent - intended: how late the generator itself was, µs. */
  schedule_lag_p50_us: number | null;
  schedule_lag_p99_us: number | null;
  schedule_lag_max_us: number | null;
  /** The worst schedule lag of each second of the run (by intended time; 0 where nothing was sent), µs. */
  schedule_lag_by_second_max_us: Float64Array;
  /** The plan the run was judged against (null: none, delivery not judged). */
  plan: StreamPlan | null;
  /** Delivery against the plan's schedule, second by second; null without a plan or in a closed loop. */
  delivery: Delivery | null;
  median_bucket_p99_us: number | null;
  worst_10s_p99_us: number | null;
  /** [first, last] 10-s bucket start seconds of each window. */
  windows: Array<[number, number]>;
  freeze_seconds: number[];
  freeze_cadence_s: number | null;
  drift: Drift;
  per_second: BucketStat[];
  /** The same 1-s buckets over the corrected latency (done - intended): what a stall on the load host looks like. */
  per_second_corrected: BucketStat[];
  ten_second: BucketStat[];
  /**
   * A spike's or a ramp's phases (phases.ts): each phase's p99, a spike's recovery; `drift` is then
   * of the steady phase alone. Absent for a steady schedule (constant, Poisson): the analysis is today's.
   */
  phases?: PhaseAnalysis;
  /**
   * Several clients (issue 35: the plan's tenants or duplicates; clients-analysis.ts): repeats, the
   * unique claims and each tenant's p99. With it, events_claimed and quantity_claimed count each
   * original once (what the database must hold). Absent for one client without repeats: today's.
   */
  clients?: ClientsAnalysis;
  /**
   * Batch sizes drawn from a distribution (issue 35, sent-events.ts): the sizes as sent, each row's held to
   * its request's draw. Absent without them in the plan: today's.
   */
  batch_sizes?: BatchSizesFigures;
  /** Client timestamps (issue 35): the events late and out of order as sent, and among the claims. Absent without them. */
  timestamps?: TimestampsFigures;
  /**
   * Each window's p99 when the caller asked for windows (a workload's windowSeconds: window-gates.ts);
   * absent otherwise: the analysis is today's.
   */
  per_window?: WindowFigure[];
}

/**
 * What the plan scheduled and what was delivered (answered 2xx), per second of the window. The rule
 * (docs/instrument.md, "Delivery"): the protocol passes a repeat only with 0 dropped and 0 failed, so
 * every request its schedule offered must have been delivered; a second that delivered fewer than it
 * was offered is short, one that delivered none of them empty. Every plan is exact, the stream's own
 * or the flags' (its rows are on the schedule, stream-plan.ts): one plan, one strictness.
 */
export interface Delivery {
  scheduled: number;
  delivered: number;
  /** Requests a second may fall short by: 0 for every plan (kept in the shape: older reports carry 1 for a flags plan). */
  tolerance: number;
  /** Seconds that delivered fewer than the plan scheduled there (less the tolerance), ascending. */
  short_seconds: number[];
  /** Of those, the seconds that delivered nothing. */
  empty_seconds: number[];
}

/** Lateness of the generator (sent - intended), µs. */
export interface LagStats {
  samples: number;
  p50_us: number | null;
  p99_us: number | null;
  max_us: number | null;
  /** The second-largest lag (null: one request): the tail of a probe too small for a p99 (gates.ts). */
  second_max_us: number | null;
  by_second_max_us: Float64Array;
}

export interface ProbeEndpointAnalysis extends Counts {
  scenario: ProbeScenario;
}

export interface RunAnalysis {
  duration_s: number;
  plan: StreamPlan | null;
  ingest: IngestAnalysis;
  /** One entry per probe endpoint that has rows, in PROBE_SCENARIOS order. */
  probe: ProbeEndpointAnalysis[];
  /** The probe's schedule lag, every endpoint together (null: no probe request was sent). */
  probe_lag: LagStats | null;
}

export interface AnalyzeOptions {
  /** The repeat's length in seconds, without a plan; default: from the stream. */
  durationS?: number;
  /** The plan for a stream without one of its own (a foreign stream: `rig analyze --rate --seconds`). */
  plan?: StreamPlan | null;
  /** Judge windows of this many seconds (a workload's windowSeconds, issue 35): each window's p99 in `per_window`. */
  windowSeconds?: number;
}

/** Throws SampleFormatError (naming the first row outside the plan's schedule, or a plan given twice). */
export function analyzeSamples(cols: SampleColumns, opts: AnalyzeOptions = {}): RunAnalysis {
  const plan = runPlan(cols, opts);
  let durationS: number;
  if (plan) {
    refuseOffSchedule(cols, plan);
    durationS = planSeconds(plan);
  } else if (opts.durationS !== undefined) {
    durationS = opts.durationS;
    refuseAfter(cols, durationS);
  } else {
    durationS = streamDurationS(cols);
  }
  const ingest = analyzeIngest(cols, durationS, plan, opts.windowSeconds);
  const probe: ProbeEndpointAnalysis[] = [];
  for (const scenario of PROBE_SCENARIOS) {
    const c = counts(cols, SCENARIOS.indexOf(scenario));
    if (c.offered > 0) probe.push({ scenario, ...c });
  }
  return { duration_s: durationS, plan, ingest, probe, probe_lag: probeLag(cols, durationS) };
}

/** The stream's own plan, or the caller's; both is a conflict unless they agree on the schedule. */
function runPlan(cols: SampleColumns, opts: AnalyzeOptions): StreamPlan | null {
  const own = cols.plan;
  const given = opts.plan ?? null;
  if (own && given) {
    const same = own.mode === given.mode && own.rate === given.rate && own.batch === given.batch && own.seconds === given.seconds;
    if (!same) {
      throw new SampleFormatError(
        1,
        `the stream carries its own plan (${own.mode} loop, rate ${own.rate ?? '—'} ev/s, batch ${own.batch}, ${own.seconds} s), which differs from the one given (rate ${given.rate ?? '—'} ev/s, batch ${given.batch}, ${given.seconds} s): drop the flags, the stream's plan is what it was offered`,
      );
    }
    return own;
  }
  return own ?? given;
}

/** Without a plan, a given length is still the run's: a row intended after it is refused, not counted. */
function refuseAfter(cols: SampleColumns, durationS: number): void {
  const end = durationS * 1e6;
  for (let i = 0; i < cols.length; i++) {
    if (cols.intended[i] >= end) {
      throw new SampleFormatError(i + cols.firstRowLine, `${SCENARIOS[cols.scenario[i]]} row intended at ${cols.intended[i]} µs, after the run's ${durationS} s (--seconds): a row outside the run`);
    }
  }
}

function analyzeIngest(cols: SampleColumns, durationS: number, plan: StreamPlan | null, windowSeconds?: number): IngestAnalysis {
  const c = counts(cols, INGEST);
  let eventsOffered = 0;
  let eventsClaimed = 0;
  let quantityClaimed = 0;
  const co = new Float64Array(c.sent);
  let k = 0;
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== INGEST) continue;
    eventsOffered += cols.events[i];
    const st = cols.status[i];
    if (st === STATUS_DROPPED) continue;
    co[k++] = cols.done[i] - cols.intended[i];
    if (isOk(st)) {
      eventsClaimed += cols.events[i];
      quantityClaimed += cols.quantity[i];
    }
  }
  const [coP50, coP99] = pcts(co, [50, 99]);
  const lagStats = lagOf(cols, INGEST, durationS);

  const g = groupBySecond(cols, INGEST, durationS, 'service');
  const perSecond = buckets(g, 1);
  // A stalled load host sends late and gets fast answers: its seconds freeze in the corrected latency
  // (intended -> done), not in done - sent. A second is a freeze-second in either.
  const corrected = buckets(groupBySecond(cols, INGEST, durationS, 'corrected'), 1);
  const tenSecond = buckets(g, 10);
  const judged = fullBuckets(tenSecond, 10); // a partial last bucket is not a 10-s p99
  const med = medianBucketP99(judged);
  let worst: number | null = null;
  for (const b of judged) if (b.p99_us !== null && (worst === null || b.p99_us > worst)) worst = b.p99_us;
  const freezes = [...new Set([...freezeSeconds(perSecond), ...freezeSeconds(corrected)])].sort((x, y) => x - y);
  // A spike or a ramp is judged per phase, its drift over its steady phase only (phases.ts).
  const phased = plan && plan.mode === 'open' ? analyzePhases(g, plan.arrivals) : null;
  const clients = plan ? analyzeClients(cols, plan) : null;
  const sentEvents = plan ? analyzeSentEvents(cols, plan) : null;
  const per = (x: number) => (durationS > 0 ? x / durationS : 0);
  return {
    ...c,
    duration_s: durationS,
    events_offered: eventsOffered,
    events_claimed: clients ? clients.unique_events : eventsClaimed,
    quantity_claimed: clients ? clients.unique_quantity : quantityClaimed,
    offered_rate_rps: per(c.offered),
    delivered_rate_rps: per(c.ok),
    offered_rate_evps: per(eventsOffered),
    delivered_rate_evps: per(eventsClaimed),
    co_p50_us: coP50,
    co_p99_us: coP99,
    schedule_lag_p50_us: lagStats.p50_us,
    schedule_lag_p99_us: lagStats.p99_us,
    schedule_lag_max_us: lagStats.max_us,
    schedule_lag_by_second_max_us: lagStats.by_second_max_us,
    plan,
    delivery: plan && plan.mode === 'open' ? delivery(plan, perSecond) : null,
    median_bucket_p99_us: med,
    worst_10s_p99_us: worst,
    windows: windows(judged, med),
    freeze_seconds: freezes,
    freeze_cadence_s: freezeCadenceS(freezes),
    drift: phased ? phased.drift : drift(g),
    per_second: perSecond,
    per_second_corrected: corrected,
    ten_second: tenSecond,
    ...(phased ? { phases: phased.phases } : {}),
    ...(clients ? { clients } : {}),
    ...(sentEvents?.batch_sizes ? { batch_sizes: sentEvents.batch_sizes } : {}),
    ...(sentEvents?.timestamps ? { timestamps: sentEvents.timestamps } : {}),
    ...(windowSeconds ? { per_window: perWindowP99(g, windowSeconds) } : {}),
  };
}

function delivery(plan: StreamPlan, perSecond: readonly BucketStat[]): Delivery {
  const want = scheduledPerSecond(plan);
  const tolerance = 0;
  let scheduled = 0;
  let delivered = 0;
  const short: number[] = [];
  const empty: number[] = [];
  for (let s = 0; s < want.length; s++) {
    const got = perSecond[s]?.ok ?? 0;
    scheduled += want[s];
    delivered += Math.min(got, want[s] + tolerance);
    if (got < want[s] - tolerance) {
      short.push(s);
      if (got === 0) empty.push(s);
    }
  }
  return { scheduled, delivered, tolerance, short_seconds: short, empty_seconds: empty };
}

/** Schedule lag of the scenarios matching `code` (-1: every probe scenario), with each second's worst. */
function lagOf(cols: SampleColumns, code: number, durationS: number): LagStats {
  const lag = new Float64Array(cols.length);
  const bySecond = new Float64Array(Math.max(0, durationS));
  let n = 0;
  let max: number | null = null;
  let second: number | null = null;
  for (let i = 0; i < cols.length; i++) {
    const sc = cols.scenario[i];
    if (code >= 0 ? sc !== code : sc === INGEST) continue;
    if (cols.status[i] === STATUS_DROPPED) continue;
    const l = cols.sent[i] - cols.intended[i];
    lag[n++] = l;
    if (max === null || l > max) {
      second = max;
      max = l;
    } else if (second === null || l > second) second = l;
    const s = Math.min(bySecond.length - 1, Math.floor(cols.intended[i] / 1e6));
    if (s >= 0 && l > bySecond[s]) bySecond[s] = l;
  }
  const [p50, p99] = pcts(lag.subarray(0, n), [50, 99]);
  return { samples: n, p50_us: p50, p99_us: p99, max_us: max, second_max_us: second, by_second_max_us: bySecond };
}

function probeLag(cols: SampleColumns, durationS: number): LagStats | null {
  const l = lagOf(cols, -1, durationS);
  return l.samples ? l : null;
}

function counts(cols: SampleColumns, code: number): Counts {
  let offered = 0;
  let ok = 0;
  let dropped = 0;
  let n = 0;
  const lat = new Float64Array(cols.length);
  let max: number | null = null;
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== code) continue;
    offered++;
    const st = cols.status[i];
    if (st === STATUS_DROPPED) {
      dropped++;
      continue;
    }
    if (isOk(st)) ok++;
    const l = cols.done[i] - cols.sent[i];
    lat[n++] = l;
    if (max === null || l > max) max = l;
  }
  const [p50, p99] = pcts(lat.subarray(0, n), [50, 99]);
  const sent = offered - dropped;
  return { offered, sent, ok, failed: sent - ok, dropped, samples: n, p50_us: p50, p99_us: p99, max_us: max };
}

function pcts(values: Float64Array, ps: number[]): Array<number | null> {
  return values.length ? percentiles(values, ps) : ps.map(() => null);
}

// Every statistic of one repeat, derived from its sample stream alone (pure: the rows in, the figures
// out). `rig analyze`, `rig measure`, calibration and the campaign's report all call this one
// function, so a figure means the same thing wherever it is printed.
//
// Ingest and probe are analysed apart: the probe's samples never pool into ingest latency.
// Rates are per second of the run's duration (durationS: given by the caller that knows the
// configured length, else the stream's own, see streamDurationS).
import { buckets, fullBuckets, groupBySecond, streamDurationS, type BucketStat } from './buckets';
import { freezeCadenceS, freezeSeconds, medianBucketP99, windows } from './detectors';
import { drift, type Drift } from './drift';
import { percentiles } from './percentile';
import { INGEST, PROBE_SCENARIOS, SCENARIOS, STATUS_DROPPED, isOk, type ProbeScenario, type SampleColumns } from './sample-row';

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
  median_bucket_p99_us: number | null;
  worst_10s_p99_us: number | null;
  /** [first, last] 10-s bucket start seconds of each window. */
  windows: Array<[number, number]>;
  freeze_seconds: number[];
  freeze_cadence_s: number | null;
  drift: Drift;
  per_second: BucketStat[];
  ten_second: BucketStat[];
}

export interface ProbeEndpointAnalysis extends Counts {
  scenario: ProbeScenario;
}

export interface RunAnalysis {
  duration_s: number;
  ingest: IngestAnalysis;
  /** One entry per probe endpoint that has rows, in PROBE_SCENARIOS order. */
  probe: ProbeEndpointAnalysis[];
}

export interface AnalyzeOptions {
  /** The repeat's length in seconds; default: from the stream. */
  durationS?: number;
}

export function analyzeSamples(cols: SampleColumns, opts: AnalyzeOptions = {}): RunAnalysis {
  const durationS = Math.max(opts.durationS ?? 0, streamDurationS(cols));
  const ingest = analyzeIngest(cols, durationS);
  const probe: ProbeEndpointAnalysis[] = [];
  for (const scenario of PROBE_SCENARIOS) {
    const c = counts(cols, SCENARIOS.indexOf(scenario));
    if (c.offered > 0) probe.push({ scenario, ...c });
  }
  return { duration_s: durationS, ingest, probe };
}

function analyzeIngest(cols: SampleColumns, durationS: number): IngestAnalysis {
  const c = counts(cols, INGEST);
  let eventsOffered = 0;
  let eventsClaimed = 0;
  let quantityClaimed = 0;
  const co = new Float64Array(c.sent);
  const lag = new Float64Array(c.sent);
  let k = 0;
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== INGEST) continue;
    eventsOffered += cols.events[i];
    const st = cols.status[i];
    if (st === STATUS_DROPPED) continue;
    co[k] = cols.done[i] - cols.intended[i];
    lag[k++] = cols.sent[i] - cols.intended[i];
    if (isOk(st)) {
      eventsClaimed += cols.events[i];
      quantityClaimed += cols.quantity[i];
    }
  }
  const [coP50, coP99] = pcts(co, [50, 99]);
  const [lagP50, lagP99] = pcts(lag, [50, 99]);
  let lagMax: number | null = null;
  for (let i = 0; i < lag.length; i++) if (lagMax === null || lag[i] > lagMax) lagMax = lag[i];

  const g = groupBySecond(cols, INGEST, durationS, 'service');
  const perSecond = buckets(g, 1);
  const tenSecond = buckets(g, 10);
  const judged = fullBuckets(tenSecond, 10); // a partial last bucket is not a 10-s p99
  const med = medianBucketP99(judged);
  let worst: number | null = null;
  for (const b of judged) if (b.p99_us !== null && (worst === null || b.p99_us > worst)) worst = b.p99_us;
  const freezes = freezeSeconds(perSecond);
  const per = (x: number) => (durationS > 0 ? x / durationS : 0);
  return {
    ...c,
    duration_s: durationS,
    events_offered: eventsOffered,
    events_claimed: eventsClaimed,
    quantity_claimed: quantityClaimed,
    offered_rate_rps: per(c.offered),
    delivered_rate_rps: per(c.ok),
    offered_rate_evps: per(eventsOffered),
    delivered_rate_evps: per(eventsClaimed),
    co_p50_us: coP50,
    co_p99_us: coP99,
    schedule_lag_p50_us: lagP50,
    schedule_lag_p99_us: lagP99,
    schedule_lag_max_us: lagMax,
    median_bucket_p99_us: med,
    worst_10s_p99_us: worst,
    windows: windows(judged, med),
    freeze_seconds: freezes,
    freeze_cadence_s: freezeCadenceS(freezes),
    drift: drift(g),
    per_second: perSecond,
    ten_second: tenSecond,
  };
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

// The report of one repeat, as `rig analyze --json` prints it and `rig measure` writes it to
// verdict.json: the analysis in milliseconds, the ingest gate, the probe verdict and the repeat's
// verdict. Also its human-readable rendering. Pure.
import type { RunAnalysis } from './analysis';
import { secondRanges } from './second-ranges';
import { describeArrivals } from './arrivals';
import type { PhaseAnalysis } from './phases';
import type { ClientsAnalysis } from './clients-analysis';
import type { BatchSizesFigures, TimestampsFigures } from './sent-events';
import type { WindowFigure } from './window-gates';
import type { StreamPlan } from './stream-plan';
import { checkReason, driftInterval, type GateVerdict } from './gates';
import { notJudged, type ProbeVerdict, type RepeatVerdict, type VerdictState } from './verdicts';

export interface RunReport {
  duration_s: number;
  samples: number;
  offered: number;
  sent: number;
  ok: number;
  dropped: number;
  failed: number;
  /** events/s offered and delivered (acknowledged 2xx). */
  offered_rate: number;
  delivered_rate: number;
  offered_rate_rps: number;
  delivered_rate_rps: number;
  events_claimed: number;
  quantity_claimed: number;
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  /** Corrected latency (done - intended): what a request arriving on schedule waited. */
  co_p50_ms: number | null;
  co_p99_ms: number | null;
  /** sent - intended: how late the generator itself was (gated: the `instrument` check). */
  schedule_lag_p50_ms: number | null;
  schedule_lag_p99_ms: number | null;
  /** The latest any request left (ms), and the seconds holding one later than the limit allows (the instrument check's). */
  schedule_lag_max_ms: number | null;
  late_seconds: number[];
  /** The probe's schedule lag (every endpoint together); null without a probe. */
  probe_schedule_lag_p99_ms: number | null;
  probe_schedule_lag_max_ms: number | null;
  /** The plan judged against (null: none; delivery not judged). */
  plan: StreamPlan | null;
  /** Delivery against the plan, second by second; null without a plan (or in a closed loop). */
  delivery: { scheduled: number; delivered: number; short_seconds: number[]; empty_seconds: number[] } | null;
  median_10s_p99_ms: number | null;
  worst_10s_p99_ms: number | null;
  drift: number | null;
  /**
   * The drift's 95 % interval (lib/protocol/drift.ts): low (0: unbounded below) and high (null:
   * unbounded above), as the gate compared them; absent from a verdict.json written before issue 34.
   */
  drift_low?: number | null;
  drift_high?: number | null;
  drift_first_third_p99_ms: number | null;
  drift_last_third_p99_ms: number | null;
  /** A spike's or a ramp's phases: each phase's p99, a spike's recovery (lib/protocol/phases.ts); absent for a steady schedule. */
  phases?: PhaseAnalysis;
  /**
   * Several clients (issue 35: tenants, duplicates; clients-analysis.ts): the repeats, the unique
   * claims (events_claimed is then theirs) and each tenant's p99. Absent for one client: today's report.
   */
  clients?: ClientsReport;
  /** Batch sizes drawn from a distribution (issue 35, sent-events.ts): the sizes as sent. Absent without them: today's report. */
  batch_sizes?: BatchSizesFigures;
  /** Client timestamps (issue 35): events late and out of order as sent, and among the claims. Absent without them. */
  timestamps?: TimestampsFigures;
  /** A long soak's windows, each with its p99 (window-gates.ts); absent without a workload's windowSeconds. */
  windows_p99?: WindowFigure[];
  freeze_seconds: number[];
  freeze_cadence_s: number | null;
  windows: Array<[number, number]>;
  probe: {
    verdict: ProbeVerdict['state'];
    budget_ms: number;
    reasons: string[];
    endpoints: Record<string, { samples: number; failed: number; dropped: number; p50_ms: number | null; p99_ms: number | null; over_budget: boolean }>;
  };
  gate: GateVerdict;
  /** state: PASS, FAIL, UNRECONCILED (every check that ran passed, the database was not counted), NOT JUDGED (no p99 limit), CUT SHORT. */
  verdict: { passed: boolean; state: VerdictState; interrupted: boolean; reasons: string[] };
}

export interface ClientsReport {
  repeats: number;
  repeats_ok: number;
  unique_requests_ok: number;
  unique_events: number;
  unique_quantity: number;
  tenants?: Array<{ tenant: number; offered: number; sent: number; ok: number; p99_ms: number | null }>;
}

const ms = (us: number | null): number | null => (us === null ? null : round3(us / 1000));
const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function runReport(a: RunAnalysis, v: RepeatVerdict): RunReport {
  const i = a.ingest;
  const endpoints: RunReport['probe']['endpoints'] = {};
  for (const e of v.probe.endpoints) {
    endpoints[e.scenario] = { samples: e.samples, failed: e.failed, dropped: e.dropped, p50_ms: e.p50_ms, p99_ms: e.p99_ms, over_budget: e.over_budget };
  }
  return {
    duration_s: a.duration_s,
    samples: i.samples,
    offered: i.offered,
    sent: i.sent,
    ok: i.ok,
    dropped: i.dropped,
    failed: i.failed,
    offered_rate: round3(i.offered_rate_evps),
    delivered_rate: round3(i.delivered_rate_evps),
    offered_rate_rps: round3(i.offered_rate_rps),
    delivered_rate_rps: round3(i.delivered_rate_rps),
    events_claimed: i.events_claimed,
    quantity_claimed: i.quantity_claimed,
    p50_ms: ms(i.p50_us),
    p99_ms: ms(i.p99_us),
    max_ms: ms(i.max_us),
    co_p50_ms: ms(i.co_p50_us),
    co_p99_ms: ms(i.co_p99_us),
    schedule_lag_p50_ms: ms(i.schedule_lag_p50_us),
    schedule_lag_p99_ms: ms(i.schedule_lag_p99_us),
    schedule_lag_max_ms: ms(i.schedule_lag_max_us),
    late_seconds: v.ingest.checks.find((c) => c.name === 'instrument')?.seconds ?? [],
    probe_schedule_lag_p99_ms: ms(a.probe_lag?.p99_us ?? null),
    probe_schedule_lag_max_ms: ms(a.probe_lag?.max_us ?? null),
    plan: a.plan,
    delivery: i.delivery ? { scheduled: i.delivery.scheduled, delivered: i.delivery.delivered, short_seconds: i.delivery.short_seconds, empty_seconds: i.delivery.empty_seconds } : null,
    median_10s_p99_ms: ms(i.median_bucket_p99_us),
    worst_10s_p99_ms: ms(i.worst_10s_p99_us),
    drift: i.drift.ratio === null ? null : round3(i.drift.ratio),
    drift_low: i.drift.ratio_low,
    drift_high: i.drift.ratio_high,
    drift_first_third_p99_ms: ms(i.drift.first_p99_us),
    drift_last_third_p99_ms: ms(i.drift.last_p99_us),
    ...(i.phases ? { phases: i.phases } : {}),
    ...(i.clients ? { clients: clientsReport(i.clients) } : {}),
    ...(i.batch_sizes ? { batch_sizes: i.batch_sizes } : {}),
    ...(i.timestamps ? { timestamps: i.timestamps } : {}),
    ...(i.per_window ? { windows_p99: i.per_window } : {}),
    freeze_seconds: i.freeze_seconds,
    freeze_cadence_s: i.freeze_cadence_s,
    windows: i.windows,
    probe: { verdict: v.probe.state, budget_ms: v.probe.budget_ms, reasons: v.probe.reasons, endpoints },
    gate: v.ingest,
    verdict: { passed: v.passed, state: v.state, interrupted: v.interrupted, reasons: v.reasons },
  };
}

/** The report for a terminal: figures first, then every check, then the verdict line. */
export function formatRunReport(r: RunReport): string {
  const n = (x: number | null, unit = ' ms') => (x === null ? '—' : `${x}${unit}`);
  const lines = [
    `duration ${r.duration_s} s: offered ${r.offered} requests (${r.offered_rate} ev/s), sent ${r.sent}, ok ${r.ok}, failed ${r.failed}, dropped ${r.dropped}`,
    `delivered ${r.delivered_rate} ev/s (${r.delivered_rate_rps} req/s); claimed ${r.events_claimed} events, quantity ${r.quantity_claimed}`,
    r.plan
      ? `plan: ${r.plan.mode} loop${r.plan.rate === null ? '' : `, ${r.plan.arrivals ? describeArrivals(r.plan.arrivals, r.plan.rate) : `${r.plan.rate} ev/s`}`}, batch ${r.plan.batch}${r.plan.batch_sizes ? ` (the mean of ${r.plan.batch_sizes.distribution} sizes)` : ''}, ${r.plan.seconds} s${r.plan.probe_rate ? `, probe ${r.plan.probe_rate}/s` : ''}${r.plan.source === 'flags' ? ' (from the flags)' : ''}${r.plan.cut_short ? `; CUT SHORT${r.plan.cut_reason ? ` (${r.plan.cut_reason})` : ''}` : ''}${
          r.delivery ? `; delivered ${r.delivery.delivered} of ${r.delivery.scheduled} scheduled requests${r.delivery.short_seconds.length ? `, short seconds ${secondRanges(r.delivery.short_seconds)}` : ''}` : ''
        }`
      : 'plan: none in the stream: delivery not judged: no plan',
    `latency p50 ${n(r.p50_ms)}, p99 ${n(r.p99_ms)}, max ${n(r.max_ms)}; corrected p99 ${n(r.co_p99_ms)}; schedule lag p99 ${n(r.schedule_lag_p99_ms)}, max ${n(r.schedule_lag_max_ms)}, late seconds ${r.late_seconds.length ? secondRanges(r.late_seconds) : 'none'}`,
    `10-s buckets: median p99 ${n(r.median_10s_p99_ms)}, worst p99 ${n(r.worst_10s_p99_ms)}, windows ${r.windows.length ? r.windows.map(([a, b]) => `${a}-${b + 10}s`).join(', ') : 'none'}`,
    `freeze-seconds ${r.freeze_seconds.length}${r.freeze_seconds.length ? ` at ${r.freeze_seconds.join(', ')}` : ''}${r.freeze_cadence_s === null ? '' : `, cadence ${r.freeze_cadence_s} s`}; drift ${r.drift === null ? '—' : `x${r.drift}${r.drift_low === undefined || r.drift_low === null ? '' : ` (${driftInterval({ ratio_low: r.drift_low, ratio_high: r.drift_high ?? null })})`}`}`,
  ];
  if (r.clients) {
    const c = r.clients;
    lines.push(`clients: ${c.repeats} repeats of earlier keys (${c.repeats_ok} ok); ${c.unique_requests_ok} unique requests ok, ${c.unique_events} unique events, quantity ${c.unique_quantity}`);
    if (c.tenants) lines.push(`tenants: ${c.tenants.map((t) => `${t.tenant}: ${t.sent} sent, p99 ${n(t.p99_ms)}`).join('; ')}`);
  }
  if (r.batch_sizes) {
    const b = r.batch_sizes;
    lines.push(`batch sizes: ${b.requests_sent} requests sent, ${b.events_sent} events, mean ${b.mean === null ? '—' : round3(b.mean)} (${b.min ?? '—'}-${b.max ?? '—'})`);
  }
  if (r.timestamps) {
    const t = r.timestamps;
    const pct = (x: number | null) => (x === null ? '—' : `${round3(x * 100)} %`);
    lines.push(`client timestamps: of ${t.events_sent} events sent, ${t.late} late (${pct(t.late_share)}), ${t.out_of_order} out of order (${pct(t.out_of_order_share)}); claimed once each: ${t.late_claimed} late, ${t.out_of_order_claimed} out of order`);
  }
  for (const c of r.gate.checks) lines.push(`  ${c.passed === null ? 'n/a ' : c.passed ? 'ok  ' : 'FAIL'} ${checkReason(c)}`);
  for (const note of r.gate.notes) lines.push(`  note ${note}`);
  if (r.probe.verdict !== 'OFF') {
    for (const [name, e] of Object.entries(r.probe.endpoints)) {
      lines.push(`  probe ${name}: ${e.samples} samples, p50 ${n(e.p50_ms)}, p99 ${n(e.p99_ms)} (budget ${r.probe.budget_ms} ms)${e.failed ? `, ${e.failed} failed` : ''}${e.dropped ? `, ${e.dropped} dropped` : ''}`);
    }
    lines.push(`  probe verdict: ${r.probe.verdict}`);
  }
  lines.push(verdictLine(r));
  return lines.join('\n');
}

/**
 * The last line: the verdict's word, then why. NOT JUDGED and UNRECONCILED name the checks that ran (and passed) and
 * the ones that did not, so a reader sees what is missing before it could be a PASS.
 */
export function verdictLine(r: Pick<RunReport, 'gate' | 'verdict' | 'probe'>): string {
  const unchecked = r.gate.unchecked;
  const ran: string[] = r.gate.checks.filter((c) => c.passed !== null).map((c) => c.name);
  if (r.probe.verdict === 'OK') ran.push('probe');
  if (r.verdict.state === 'NOT JUDGED') {
    const why = notJudged(r.gate);
    const what: string[] = [];
    if (why.includes('no threshold')) what.push('without a p99 limit the latency was held to nothing');
    if (why.includes('no plan')) what.push('without a plan the delivery was not judged (give --rate and --seconds for a foreign stream)');
    if (why.includes('drift not judgeable')) what.push('a drift the samples cannot decide (a third too small for a p99, or an interval that straddles the limit) is neither a pass nor the service\'s fault');
    return `NOT JUDGED (${why.join('; ')}): every check that ran passed (${ran.join(', ')}); not checked: ${unchecked.join(', ')}: ${what.join('; ')}, so this is not a PASS`;
  }
  if (r.verdict.state === 'UNRECONCILED') {
    return `UNRECONCILED: every check that ran passed (${ran.join(', ')}); not checked: ${unchecked.join(', ')}: the database was not counted for this run tag, so this is not a PASS`;
  }
  return `${r.verdict.state}${unchecked.length ? ` (not checked: ${unchecked.join(', ')})` : ''}${r.verdict.reasons.length ? `: ${r.verdict.reasons.join('; ')}` : ''}`;
}

function clientsReport(c: ClientsAnalysis): ClientsReport {
  const { tenants, ...rest } = c;
  return { ...rest, ...(tenants ? { tenants: tenants.map((t) => ({ tenant: t.tenant, offered: t.offered, sent: t.sent, ok: t.ok, p99_ms: ms(t.p99_us) })) } : {}) };
}

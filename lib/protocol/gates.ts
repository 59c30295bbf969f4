// The gates, stated once (spec: "Method and the gates"). A verdict lists EVERY check that failed, not
// the first one: a repeat that dropped requests and drifted says both.
//
// Sustained repeat, passes only when all hold:
//   threshold  p99 <= the configuration's p99 limit (the k6 thresholds of the original rig)
//   delivered  every request the plan scheduled was answered 2xx, second by second (the protocol's
//              "0 dropped, 0 failed" over the schedule, not over whatever rows the stream holds): a
//              short or empty second fails, naming it; a run cut short is never a pass
//   dropped    0 requests dropped
//   failed     0 requests failed (transport error, 4xx, 5xx)
//   rows       rows written (counted in the DB by run tag) == events claimed (acknowledged 2xx)
//   quantity   sum of quantity gained in the DB == sum of quantity the client had acknowledged
//   samples    >= 1,000 latency samples
//   drift      last-third p99 / first-third p99 < the drift limit (default 1.5), thirds over the plan,
//              judged with its 95 % interval (drift.ts): failed only when the interval lies at or over
//              the limit, passed when under it, not judgeable when it straddles the limit
//   instrument schedule-lag p99 (sent - intended) <= 10 % of the p99 limit, or <= 5 ms with no limit,
//              AND no request sent later than the p99 limit itself (50 ms with no limit): the seconds
//              that hold one are late seconds, named; the probe's lateness is held to the same.
//              Latency is gated on done - sent (as k6 does), so a generator that sends late hides the
//              server's queueing from that figure; a late instrument is never a pass, and a p99
//              alone would let 1 % of a run (a 6-s stall of a 600-s run) be arbitrarily late
// Ladder rung (a quick step of the rate sweep): delivered rate, drops, reconciliation and the
// instrument (5 ms: a rung has no p99 limit, and a rate that was not offered on time was not tested);
// drift is noted beside it, not gated.
// Ceiling: failures, reconciliation, samples; no instrument check: a closed loop has no schedule (a
// worker's `intended` is the moment it sends, see lib/loadgen/generator.ts), and a slow worker can
// only lower a maximum, never inflate it.
//
// A check that could not be made (no p99 limit configured, no plan to judge delivery against, a third
// too small for a p99 or a drift interval that straddles the limit, no database counts given) is `null`, named in `unchecked`, and does not fail
// the verdict, nor blame the service; but it is never a PASS: without rows and quantity a verdict is
// UNRECONCILED, without a threshold, a plan or a drift figure NOT JUDGED (verdicts.ts).
import type { IngestAnalysis, LagStats } from './analysis';
import { DEFAULT_DRIFT_LIMIT, DRIFT_CONFIDENCE, MIN_THIRD_SAMPLES, judgeDrift, type Drift } from './drift';
import { secondRanges } from './second-ranges';
import type { PhaseAnalysis, PhaseName, Recovery } from './phases';
import { judgeWindows } from './window-gates';

export const MIN_SAMPLES = 1000;
/** A rung holds when it delivered at least (1 - this) of what it offered. */
export const DEFAULT_DELIVERED_TOLERANCE = 0.005;
/** The instrument is late when its schedule-lag p99 exceeds this share of the p99 limit... */
export const INSTRUMENT_LAG_SHARE = 0.1;
/** ...or, with no p99 limit (a rung, a configuration without one), this many ms. */
export const INSTRUMENT_LAG_NO_LIMIT_MS = 5;
/** ...or when any request left later than the p99 limit itself (with no limit, this many ms). */
export const INSTRUMENT_MAX_LAG_NO_LIMIT_MS = 50;

/**
 * The fewest requests a schedule lag's p99 is judged on: below 100, the p99 IS the maximum, and one
 * request a few ms late (a GC pause, a scheduler tick on a shared host) would fail the tail rule, which
 * is meant to allow 1 % of them. The probe sends 2-5 requests/s, so a 45-s repeat holds 90, and each of
 * N load nodes judges 1/N of them (node-gates.ts). Issue 34's A/A study: 4 of 34 healthy repeats made
 * invalid by ONE probe request 5-7.5 ms late against a 5-ms tail. Below this count the tail allows
 * exactly that one: the second-largest lag is held to the tail limit (the order statistic that, like a
 * p99 of 100, lets one request lie over it), and the maximum to the p99 limit. Leaving the tail unjudged
 * (before issue 47) passed a probe whose 90 requests were all sent 49.9 ms late against a 50-ms limit.
 */
export const MIN_LAG_TAIL_SAMPLES = 100;

export type CheckName = 'threshold' | 'dropped' | 'failed' | 'rows' | 'quantity' | 'samples' | 'drift' | 'delivered' | 'instrument' | 'recovery' | 'windows';

export interface GateCheck {
  name: CheckName;
  /** null: not checked (missing input), see GateVerdict.unchecked. */
  passed: boolean | null;
  detail: string;
  /** The failure in words when `name: detail` would not read well (instrument: "instrument late: ..."). */
  reason?: string;
  /** The seconds the check names (delivered: short seconds; instrument: late seconds), ascending. */
  seconds?: number[];
}

export interface GateVerdict {
  kind: 'sustained' | 'ladder' | 'ceiling';
  /** Every check that was made passed. */
  passed: boolean;
  /** Reconciliation (rows and quantity) was checked; only then may the figure be published. */
  reconciled: boolean;
  /** `name: detail` of each failed check, in check order. */
  reasons: string[];
  checks: GateCheck[];
  unchecked: CheckName[];
  /** Facts reported beside the verdict without gating it (drift on a ladder rung). */
  notes: string[];
}

/** What the database gained for this repeat's run tag. */
export interface Reconciliation {
  rows_written: number;
  quantity_gained: number;
}

export interface SustainedGateOptions {
  /** The configuration's p99 limit in ms; null/undefined: no threshold configured. */
  p99LimitMs?: number | null;
  driftLimit?: number;
  minSamples?: number;
  reconciliation?: Reconciliation | null;
  /** The probe's schedule lag (RunAnalysis.probe_lag): judged by the instrument check like ingest's. */
  probeLag?: LagStats | null;
  /** A spike's or a ramp's own p99 limit per phase (ms; phases.ts); a phase not named has p99LimitMs. */
  phaseP99LimitMs?: Partial<Record<PhaseName, number>>;
  /** A spike's recovery limit (s): its 10-s p99 back within x1.2 of before within this long after it. */
  recoveryLimitS?: number | null;
  /** A workload's per-window p99 limit (ms; window-gates.ts), when the analysis has windows; default: p99LimitMs. */
  windowP99LimitMs?: number | null;
  /** sustained.drift "noted": drift is reported in the notes, as on a ladder rung, and gates nothing. */
  driftNoted?: boolean;
}

export interface LadderGateOptions {
  deliveredTolerance?: number;
  driftLimit?: number;
  reconciliation?: Reconciliation | null;
  probeLag?: LagStats | null;
}

export function sustainedGate(a: IngestAnalysis, opts: SustainedGateOptions = {}): GateVerdict {
  const driftLimit = opts.driftLimit ?? DEFAULT_DRIFT_LIMIT;
  const minSamples = opts.minSamples ?? MIN_SAMPLES;
  const checks: GateCheck[] = [
    a.phases ? phaseThresholdCheck(a.phases, opts.p99LimitMs ?? null, opts.phaseP99LimitMs ?? {}) : thresholdCheck(a, opts.p99LimitMs ?? null),
    deliveredCheck(a),
    droppedCheck(a),
    failedCheck(a),
    ...reconciliationChecks(a, opts.reconciliation ?? null),
    {
      name: 'samples',
      passed: a.samples >= minSamples,
      detail: a.samples >= minSamples ? `${a.samples} samples` : `${a.samples} samples, fewer than the ${minSamples} required`,
    },
    ...(opts.driftNoted ? [] : [driftCheck(a, driftLimit)]),
    instrumentCheck(a, opts.p99LimitMs ?? null, opts.probeLag ?? null),
  ];
  // A spike's recovery: gated when the configuration sets a limit, else reported beside the verdict.
  const notes: string[] = opts.driftNoted ? [`${DRIFT_NOTED}: ${driftCheck(a, driftLimit).detail}`] : [];
  const rec = a.phases?.recovery;
  if (rec) {
    const c = recoveryCheck(rec, opts.recoveryLimitS ?? null);
    if (c.passed === null) notes.push(`recovery: ${c.detail}`);
    else checks.push(c);
  }
  // A long soak's windows (issue 35 item 4): every window's p99 under the limit, beside drift over the whole run.
  if (a.per_window) {
    const w = judgeWindows(a.per_window, opts.windowP99LimitMs ?? opts.p99LimitMs ?? null);
    if (w.passed === null) notes.push(`windows: ${w.detail}`);
    else checks.push({ name: 'windows', passed: w.passed, detail: w.detail });
  }
  return verdict('sustained', checks, notes);
}

/**
 * Latency limits per phase (a spike's before/during/after, a ramp's ramp/after): each phase's p99 at or
 * under its own limit (the configuration's p99LimitMs where the workload names none). One check, named
 * `threshold` like the steady repeat's, failing on every phase over its limit.
 */
export function phaseThresholdCheck(p: PhaseAnalysis, limitMs: number | null, perPhase: Partial<Record<PhaseName, number>>): GateCheck {
  const parts: string[] = [];
  const over: string[] = [];
  let judged = 0;
  for (const ph of p.phases) {
    const limit = perPhase[ph.name] ?? limitMs;
    const where = `${ph.name} (${ph.from_s}-${ph.to_s} s)`;
    if (limit === null) {
      parts.push(`${where} p99 ${ph.p99_us === null ? '—' : `${fmt(ph.p99_us / 1000)} ms`}`);
      continue;
    }
    judged++;
    if (ph.p99_us === null) {
      parts.push(`${where}: no samples to hold p99 <= ${fmt(limit)} ms`);
      over.push(ph.name);
      continue;
    }
    const ok = ph.p99_us / 1000 <= limit;
    parts.push(`${where} p99 ${fmt(ph.p99_us / 1000)} ms ${ok ? '<=' : '>'} ${fmt(limit)} ms`);
    if (!ok) over.push(ph.name);
  }
  if (judged === 0) return { name: 'threshold', passed: null, detail: `no p99 limit configured: ${parts.join('; ')}` };
  return { name: 'threshold', passed: over.length === 0, detail: `per phase: ${parts.join('; ')}`, ...(over.length ? { reason: `threshold: ${over.join(', ')} over the limit: ${parts.join('; ')}` } : {}) };
}

/** A spike's recovery (phases.ts) against the configuration's limit in seconds; passed null without a limit. */
export function recoveryCheck(r: Recovery, limitS: number | null): GateCheck {
  const level = r.before_p99_us === null ? '—' : `${fmt(r.before_p99_us / 1000)} ms`;
  const rec = r.recovered_after_s === null ? 'not recovered within the repeat' : `${r.recovered_after_s} s`;
  const what = `the ${r.window_s}-s p99 back within x${r.factor} of ${level} (before the spike) after ${rec}`;
  if (limitS === null) return { name: 'recovery', passed: null, detail: what };
  const ok = r.recovered_after_s !== null && r.recovered_after_s <= limitS;
  return { name: 'recovery', passed: ok, detail: `${what} ${ok ? '<=' : '>'} limit ${fmt(limitS)} s` };
}

/**
 * A closed-loop ceiling: a maximum, not a service level, so no threshold, drops or drift gate it
 * (drift is noted), and no schedule lag (a closed loop has no schedule). It is a valid ceiling only
 * with no failed request, enough samples, and its rows and quantity reconciled like a repeat's;
 * without database counts those two checks are unchecked and the gate is not `reconciled`.
 */
export function ceilingGate(a: IngestAnalysis, opts: { driftLimit?: number; minSamples?: number; reconciliation?: Reconciliation | null } = {}): GateVerdict {
  const minSamples = opts.minSamples ?? MIN_SAMPLES;
  const checks: GateCheck[] = [
    failedCheck(a),
    ...reconciliationChecks(a, opts.reconciliation ?? null),
    { name: 'samples', passed: a.samples >= minSamples, detail: `${a.samples} samples${a.samples >= minSamples ? '' : `, fewer than the ${minSamples} required`}` },
  ];
  const d = driftCheck(a, opts.driftLimit ?? DEFAULT_DRIFT_LIMIT);
  return verdict('ceiling', checks, [`drift (noted, not gated on a ceiling): ${d.detail}`]);
}

export function ladderGate(a: IngestAnalysis, opts: LadderGateOptions = {}): GateVerdict {
  const tol = opts.deliveredTolerance ?? DEFAULT_DELIVERED_TOLERANCE;
  const checks: GateCheck[] = [ladderDeliveredCheck(a, tol), droppedCheck(a), ...reconciliationChecks(a, opts.reconciliation ?? null), instrumentCheck(a, null, opts.probeLag ?? null)];
  const d = driftCheck(a, opts.driftLimit ?? DEFAULT_DRIFT_LIMIT);
  return verdict('ladder', checks, [`drift (noted, not gated on a rung): ${d.detail}`]);
}

/**
 * A rung's delivery: at least (1 - tol) of the requests its plan scheduled were answered 2xx (the rows
 * in the stream are not the offer: a stream missing a tenth of its rows offered less only on paper).
 */
function ladderDeliveredCheck(a: IngestAnalysis, tol: number): GateCheck {
  const d = a.delivery;
  if (!d || !a.plan) return notPlanned(a);
  const cut = cutShort(a);
  const ok = d.scheduled > 0 && d.delivered >= (1 - tol) * d.scheduled && !cut;
  const detail = `delivered ${d.delivered} of ${d.scheduled} scheduled requests (${fmt(a.delivered_rate_rps)} req/s, ${fmt(a.delivered_rate_evps)} ev/s of ${fmt(a.plan.rate ?? 0)} ev/s planned)${
    cut ? `; ${cut}` : ok ? '' : `, below the ${fmt((1 - tol) * 100)} % required`
  }`;
  return { name: 'delivered', passed: ok, detail, reason: ok ? undefined : `not delivered: ${detail}`, seconds: d.short_seconds };
}

/** The run was cut short (its plan says so): in words, or null. */
function cutShort(a: IngestAnalysis): string | null {
  const p = a.plan;
  if (!p?.cut_short) return null;
  return `cut short${p.cut_reason ? ` (${p.cut_reason})` : ''} before the plan's ${fmt(p.seconds)} s: never a pass`;
}

function notPlanned(a: IngestAnalysis): GateCheck {
  const detail = a.plan
    ? 'delivery not judged: a closed loop has no schedule to deliver'
    : 'delivery not judged: no plan (the stream carries none; for a foreign stream give --rate and --seconds)';
  return { name: 'delivered', passed: null, detail };
}

/**
 * Every request the plan scheduled was delivered (2xx), second by second. The protocol passes a
 * sustained repeat only with 0 dropped and 0 failed, so its offer is delivered in full: a second that
 * delivered fewer than its plan scheduled is short (every plan, the stream's own or the flags', is
 * exact), and any short second fails, named. A run cut short is never a pass.
 */
function deliveredCheck(a: IngestAnalysis): GateCheck {
  const d = a.delivery;
  if (!d || !a.plan) return notPlanned(a);
  const p = a.plan;
  const cut = cutShort(a);
  const ok = d.short_seconds.length === 0 && d.delivered >= d.scheduled - d.tolerance && !cut;
  const plan = `${fmt(p.rate ?? 0)} ev/s, batch ${p.batch}, ${fmt(p.seconds)} s${p.source === 'flags' ? ', from the flags' : ''}`;
  let detail = `delivered ${d.delivered} of ${d.scheduled} scheduled requests (${plan})`;
  if (ok) detail += ', every second';
  if (d.short_seconds.length) {
    detail += `; ${d.short_seconds.length} short second${d.short_seconds.length === 1 ? '' : 's'} at ${secondRanges(d.short_seconds)}`;
    if (d.empty_seconds.length) detail += ` (${d.empty_seconds.length} empty: ${secondRanges(d.empty_seconds)})`;
  }
  if (cut) detail += `; ${cut}`;
  return { name: 'delivered', passed: ok, detail, reason: ok ? undefined : `not delivered: ${detail}`, seconds: d.short_seconds };
}

export function verdict(kind: GateVerdict['kind'], checks: GateCheck[], notes: string[]): GateVerdict {
  const failed = checks.filter((c) => c.passed === false);
  const unchecked = checks.filter((c) => c.passed === null).map((c) => c.name);
  return {
    kind,
    passed: failed.length === 0,
    reconciled: !unchecked.includes('rows') && !unchecked.includes('quantity'),
    reasons: failed.map(checkReason),
    checks,
    unchecked,
    notes,
  };
}

/** A check in words: its own reason when it has one, else `name: detail`. */
export function checkReason(c: GateCheck): string {
  return c.reason ?? `${c.name}: ${c.detail}`;
}

/** The most schedule lag (p99, ms) a run may have with this p99 limit (null: none configured). */
export function instrumentLagLimitMs(p99LimitMs: number | null): number {
  return p99LimitMs === null ? INSTRUMENT_LAG_NO_LIMIT_MS : p99LimitMs * INSTRUMENT_LAG_SHARE;
}

/** The latest any one request may leave (ms): past its whole latency budget it was never tested against it. */
export function instrumentMaxLagMs(p99LimitMs: number | null): number {
  return p99LimitMs === null ? INSTRUMENT_MAX_LAG_NO_LIMIT_MS : p99LimitMs;
}

/** Seconds whose worst schedule lag is over `limitUs`: the late seconds. */
export function lateSeconds(bySecondMaxUs: Float64Array, limitUs: number): number[] {
  const out: number[] = [];
  for (let s = 0; s < bySecondMaxUs.length; s++) if (bySecondMaxUs[s] > limitUs) out.push(s);
  return out;
}

/**
 * Was the generator on time? The gated latency starts when a request was sent; a request sent late
 * waited on the load host, not the server, and that wait is in neither figure the threshold sees. So
 * the lag is judged on its tail (p99 <= 10 % of the limit), its maximum (no request later than the
 * limit itself) and the seconds that hold such a request (named): a stall of any share of the run
 * fails. The probe's requests are held to the same (below MIN_LAG_TAIL_SAMPLES requests, where a
 * p99 is the maximum, its tail is the second-largest lag: one request may lie over the tail limit, never
 * two). The corrected p99 (done - intended) is given
 * beside it: what a user arriving on schedule would have seen.
 */
export function instrumentCheck(a: IngestAnalysis, p99LimitMs: number | null, probeLag: LagStats | null): GateCheck {
  const limit = instrumentLagLimitMs(p99LimitMs);
  const maxLimit = instrumentMaxLagMs(p99LimitMs);
  const basis = {
    tail: p99LimitMs === null ? `no p99 limit: ${fmt(limit)} ms` : `${fmt(INSTRUMENT_LAG_SHARE * 100)} % of the p99 limit ${fmt(p99LimitMs)} ms`,
    max: p99LimitMs === null ? `no p99 limit: ${fmt(maxLimit)} ms` : 'the p99 limit',
  };
  if (a.schedule_lag_p99_us === null) return { name: 'instrument', passed: null, detail: 'no request was sent: no schedule lag to judge' };
  const ingest = lagJudgement('', { p99_us: a.schedule_lag_p99_us, max_us: a.schedule_lag_max_us, by_second_max_us: a.schedule_lag_by_second_max_us }, limit, maxLimit, basis);
  // The probe's few requests: below MIN_LAG_TAIL_SAMPLES its tail is its second-largest lag; its maximum always.
  const probe = probeLag && probeLag.p99_us !== null ? lagJudgement('probe ', probeLag, limit, maxLimit, basis, probeLag.samples) : null;
  const late = [...new Set([...ingest.late, ...(probe?.late ?? [])])].sort((x, y) => x - y);
  const ok = ingest.ok && (probe?.ok ?? true);
  const parts = [ingest.text, ...(probe ? [probe.text] : [])];
  if (ok) return { name: 'instrument', passed: true, detail: parts.join('; '), seconds: late };
  const corrected = a.co_p99_us === null ? '—' : `${fmt(a.co_p99_us / 1000)} ms`;
  const gated = a.p99_us === null ? '—' : `${fmt(a.p99_us / 1000)} ms`;
  const detail = `${parts.join('; ')}; the generator sent late, so the gated p99 ${gated} (done - sent) hides queueing: corrected p99 ${corrected} (done - intended)`;
  return { name: 'instrument', passed: false, detail, reason: `instrument late: ${detail}`, seconds: late };
}

/**
 * One scenario's lateness in words: `schedule lag p99 X ms <= Y ms (basis), max M ms <= N ms (basis),
 * late seconds ...`. With `samples` under MIN_LAG_TAIL_SAMPLES (the probe), the tail judged is the
 * second-largest lag: at most one request over the tail limit.
 */
function lagJudgement(
  who: string,
  l: Pick<LagStats, 'p99_us' | 'max_us' | 'by_second_max_us'> & Partial<Pick<LagStats, 'second_max_us'>>,
  limitMs: number,
  maxLimitMs: number,
  basis: { tail: string; max: string },
  samples?: number,
): { ok: boolean; late: number[]; text: string } {
  const p99 = (l.p99_us as number) / 1000;
  const max = (l.max_us ?? 0) / 1000;
  const late = lateSeconds(l.by_second_max_us, maxLimitMs * 1000);
  const few = samples !== undefined && samples < MIN_LAG_TAIL_SAMPLES;
  // Few requests: the second-largest (none with one request: that one is the maximum, judged below).
  const tailMs = few ? (l.second_max_us === null || l.second_max_us === undefined ? null : l.second_max_us / 1000) : p99;
  const tailOk = tailMs === null || tailMs <= limitMs;
  const maxOk = max <= maxLimitMs;
  const judged = tailMs === null ? 'no second request to judge' : `second-largest ${fmt(tailMs)} ms ${tailOk ? '<=' : '>'} ${fmt(limitMs)} ms (${basis.tail})`;
  const tail = few
    ? `p99 ${fmt(p99)} ms (${samples} requests, fewer than the ${MIN_LAG_TAIL_SAMPLES} whose p99 is not their maximum: at most one may be over the tail limit, ${judged})`
    : `p99 ${fmt(p99)} ms ${tailOk ? '<=' : '>'} ${fmt(limitMs)} ms (${basis.tail})`;
  const text = `${who}schedule lag ${tail}, max ${fmt(max)} ms ${maxOk ? '<=' : '>'} ${fmt(maxLimitMs)} ms (${basis.max})${
    late.length ? `, late seconds ${secondRanges(late)}` : ''
  }`;
  return { ok: tailOk && maxOk, late, text };
}

function thresholdCheck(a: IngestAnalysis, limitMs: number | null): GateCheck {
  // (A phased repeat is judged by phaseThresholdCheck instead.)
  if (limitMs === null) return { name: 'threshold', passed: null, detail: 'no p99 limit configured' };
  if (a.p99_us === null) return { name: 'threshold', passed: false, detail: `no latency samples to hold p99 <= ${fmt(limitMs)} ms` };
  const p99 = a.p99_us / 1000;
  return { name: 'threshold', passed: p99 <= limitMs, detail: `p99 ${fmt(p99)} ms ${p99 <= limitMs ? '<=' : '>'} limit ${fmt(limitMs)} ms` };
}

export function droppedCheck(a: IngestAnalysis): GateCheck {
  return {
    name: 'dropped',
    passed: a.dropped === 0,
    detail: a.dropped === 0 ? '0 dropped' : `${a.dropped} of ${a.offered} requests dropped (no free slot when their time came)`,
  };
}

function failedCheck(a: IngestAnalysis): GateCheck {
  return { name: 'failed', passed: a.failed === 0, detail: a.failed === 0 ? '0 failed' : `${a.failed} of ${a.sent} sent requests failed (no 2xx)` };
}

function reconciliationChecks(a: IngestAnalysis, r: Reconciliation | null): GateCheck[] {
  if (r === null) {
    return [
      { name: 'rows', passed: null, detail: `not reconciled: ${a.events_claimed} events claimed, rows written unknown` },
      { name: 'quantity', passed: null, detail: `not reconciled: ${a.quantity_claimed} quantity claimed, quantity gained unknown` },
    ];
  }
  const rows = diffCheck('rows', 'rows written', r.rows_written, 'events claimed', a.events_claimed);
  // With client timestamps (issue 35) a short database is told beside the claims it should hold stamped
  // late or out of order: a service that loses late events is short by exactly its late claims.
  const t = a.timestamps;
  if (t && rows.passed === false && r.rows_written < a.events_claimed) rows.detail += `; of the events claimed, ${t.late_claimed} were stamped late and ${t.out_of_order_claimed} out of order`;
  return [
    rows,
    diffCheck('quantity', 'quantity gained', r.quantity_gained, 'quantity sent (acknowledged)', a.quantity_claimed),
  ];
}

function diffCheck(name: CheckName, gotLabel: string, got: number, wantLabel: string, want: number): GateCheck {
  if (got === want) return { name, passed: true, detail: `${gotLabel} ${got} == ${wantLabel} ${want}` };
  const d = want - got;
  return { name, passed: false, detail: `${gotLabel} ${got} != ${wantLabel} ${want} (${d > 0 ? `missing ${d}` : `${-d} extra`})` };
}

/** How a note of drift that was not gated begins (sustained.drift "noted"; the page and bench:gates read it). */
export const DRIFT_NOTED = 'drift (noted, not gated: sustained.drift "noted")';

function driftCheck(a: IngestAnalysis, limit: number): GateCheck {
  const d = a.drift;
  const j = judgeDrift(d, limit);
  if (j.state === 'unjudgeable') {
    const why =
      d.third_s === 0
        ? `the run is ${a.duration_s} s, too short for thirds`
        : d.first_samples < MIN_THIRD_SAMPLES || d.last_samples < MIN_THIRD_SAMPLES
          ? `a third has too few samples for a p99 (first ${d.first_samples}, last ${d.last_samples}; ${MIN_THIRD_SAMPLES} needed)`
          : 'the first third\'s p99 is 0';
    return { name: 'drift', passed: null, detail: `not judgeable: ${why}` };
  }
  // The interval decides (drift.ts, judgeDrift): its printed bounds are the compared ones, and the point
  // ratio lies inside them, so a pass or a failure always agrees with the plain rule (ratio < limit).
  const figures = `x${fmt(d.ratio as number)} (${driftInterval(d)}; last-third p99 ${fmt((d.last_p99_us as number) / 1000)} ms / first-third p99 ${fmt((d.first_p99_us as number) / 1000)} ms)`;
  if (j.state === 'undecided') {
    const need = j.samplesNeeded;
    const perSecond = Math.min(d.first_samples, d.last_samples) / d.third_s;
    const would =
      need === null
        ? 'no number of samples decides a ratio at the limit itself'
        : `thirds of about ${need} samples would decide it (a repeat of about ${Math.ceil(need / perSecond) * 3} s at this rate)`;
    return {
      name: 'drift',
      passed: null,
      detail: `not judgeable: ${figures} straddles the limit x${limit}: thirds of ${d.first_samples} and ${d.last_samples} samples cannot tell; ${would}`,
    };
  }
  const ok = j.state === 'pass';
  return { name: 'drift', passed: ok, detail: `${figures} ${ok ? '<' : '>='} limit x${limit}` };
}

/** "95 % interval x0.9-x1.3" (or "x1.2-unbounded"); the plain ratio for an analysis recorded without one. */
export function driftInterval(d: Pick<Drift, 'ratio_low' | 'ratio_high'>): string {
  if (d.ratio_low === undefined || d.ratio_low === null) return 'no interval recorded';
  return `${fmt(DRIFT_CONFIDENCE * 100)} % interval x${fmt(d.ratio_low)}-${d.ratio_high === null ? 'unbounded' : `x${fmt(d.ratio_high)}`}`;
}

/** Compact number for messages: at most 3 decimals, no trailing zeros. */
export function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : String(Number(x.toFixed(3)));
}

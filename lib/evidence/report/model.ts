// The report's model: every figure of the page, derived from the evidence alone (pure: Evidence in,
// ReportModel out; the renderers only format it).
//
// Each repeat's statistics and verdict are RE-DERIVED from its raw sample stream with lib/protocol
// (analyzeSamples, the gates, the probe verdict, runReport), using the spec's limits and the
// database's own counts (reconcile.json). The verdict.json the campaign wrote is only compared with
// the re-derivation: if they disagree, the repeat is not published.
//
// Repeat status:
//   passed / failed   re-derived verdict; failed repeats list every failed gate
//   not-judged        re-derived verdict NOT JUDGED: every check that ran passed, but one that decides
//                     a pass could not be made (the drift's interval straddles its limit): neither a
//                     pass nor a failure; the configuration reads NOT JUDGED (drift) when no repeat failed
//   not-published     cannot be reconciled: no or malformed reconcile.json, rows or quantity in the
//                     database differ from what the client had acknowledged, the recorded verdict
//                     differs from the re-derived one, or the sample stream is missing/unreadable.
//                     Counted in M (it ran), never in N nor in any median.
//   invalid           failed on the instrument's account (the generator late, or the host's CPU
//                     steal over its bound), as result.json's repeat records and the re-derived
//                     verdict confirms (it failed): listed with why, never counted; its re-run is
//                     the repeat's attempt that counts (lib/protocol/repeat-validity.ts)
//   interrupted       cut short or replaced by a later attempt: listed, never counted
//   not-run           planned but never started (the campaign stopped first): counted in M
// A configuration is published when at least one repeat finished and none is not-published.
// Across repeats, lib/protocol/reporting's summarizeRepeats applies the rules (median over passing
// repeats, min–max range, N/M).
import { dbCalibrationState } from './db-calibration-state';
import { EXISTING_PAGE_NOTE } from '../../protocol/existing-spec';
import { AFTER_LOAD } from '../../protocol/after-load';
import { summarizeCloud, type CloudSummary } from '../../protocol/cloud-evidence';
import { ATTRIBUTION_RULES } from '../../protocol/tail-attribution';
import { requestTablesOf, tailsOf } from './tails';
import { notCounted, REPORT_FORMAT, type CeilingModel, type Conditions, type ConfigurationModel, type DenominatorModel, type ReadFigures, type RepeatModel, type RepeatSeries, type ReportModel, type StopsModel } from './model-types';
import { DEFAULT_DRIFT_LIMIT } from '../../protocol/drift';
import { INSTRUMENT_LAG_NO_LIMIT_MS, INSTRUMENT_LAG_SHARE, MIN_SAMPLES, type Reconciliation } from '../../protocol/gates';
import { evaluateRun } from '../../protocol/evaluate';
import { median } from '../../protocol/percentile';
import { summarizeRepeats, type FigureSummary, type RepeatFigures } from '../../protocol/reporting';
import { type RunReport } from '../../protocol/run-report';
import { PROBE_SCENARIOS } from '../../protocol/sample-row';
import { scheduledPerSecond } from '../../protocol/stream-plan';
import { serviceBuild, serviceSettingsList } from '../../protocol/service-spec';
import type { CampaignSpec } from '../../protocol/spec';
import type { WorkloadSpec } from '../../protocol/workload-spec';
import { DEFAULT_PROBE_P99_MS } from '../../protocol/verdicts';
import { FREEZE_SLOW_FRACTION, FREEZE_SLOW_US, FREEZE_WORST_US, WINDOW_FACTOR, WINDOW_MIN_BUCKETS } from '../../protocol/detectors';
import { dbCpu, ownWorkOver, summarizeDb, summarizeHost, topWaits, type Spread } from './db-summary';
import { walFromBracket, type WalBasis, type WalBytesMeasure } from './wal-figure';
import type { AttemptEvidence, Evidence } from './load';
import { notShown } from './not-shown';
import { summarizeAppNode } from './app-node';
import { measuredConfigurations, measuringSeries } from '../../protocol/variants';
import { buildVariants } from './variants';
import { buildWarmups, warmupCondition, warmupMethod } from './warmups';
import { buildLoadNodes } from './load-nodes';
import { buildLadder, buildVariantLadders } from './ladder';
import { workloadModel } from './workload';
export { REPORT_FORMAT };

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const fmtN = (x: number) => String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

export function buildReportModel(ev: Evidence): ReportModel {
  const spec = ev.spec;
  const configs = plannedConfigurations(spec);
  const configurations: ConfigurationModel[] = [];
  const names = new Set(configs.map((c) => c.name));
  // The repeats the campaign judged invalid (the instrument's failures), by folder.
  const invalid = new Map((ev.result?.repeats ?? []).filter((r) => r.invalid).map((r) => [r.dir, r.invalid as string]));
  for (const c of configs) configurations.push(buildConfiguration(c, ev.attempts.filter((a) => a.config === c.name), spec, false, invalid));
  // Folders for configurations the spec does not plan: shown, never published.
  const extra = [...new Set(ev.attempts.map((a) => a.config))].filter((n) => !names.has(n)).sort();
  for (const name of extra) {
    const cfg = { name, eventsPerSecond: 0, batch: 0, p99LimitMs: null, planned: 0, kind: (spec.ladder ? 'rung' : 'sustained') as 'sustained' | 'rung' };
    configurations.push(buildConfiguration(cfg, ev.attempts.filter((a) => a.config === name), spec, true));
  }

  // A ladder under variants: each variant's ladder, built once for its own section and the Variants section's knees.
  const variantLadders = spec.ladder && spec.variants ? buildVariantLadders(spec, configurations) : undefined;
  const ceiling = buildCeiling(ev);
  const denominator = buildDenominator(ev, ceiling);
  const steps = ev.steps.map((s) => ({
    step: s.step,
    status: s.status,
    started_at: s.startedAt,
    ended_at: s.endedAt,
    seconds: Math.max(0, Math.round((Date.parse(s.endedAt) - Date.parse(s.startedAt)) / 1000)),
    summary: s.summary,
  }));
  const dates = evidenceDates(ev);
  const unpublished: ReportModel['unpublished'] = [];
  for (const c of configurations) {
    if (!c.published) unpublished.push({ what: `configuration ${c.name}`, why: c.why_not });
    for (const r of c.repeats) if (r.status === 'not-published') unpublished.push({ what: `repeat ${r.id}`, why: r.reasons });
  }
  const invalidCeiling = ceiling ? ceilingInvalidity(ceiling) : null;
  if (invalidCeiling) unpublished.push({ what: 'closed-loop ceiling', why: [invalidCeiling] });
  for (const l of denominator?.legs ?? []) if (!l.rows_verified) unpublished.push({ what: `denominator leg ${l.leg}`, why: ['its rows were not verified in the intended partition'] });

  const warnings = [...ev.log.filter((l) => l.kind === 'warning').map((l) => `${l.at} ${l.text}`), ...ev.problems];
  for (const c of configurations) for (const r of c.repeats) for (const p of r.problems) warnings.push(p);
  for (const a of ceiling?.attempts ?? []) for (const p of a.problems) warnings.push(p);

  const warmups = buildWarmups(ev.warmups);
  for (const w of warmups) for (const p of w.problems) warnings.push(p);
  const loadNodes = buildLoadNodes(ev.attempts);
  const banners = [
    !spec.calibrate ? 'UNCALIBRATED (calibrate: false: no verdict on this page is a held result)' : null,
    ev.result?.status === 'dirty' ? `DIRTY (the clean-check after teardown found leftovers: ${ev.result.cleanAfter ?? 'see the steps'})` : null,
  ].filter((b): b is string => b !== null);
  return {
    format: REPORT_FORMAT,
    campaign: {
      id: ev.campaignId,
      name: spec.name,
      target: spec.target,
      banner: banners.length ? banners.join('; ') : null,
      status: ev.result?.status ?? null,
      error: ev.result?.error ?? null,
      rig: ev.result?.rig ?? null,
      clean_after: ev.result?.cleanAfter ?? null,
      ...(spec.target === 'existing' ? { deployment: EXISTING_PAGE_NOTE } : {}),
    },
    evidence: {
      manifest_sha256: ev.manifestSha256,
      files: ev.manifest.files.length,
      bytes: ev.manifest.files.reduce((s, e) => s + e.size, 0),
      unlisted: ev.unlisted,
    },
    dates,
    headline: headline(configurations, ceiling, denominator, ev),
    conditions: { ...buildConditions(ev), warmup: warmupCondition(spec, warmups), ...settingsReadBack([...configurations.flatMap((c) => c.repeats), ...(ceiling?.attempts ?? [])]) },
    method: [...method(spec, configurations), warmupMethod(spec)],
    configurations,
    ...(spec.ladder && !spec.variants ? { ladder: buildLadder(configurations) } : {}),
    ...(variantLadders ? { variant_ladders: variantLadders } : {}),
    ...(spec.variants ? { variants: buildVariants(spec, configurations, ev.variantChanges, variantLadders) } : {}),
    warmups,
    ...(loadNodes.length ? { load_nodes: loadNodes } : {}),
    ceiling,
    denominator,
    steps,
    unpublished,
    warnings,
    not_shown: notShown(spec, ev.rig),
    db_calibration: dbCalibrationState(ev.dbCalibration, spec, steps),
    ...(ev.historyAlert ? { history: ev.historyAlert } : {}),
  };
}

interface PlannedConfig {
  name: string;
  eventsPerSecond: number;
  batch: number;
  p99LimitMs: number | null;
  planned: number;
  kind: 'sustained' | 'rung';
  /** Its workload (issue 35): a spike's or a ramp's limits judge its repeats here as the repeat activity did. */
  workload?: WorkloadSpec;
}

/** The configurations the spec plans, in spec order (ladder rates as `rung-<rate>`, as the workflow names them). */
export function plannedConfigurations(spec: CampaignSpec): PlannedConfig[] {
  const series = measuringSeries(spec);
  if (!series) return [];
  // With variants: each configuration (rung) once per variant, named "<configuration>.<variant>" (lib/protocol/variants.ts).
  // A rung has no p99 limit: it passes on the ingest gate alone.
  return measuredConfigurations(spec).map(({ base: _base, variant: _variant, ...c }) => ({
    ...c,
    p99LimitMs: series.kind === 'rung' ? null : c.p99LimitMs,
    planned: series.repeats,
    kind: series.kind,
  }));
}

function reconciliationOf(a: AttemptEvidence): Reconciliation | null {
  return a.reconcile ? { rows_written: a.reconcile.rows_written, quantity_gained: a.reconcile.quantity_gained } : null;
}

function seriesOf(report: RunReport, a: AttemptEvidence): RepeatSeries | null {
  const ps = a.analysis?.ingest.per_second;
  if (!ps) return null;
  const ms = (us: number | null) => (us === null ? null : r3(us / 1000));
  return {
    t_s: ps.map((b) => b.start_s),
    p50_ms: ps.map((b) => ms(b.p50_us)),
    p99_ms: ps.map((b) => ms(b.p99_us)),
    co_p99_ms: (a.analysis?.ingest.per_second_corrected ?? []).map((b) => ms(b.p99_us)),
    offered_rps: ps.map((b) => b.offered),
    planned_rps: a.analysis?.ingest.plan && a.analysis.ingest.delivery ? [...scheduledPerSecond(a.analysis.ingest.plan)] : null,
    delivered_rps: ps.map((b) => b.ok),
    dropped: ps.map((b) => b.dropped),
    freeze_seconds: report.freeze_seconds,
    windows: report.windows.map(([s, e]) => [s, e + 10] as [number, number]),
  };
}

/** How many repeats' WAL bytes per event each measure gave, in first-seen order (wal-figure.ts). */
function walMeasures(ms: Array<WalBytesMeasure | undefined>): Array<{ measure: WalBytesMeasure; repeats: number }> {
  const out: Array<{ measure: WalBytesMeasure; repeats: number }> = [];
  for (const m of ms) {
    if (m === undefined) continue;
    const seen = out.find((x) => x.measure === m);
    if (seen) seen.repeats++;
    else out.push({ measure: m, repeats: 1 });
  }
  return out;
}

/** One attempt, re-derived and judged. */
export function deriveRepeat(a: AttemptEvidence, cfg: { p99LimitMs: number | null; workload?: WorkloadSpec } | null, spec: CampaignSpec): RepeatModel {
  // WAL per event is divided by the rows the database holds for the run (else the events acknowledged).
  const events = a.reconcile?.rows_written ?? a.analysis?.ingest.events_claimed ?? null;
  const db = a.db && a.db.length ? summarizeDb(a.db, a.load?.started_at ?? null, events) : null;
  // The readings that bracket the load, where the repeat has them; else the sampler rows, marked.
  let walBasis: WalBasis | null = db?.wal ? 'sampler rows' : null;
  const problems = [...a.problems];
  if (db && a.walBracket) {
    const fromBracket = walFromBracket(a.walBracket, events);
    if (fromBracket.wal) {
      db.wal = fromBracket.wal;
      db.wal_problem = null;
      walBasis = 'load bracket';
    } else if (db.wal) problems.push(`wal-bracket.json: ${fromBracket.problem}; WAL per event from the sampler rows instead`);
  }
  const base = {
    id: `${a.config} r${a.repeat}-a${a.attempt}`,
    config: a.config,
    kind: a.kind,
    repeat: a.repeat,
    attempt: a.attempt,
    dir: a.dir,
    files: a.files,
    started_at: a.load?.started_at ?? null,
    problems,
    wal_basis: walBasis,
    ...(a.quiet !== undefined ? { quiet: a.quiet } : {}),
    ...cloudOf(a),
    ...(a.appNodeHost ? { app_node: a.load?.ended_at ? summarizeAppNode(a.appNodeHost, a.load.started_at, a.load.ended_at) : null } : {}),
  };
  const host = a.host && a.host.length ? summarizeHost(a.host) : null;
  if (a.interrupted !== null) {
    return { ...base, status: 'interrupted', reasons: [a.interrupted], gate_reasons: [], report: null, checks: [], db, host, series: null };
  }
  if (!a.analysis) {
    return { ...base, status: 'not-published', reasons: [a.samplesProblem ?? 'no sample stream'], gate_reasons: [], report: null, checks: [], db, host, series: null };
  }
  const recon = reconciliationOf(a);
  const driftLimit = spec.sustained?.driftLimit ?? DEFAULT_DRIFT_LIMIT;
  // The same judgement the repeat activity made, through the same function (lib/protocol/evaluate.ts):
  // sustained repeats the full gate; ladder rungs the ingest gate; the ceiling its own.
  const { verdict, report } = evaluateRun(a.analysis, {
    kind: a.kind === 'rung' ? 'ladder' : a.kind,
    p99LimitMs: a.kind === 'sustained' ? (cfg?.p99LimitMs ?? null) : null,
    driftLimit,
    ...(a.kind === 'sustained' && spec.sustained?.drift === 'noted' ? { driftNoted: true } : {}),
    reconciliation: recon,
    probeP99Ms: spec.sustained?.probe.p99BudgetMs ?? DEFAULT_PROBE_P99_MS,
    // A workload's per-phase and recovery limits, as activities/repeat.ts gave them (absent: as before).
    ...(a.kind === 'sustained' && cfg?.workload ? { phaseP99LimitMs: cfg.workload.phaseP99LimitMs, recoveryLimitS: cfg.workload.recoveryLimitSeconds ?? null, windowP99LimitMs: cfg.workload.windowP99LimitMs ?? null } : {}),
  });
  const gate = verdict.ingest;

  const why: string[] = [];
  if (!a.reconcile) {
    const bad = a.problems.find((p) => p.startsWith(`${a.dir}/reconcile.json`));
    why.push(bad ? `not reconciled: ${bad}` : 'not reconciled: no reconcile.json (the rows in the database were never counted)');
  } else {
    const tagged = a.load?.run_tag;
    if (tagged && a.reconcile.run_tag !== tagged) why.push(`not reconciled: reconcile.json counts run tag '${a.reconcile.run_tag}', the load ran '${tagged}'`);
    for (const c of gate.checks) if ((c.name === 'rows' || c.name === 'quantity') && c.passed === false) why.push(`not reconciled: ${c.detail}`);
  }
  if (!a.verdict) {
    const bad = a.problems.find((p) => p.startsWith(`${a.dir}/verdict.json`));
    if (bad) why.push(`the recorded verdict cannot be read: ${bad}`);
  } else {
    const rec = a.verdict;
    const word = (p: boolean) => (p ? 'PASS' : 'FAIL');
    // A load that ran to its end and then failed (reconcile, a sampler, the analysis) is recorded FAIL
    // with that reason (lib/protocol/after-load.ts): the reason is shown, not a disagreement.
    const afterLoad = rec.verdict.passed ? [] : (rec.verdict.reasons ?? []).filter((r) => r.startsWith(AFTER_LOAD));
    why.push(...afterLoad);
    if (rec.verdict.passed !== verdict.passed && afterLoad.length === 0) {
      why.push(`verdict.json records ${word(rec.verdict.passed)}, but the samples give ${word(verdict.passed)}${verdict.reasons.length ? ` (${verdict.reasons.join('; ')})` : ''}`);
    }
    for (const k of ['p50_ms', 'p99_ms'] as const) {
      const x = rec[k];
      const y = report[k];
      if (x !== y && !(typeof x === 'number' && typeof y === 'number' && Math.abs(x - y) <= 0.0005)) {
        why.push(`verdict.json records ${k.replace('_ms', '')} ${x ?? '—'} ms, the samples give ${y ?? '—'} ms`);
      }
    }
  }
  const gateReasons = verdict.reasons;
  const tails = tailsOf(a, report, requestTablesOf(spec, a.config), spec.target);
  const withTails = tails ? { tails } : {};
  // A shaped repeat's phases and recovery beside their limits (absent without arrivals: today's page).
  const wl = a.kind === 'sustained' ? workloadModel(report, cfg?.p99LimitMs ?? null, cfg?.workload, a.load?.generator?.memory) : null;
  if (wl) Object.assign(withTails, { workload: wl });
  if (why.length) {
    return { ...base, status: 'not-published', reasons: why, gate_reasons: gateReasons.filter((r) => !r.startsWith('rows:') && !r.startsWith('quantity:')), report, checks: gate.checks, db, host, series: seriesOf(report, a), ...withTails };
  }
  return { ...base, status: verdict.passed ? 'passed' : verdict.state === 'NOT JUDGED' ? 'not-judged' : 'failed', reasons: gateReasons, gate_reasons: [], report, checks: gate.checks, db, host, series: seriesOf(report, a), ...withTails };
}

/** `{ cloud }` for a repeat with cloud files, `{}` otherwise (so a local repeat's model is unchanged). */
function cloudOf(a: AttemptEvidence): { cloud?: CloudSummary } {
  const cloud = a.cloud ? summarizeCloud(a.cloud) : null;
  return cloud ? { cloud } : {};
}

/** Why a configuration is not held, in the summary's words: NOT JUDGED (drift) when no repeat failed. */
function notHeldWhy(c: ConfigurationModel): string {
  const noVerdict = c.repeats.filter((r) => r.status === 'not-judged');
  if (noVerdict.length && !c.repeats.some((r) => r.status === 'failed')) {
    return ` (NOT JUDGED (drift): ${noVerdict.map((r) => `r${r.repeat}`).join(', ')} passed every other gate, but the drift interval straddles the limit; not the service's failure)`;
  }
  return ' (not held: not every repeat passed)';
}

function figuresOf(r: RepeatModel): Record<string, number | null> {
  const rep = r.report;
  if (!rep) return {};
  const f: Record<string, number | null> = {
    delivered_evps: rep.delivered_rate,
    delivered_rps: rep.delivered_rate_rps,
    p50_ms: rep.p50_ms,
    p99_ms: rep.p99_ms,
    worst_10s_p99_ms: rep.worst_10s_p99_ms,
    freeze_seconds: rep.freeze_seconds.length,
    windows: rep.windows.length,
    drift: rep.drift,
  };
  for (const [ep, e] of Object.entries(rep.probe.endpoints)) {
    f[`read ${ep} p50_ms`] = e.p50_ms;
    f[`read ${ep} p99_ms`] = e.p99_ms;
  }
  return f;
}

function buildConfiguration(c: PlannedConfig, attempts: AttemptEvidence[], spec: CampaignSpec, unplanned: boolean, invalid: ReadonlyMap<string, string> = new Map()): ConfigurationModel {
  const repeats: RepeatModel[] = attempts
    .slice()
    .sort((x, y) => x.repeat - y.repeat || x.attempt - y.attempt)
    .map((a) => deriveRepeat(a, c, spec))
    .map((r) => (r.status === 'failed' && invalid.has(r.dir) ? { ...r, status: 'invalid' as const, reasons: [`invalid (${invalid.get(r.dir)}): not counted`, ...r.reasons.map((g) => `also failed: ${g}`)] } : r));
  // Planned repeats with no attempt at all.
  for (let k = 1; k <= c.planned; k++) {
    if (repeats.some((r) => r.repeat === k)) continue;
    repeats.push({
      id: `${c.name} r${k}`,
      config: c.name,
      kind: c.kind,
      repeat: k,
      attempt: 0,
      dir: '',
      status: 'not-run',
      reasons: ['never started: the campaign stopped before this repeat'],
      gate_reasons: [],
      report: null,
      checks: [],
      db: null,
      host: null,
      files: [],
      started_at: null,
      series: null,
      problems: [],
    });
  }
  repeats.sort((x, y) => x.repeat - y.repeat || x.attempt - y.attempt);
  // A repeat whose every attempt was interrupted is one that never ran to the end: counted in M.
  for (let k = 1; k <= c.planned; k++) {
    const rs = repeats.filter((r) => r.repeat === k);
    if (rs.length && rs.every((r) => r.status === 'interrupted')) {
      repeats.push({ ...rs[rs.length - 1], id: `${c.name} r${k}`, attempt: 0, dir: '', status: 'not-run', reasons: ['every attempt was interrupted'], files: [], series: null, db: null, host: null, problems: [] });
    } else if (rs.some((r) => r.status === 'invalid') && rs.every((r) => r.status === 'invalid' || r.status === 'interrupted')) {
      // Invalid, and invalid again (or no re-run left): this repeat has no verdict, NOT JUDGED (instrument).
      repeats.push({ ...rs[rs.length - 1], id: `${c.name} r${k}`, attempt: 0, dir: '', status: 'not-run', reasons: ['NOT JUDGED (instrument): every attempt was invalid'], gate_reasons: [], report: null, checks: [], files: [], series: null, db: null, host: null, problems: [] });
    }
  }
  repeats.sort((x, y) => x.repeat - y.repeat || (x.attempt || 1e9) - (y.attempt || 1e9));

  const figures: RepeatFigures[] = repeats.map((r) => ({
    passed: r.status === 'passed',
    interrupted: notCounted(r.status),
    figures: r.status === 'not-run' ? {} : figuresOf(r),
  }));
  const summary = summarizeRepeats(figures);
  const notPublished = repeats.filter((r) => r.status === 'not-published');
  const finished = repeats.filter((r) => r.status === 'passed' || r.status === 'failed' || r.status === 'not-judged' || r.status === 'not-published' || r.status === 'invalid');
  const whyNot: string[] = [];
  if (unplanned) whyNot.push(`not in the spec: found in the evidence only (${repeats.length} attempt folder(s))`);
  if (finished.length === 0) whyNot.push('no repeat ran to its end');
  for (const r of repeats) if (r.status === 'not-run' && r.reasons[0]?.startsWith('NOT JUDGED (instrument)')) whyNot.push(`r${r.repeat}: ${r.reasons[0]}`);
  for (const r of notPublished) whyNot.push(`r${r.repeat}: ${r.reasons.join('; ')}`);

  const passing = repeats.filter((r) => r.status === 'passed');
  const reads: ReadFigures[] = [];
  for (const ep of PROBE_SCENARIOS) {
    const key50 = `read ${ep} p50_ms`;
    if (!(key50 in summary.figures)) continue;
    reads.push({ endpoint: ep, p50_ms: summary.figures[key50], p99_ms: summary.figures[`read ${ep} p99_ms`] ?? null, repeats: passing.filter((r) => r.report?.probe.endpoints[ep]).length });
  }
  const sumOver = (k: 'freeze_seconds' | 'windows') => (passing.length ? passing.reduce((s, r) => s + (r.report ? r.report[k].length : 0), 0) : null);
  return {
    name: c.name,
    kind: c.kind,
    events_per_second: c.eventsPerSecond,
    batch: c.batch,
    requests_per_second: c.batch > 0 ? r3(c.eventsPerSecond / c.batch) : 0,
    p99_limit_ms: c.p99LimitMs,
    planned: c.planned,
    unplanned,
    published: whyNot.length === 0,
    why_not: whyNot,
    summary,
    repeats,
    reads,
    stops: buildStops(passing.length ? passing : repeats.filter((r) => r.status === 'failed'), passing.length ? 'passing' : 'failed'),
    freeze_seconds_total: sumOver('freeze_seconds'),
    windows_total: sumOver('windows'),
  };
}

/** Min/median/max of per-repeat values (diagnostics: the same median as every other summary). */
function figure(values: Array<number | null | undefined>): FigureSummary | null {
  const v = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return v.length ? { median: r3(median(v)), min: Math.min(...v), max: Math.max(...v), n: v.length } : null;
}

function buildStops(basis: RepeatModel[], kind: 'passing' | 'failed'): StopsModel {
  const withDb = basis.filter((r) => r.db);
  const top = topWaits(withDb.map((r) => r.db!));
  const dbCpus = basis.map((r) => dbCpu(r.db)).filter((x): x is Spread => x !== null);
  const hostCpus = basis.map((r) => r.host?.cpu_busy_pct).filter((x): x is Spread => !!x);
  const hostIo = basis.map((r) => r.host?.iowait_pct).filter((x): x is Spread => !!x);
  const withAppNode = basis.filter((r) => r.app_node !== undefined);
  const appNodeCpus = withAppNode.map((r) => r.app_node?.cpu_busy_pct).filter((x): x is Spread => !!x);
  const spreadOf = (xs: Spread[]): Spread | null => (xs.length ? { median: r3(median(xs.map((x) => x.median))), max: Math.max(...xs.map((x) => x.max)) } : null);
  return {
    basis: basis.length ? kind : 'none',
    repeats: basis.length,
    db_sampled: withDb.length,
    host_sampled: basis.filter((r) => r.host).length,
    top_waits: top,
    request_samples: withDb.reduce((n, r) => n + r.db!.backend_samples, 0),
    snapshots: withDb.reduce((n, r) => n + r.db!.rows, 0),
    own_work: ownWorkOver(withDb.map((r) => r.db!)),
    wal_bytes_per_event: figure(withDb.map((r) => r.db!.wal?.bytes_per_event)),
    wal_records_per_event: figure(withDb.map((r) => r.db!.wal?.records_per_event)),
    wal_fpi_per_event: figure(withDb.map((r) => r.db!.wal?.fpi_per_event)),
    wal_mb_per_s: figure(withDb.map((r) => (r.db!.wal?.bytes_per_s == null ? null : r3(r.db!.wal.bytes_per_s / 1e6)))),
    wal_from_sampler_rows: withDb.filter((r) => r.db!.wal && r.wal_basis !== 'load bracket').length,
    wal_bytes_measures: walMeasures(withDb.map((r) => (r.db!.wal?.bytes_per_event == null ? undefined : r.db!.wal.bytes_measure))),
    db_cpu_pct: spreadOf(dbCpus),
    host_cpu_pct: spreadOf(hostCpus),
    host_iowait_pct: spreadOf(hostIo),
    ...(withAppNode.length ? { app_node_cpu_pct: spreadOf(appNodeCpus) } : {}),
  };
}

function buildCeiling(ev: Evidence): CeilingModel | null {
  const c = ev.spec.ceiling;
  if (!c) return null;
  const attempts = ev.ceiling.map((a) => deriveRepeat(a, null, ev.spec));
  const last = attempts[attempts.length - 1];
  const base = { workers: c.workers, batch: c.batch, seconds: c.seconds, attempts };
  if (!last) return { ...base, status: 'not-run', why: ['no ceiling evidence: the campaign stopped before the ceiling ran'], dir: null, report: null, notes: [] };
  if (last.status === 'interrupted') return { ...base, status: 'interrupted', why: last.reasons, dir: last.dir, report: null, notes: [] };
  const notes = last.report?.gate.notes ?? [];
  if (last.status === 'not-published') {
    const why = [...last.reasons, ...last.gate_reasons.map((g) => `also failed: ${g}`)];
    return { ...base, status: 'not-published', why, dir: last.dir, report: last.report, notes };
  }
  // A maximum counted with failed requests (or rows the database did not gain) is no maximum of
  // anything: not a ceiling. Fewer requests than a repeat's 1,000 is noted, not fatal: a short closed
  // loop at batch 500 sends ~100 requests of 500 events each, and its rate is still a maximum.
  if (last.status === 'failed') {
    const fatal = last.checks.filter((k) => k.passed === false && k.name !== 'samples');
    if (fatal.length) return { ...base, status: 'invalid', why: last.reasons, dir: last.dir, report: last.report, notes };
    return { ...base, status: 'measured', why: [], dir: last.dir, report: last.report, notes: [...notes, ...last.reasons] };
  }
  return { ...base, status: 'measured', why: [], dir: last.dir, report: last.report, notes };
}

/** "not a valid ceiling: <why>" for a ceiling whose figure must not be used (nor any ratio of it); else null. */
export function ceilingInvalidity(c: CeilingModel): string | null {
  return c.status === 'invalid' || c.status === 'not-published' ? `not a valid ceiling: ${c.why.join('; ')}` : null;
}

function buildDenominator(ev: Evidence, ceiling: CeilingModel | null): DenominatorModel | null {
  if (!ev.spec.denominator) return null;
  const evps = ceiling?.status === 'measured' && ceiling.report ? ceiling.report.delivered_rate : null;
  const legs = (ev.denominator?.legs ?? []).map((l) => ({
    ...l,
    description: l.description ?? l.leg,
    // A ratio only between figures of one unit: the ceiling's events/s over a leg's rows/s, for a leg of
    // the ceiling's own row shape (rows per transaction = its batch); never over the commit leg, whose
    // figure is commits/s.
    ratio: l.rows_verified && evps !== null && l.rows_per_s > 0 && l.batch === ceiling?.batch && l.leg !== 'owner-commit' ? Math.round((evps / l.rows_per_s) * 1000) / 1000 : null,
  }));
  return { legs, ceiling_evps: evps };
}

function evidenceDates(ev: Evidence): ReportModel['dates'] {
  const times: string[] = [];
  for (const s of ev.steps) times.push(s.startedAt, s.endedAt);
  for (const l of ev.log) times.push(l.at);
  for (const a of [...ev.attempts, ...ev.ceiling]) {
    if (a.load?.started_at) times.push(a.load.started_at);
    if (a.load?.ended_at) times.push(a.load.ended_at);
  }
  const valid = times.filter((t) => !Number.isNaN(Date.parse(t))).map((t) => new Date(Date.parse(t)).toISOString());
  if (!valid.length) return { first: null, last: null, days: [] };
  valid.sort();
  const first = valid[0];
  const last = valid[valid.length - 1];
  const days: string[] = [];
  for (let d = Date.parse(first.slice(0, 10)); d <= Date.parse(last.slice(0, 10)); d += 86_400_000) days.push(new Date(d).toISOString().slice(0, 10));
  return { first, last, days };
}

/** The settings read back at each repeat's start, one entry per distinct set (Conditions.settings_read_back). */
export function settingsReadBack(repeats: readonly RepeatModel[]): Pick<Conditions, 'settings_read_back'> {
  const sets = new Map<string, NonNullable<Conditions['settings_read_back']>[number]>();
  for (const r of repeats) {
    const s = r.db?.settings;
    if (!s) continue;
    const named = Object.entries(s.named).sort(([a], [b]) => a.localeCompare(b));
    const changed = [...s.changed].sort((a, b) => a.name.localeCompare(b.name));
    const key = JSON.stringify([named, changed]);
    const set = sets.get(key);
    if (set) set.repeats.push(r.id);
    else sets.set(key, { repeats: [r.id], named, changed });
  }
  return sets.size ? { settings_read_back: [...sets.values()] } : {};
}

function buildConditions(ev: Evidence): Omit<Conditions, 'warmup'> {
  const spec = ev.spec;
  const fromRig = ev.rig?.postgresParameters;
  const dbParams = fromRig ?? (spec.database as Record<string, string | number | boolean>);
  const database = Object.keys(dbParams)
    .sort()
    .map((k) => [k, String(dbParams[k])] as [string, string]);
  if (ev.rig?.postgresVersion) database.unshift(['server_version', ev.rig.postgresVersion]);
  const provision = ev.steps.find((s) => s.step === 'provision');
  const teardown = [...ev.steps].reverse().find((s) => s.step === 'teardown' && s.status === 'ok');
  let billed: Conditions['billed'] = null;
  if (provision) {
    const lastTime = [...ev.steps.map((s) => s.endedAt), ...ev.log.map((l) => l.at)].sort().pop() ?? provision.endedAt;
    const to = teardown ? teardown.endedAt : lastTime;
    const hours = Math.max(0, (Date.parse(to) - Date.parse(provision.startedAt)) / 3_600_000);
    billed = {
      from: provision.startedAt,
      to,
      hours: Math.round(hours * 10000) / 10000,
      basis:
        spec.target === 'existing'
          ? 'connect to the last recorded time (an existing deployment runs, and bills, before and after the campaign)'
          : teardown
            ? 'provision start to teardown end'
            : 'provision start to the last recorded time (no completed teardown: the rig may still be billing)',
    };
  }
  // The rig's own price where its target priced it (aws: the price table or the spec's overrides), else the spec's.
  const perHour = typeof ev.rig?.costPerHour === 'number' ? ev.rig.costPerHour : spec.hardware.costPerHour;
  const s = spec.sustained;
  const protocol = s
    ? `${s.repeats} × ${s.repeatSeconds} s per configuration, ${s.cooldownSeconds} s cool-down, open loop (${s.maxInFlight} request slots), ${s.drift === 'noted' ? 'drift noted, not gated (sustained.drift "noted")' : `drift limit ×${s.driftLimit}`}, read probe ${s.probe.rate > 0 ? `${s.probe.rate} req/s, p99 budget ${s.probe.p99BudgetMs} ms` : 'off'}`
    : spec.ladder
      ? `ladder: rates ${spec.ladder.rates.map(fmtN).join(', ')} ev/s at batch ${spec.ladder.batch}, ${spec.ladder.rungs} × ${spec.ladder.rungSeconds} s per rung, ${spec.ladder.cooldownSeconds} s cool-down`
      : 'no measurement planned';
  return {
    target: spec.target,
    hardware: ev.rig?.hardware ?? spec.hardware.description,
    cost_per_hour: perHour,
    ...(ev.rig?.priceSource ? { cost_source: ev.rig.priceSource } : {}),
    ...(ev.rig?.costNotes?.length ? { cost_notes: ev.rig.costNotes } : {}),
    billed,
    total_cost: billed ? Math.round(billed.hours * perHour * 100) / 100 : null,
    database,
    database_source: fromRig ? 'rig.json' : 'spec.json',
    service_build: serviceBuild(spec.service.run),
    service: serviceSettingsList(spec.service),
    service_reported: ev.service?.reported ? Object.entries(ev.service.reported).sort(([a], [b]) => a.localeCompare(b)) : null,
    seed: { customers: spec.seed.customers, history_rows: spec.seed.historyRows },
    protocol,
    calibration: ev.calibration
      ? {
          calibrated: ev.calibration.calibrated,
          cases: ev.calibration.cases.map((c) => ({ name: c.name, passed: c.passed, detail: c.detail ?? '' })),
          floor: ev.calibration.floor ?? null,
        }
      : null,
  };
}

function method(spec: CampaignSpec, configs: ConfigurationModel[]): string[] {
  const out: string[] = [];
  out.push('Open loop: requests are offered on a fixed schedule whatever the server does; drops are counted and reported. Closed-loop figures appear only as ceilings, never as service levels.');
  if (spec.sustained) {
    const limits = configs.filter((c) => !c.unplanned && c.p99_limit_ms !== null).map((c) => `${c.name} ${c.p99_limit_ms} ms`).join(', ');
    out.push(
      `Every sustained repeat is gated: p99 within the configuration's limit (${limits}); 0 dropped and 0 failed; rows written == events claimed; Σ quantity gained == Σ quantity acknowledged; ≥ ${fmtN(MIN_SAMPLES)} samples; ${
        spec.sustained.drift === 'noted'
          ? `drift (last-third p99 / first-third p99) is NOT gated in this campaign (sustained.drift "noted"): it is shown beside each repeat, as the protocol shows it beside its short ladder rungs, because repeats of ${spec.sustained.repeatSeconds} s are too short for it on a shared host (docs/benchmarks.md, the gates' A/A study), so "held" here means held on every other gate`
          : `drift (last-third p99 / first-third p99) under ×${spec.sustained.driftLimit}, judged with its 95 % interval (failed only when the interval lies at or over the limit, not judged when it straddles it)`
      }; the instrument on time (schedule-lag p99 within ${INSTRUMENT_LAG_SHARE * 100} % of the p99 limit: a late generator would hide the server's queueing from done − sent, so a late instrument is never a pass).${
        spec.sustained.probe.rate > 0 ? ` The read probe has its own p99 budget (${spec.sustained.probe.p99BudgetMs} ms); over budget, or a failed read, marks the repeat DEGRADED and fails it. Probe samples never pool into ingest latency.` : ''
      }`,
    );
  }
  if (spec.ladder) out.push(`Ladder rungs pass on the ingest gate alone: delivered rate, drops, reconciliation and the instrument on time (schedule-lag p99 ≤ ${INSTRUMENT_LAG_NO_LIMIT_MS} ms); drift is noted beside them.`);
  if (spec.ceiling) out.push(`The closed-loop ceiling is a valid ceiling only with 0 failed requests, ≥ ${fmtN(MIN_SAMPLES)} samples and its rows and quantity reconciled; otherwise it is shown as "not a valid ceiling" and no ratio to a pgbench leg is computed from it.`);
  out.push(
    'A repeat whose rows in the database do not match the events its client had acknowledged (or whose rows were never counted) is not published; nor is one whose recorded verdict differs from the one re-derived here from its raw samples.',
  );
  out.push(
    'A single latency is the median over the passing repeats; a range is their min–max; failed repeats are in neither. A configuration is reported at the count that passed (4/5 is written 4/5); interrupted attempts are listed and never counted.',
  );
  out.push(
    `Tails, two-grained: a window is ≥ ${WINDOW_MIN_BUCKETS} consecutive 10-s buckets with p99 > ${WINDOW_FACTOR}× the run's median bucket p99; a freeze-second has its worst request > ${FREEZE_WORST_US / 1000} ms and > ${FREEZE_SLOW_FRACTION * 100} % of its requests over ${FREEZE_SLOW_US / 1000} ms. "Worst 10-s p99" is the single worst 10-second bucket, not a p99 of the run.`,
  );
  // Only on a page that has tails to attribute: a page without any reads as before.
  if (configs.some((c) => c.repeats.some((r) => r.tails))) out.push(`Tails attributed: ${ATTRIBUTION_RULES.join(' ')}`);
  out.push(
    'Latency is done − sent per request (nearest-rank percentiles on exact values); a request belongs to the second of its intended time. Beside each repeat\'s p99 stand its schedule-lag p99 (sent − intended), its maximum lag and its late seconds (a request sent later than the p99 limit: the instrument check fails on any), and its corrected p99 (done − intended); freeze-seconds count in either latency.',
  );
  out.push(
    'Delivery is judged against the plan the stream carries (rate, batch, length): every request it scheduled must be answered 2xx in its own second; a short or empty second fails the repeat and is named ("delivered / planned"). A stream without a plan is not judged (never a pass).',
  );
  if (spec.denominator) out.push('Every throughput figure has a denominator: pgbench on the same database and row shape gives the database\'s own floor; legs whose rows were not verified are not used.');
  return out;
}

function headline(configs: ConfigurationModel[], ceiling: CeilingModel | null, denominator: DenominatorModel | null, ev: Evidence): string[] {
  const out: string[] = [];
  for (const c of configs) {
    if (!c.published) {
      out.push(`${c.name}: not published (${c.why_not[0]}${c.why_not.length > 1 ? `; and ${c.why_not.length - 1} more` : ''}).`);
      continue;
    }
    const p99 = c.summary.figures.p99_ms;
    const rate = c.summary.figures.delivered_evps;
    const what = c.kind === 'rung' ? 'rung' : 'sustained';
    if (c.summary.passed === 0) {
      out.push(`${c.name} (${fmtN(c.events_per_second)} ev/s at batch ${c.batch}): ${what}, passed ${c.summary.label}.`);
    } else {
      out.push(
        `${c.name}: ${fmtN(Math.round(rate?.median ?? 0))} ev/s at batch ${c.batch}, p99 ${p99 ? p99.median.toFixed(1) : '—'} ms, passed ${c.summary.label}${c.summary.held ? '' : notHeldWhy(c)}.`,
      );
    }
  }
  if (ceiling?.status === 'measured' && ceiling.report) {
    // At a glance, one ratio of one unit: events/s over the multi-row leg's rows/s (the table has the rest).
    const legs = denominator?.legs.filter((l) => l.ratio !== null && l.leg === 'owner-multirow') ?? [];
    out.push(
      `Closed-loop ceiling (a ceiling, not a service level): ${fmtN(Math.round(ceiling.report.delivered_rate))} ev/s at batch ${ceiling.batch}${
        legs.length ? `; ${legs.map((l) => `${Math.round((l.ratio ?? 0) * 100)} % of pgbench ${l.leg}'s rows/s`).join(', ')}` : ''
      }.`,
    );
  }
  const invalid = ceiling ? ceilingInvalidity(ceiling) : null;
  if (invalid) out.push(`Closed-loop ceiling: ${invalid}.`);
  if (ev.result?.status) out.push(`Campaign status: ${ev.result.status}${ev.result.error ? ` (${ev.result.error})` : ''}.`);
  else out.push('Campaign status: unknown (no result.json: the campaign did not finish).');
  return out;
}

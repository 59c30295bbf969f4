// A realistic campaign evidence folder, made deterministically from a seed, exactly per the layout in
// docs/architecture.md ("Evidence layout"): the same seed and options always give the same bytes.
//
// What it imitates, and how:
// - samples.csv.gz: one row per request as the generator writes them (completion order, gzip CSV,
//   the protocol's header): an open-loop schedule at the configuration's rate, log-normal service
//   times, a read probe over the three endpoints; planted faults change the rows, not the verdicts;
// - verdict.json: computed from those rows by lib/protocol exactly as `rig measure` does
//   (analyzeSamples -> evaluateRun: the gate of its kind, the probe verdict, the report), with the
//   reconciliation the activity would have seen;
// - reconcile.json: the database's count for the run tag (planted: missing, or rows lost);
// - db-samples.jsonl / host-samples.jsonl: 5-s sampler rows (waits, cumulative WAL, CPU by process);
// - interrupted attempts: a cut-short rK-a1 (no verdict) followed by rK-a2, listed in result.json;
// - ceiling/r1-a1/, denominator/legs.json, calibration/ (with database.json), rig.json, steps/, campaign.log, result.json,
//   spec.json; then manifest.json, built last through the store.
import path from 'node:path';
import zlib from 'node:zlib';
import { EvidenceStore } from '../../lib/evidence/store';
import { repeatDir, stepFile } from '../../lib/evidence/layout';
import type { CalibrationFile, DbSampleRow, DenominatorFile, HostSampleRow, LoadFile, ReconcileFile, RigFile, StepRecord } from '../../lib/evidence/records';
import { analyzeSamples } from '../../lib/protocol/analysis';
import type { CampaignResult, ConfigurationOutcome, InterruptedAttempt, RepeatSummary, StepName } from '../../lib/protocol/campaign-result';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { evidencePlan } from '../../lib/protocol/stream-plan';
import { summarizeRepeat } from '../../lib/protocol/repeat-summary';
import { SAMPLE_HEADER, SampleColumns, formatSampleRow, type SampleRow } from '../../lib/protocol/sample-row';
import { parseCampaignSpec, type CampaignSpec, type CampaignSpecInput } from '../../lib/protocol/spec';
import { rng } from '../harness/rng';
import { measuredConfigurations } from '../../lib/protocol/variants';

/** What to plant in one repeat (matched by configuration name and 1-based repeat index). */
export interface RepeatPlan {
  config: string;
  repeat: number;
  /** Requests dropped (no free slot) in the middle third: fails the `dropped` gate. */
  drops?: number;
  /** Seconds at which commits freeze for ~260 ms: freeze-seconds, no gate failure on their own. */
  stallsAt?: number[];
  /** Seconds [from, to) at 4x latency: a window of the 10-s rule (the repeat may still pass). */
  window?: [number, number];
  /** The last third at 2.2x latency: fails the `drift` gate. */
  drift?: boolean;
  /** Every request sent this many ms after its intended time (a late generator): fails the `instrument` gate. */
  lateMs?: number;
  /** Seconds whose requests left no row at all (a stream short of its plan): fails the `delivered` gate. */
  dropSeconds?: number[];
  /** 'missing': no reconcile.json; 'rows-lost': the database holds 3 rows fewer than acknowledged. */
  reconcile?: 'ok' | 'missing' | 'rows-lost';
  /** Attempt 1 is cut short a third of the way in (worker lost); attempt 2 runs in full. */
  interruptedFirst?: boolean;
  /** verdict.json records a p99 1 ms lower than its samples give (a verdict that cannot be re-derived). */
  tamperVerdict?: boolean;
  /** No db-samples.jsonl / host-samples.jsonl for this repeat. */
  noDbSamples?: boolean;
  noHostSamples?: boolean;
  /** The host's CPU steal (%) in this repeat's last third (a hypervisor busy elsewhere). */
  stealPct?: number;
}

export interface FixtureOptions {
  seed: number;
  /** Parent folder; the campaign folder is <root>/<campaignId>. */
  root: string;
  campaignId?: string;
  repeats?: number;
  repeatSeconds?: number;
  cooldownSeconds?: number;
  configurations?: Array<{ name: string; eventsPerSecond: number; batch: number; p99LimitMs: number }>;
  /** Every ingest latency times this (a planted regression: 1.6). */
  latencyFactor?: number;
  plans?: RepeatPlan[];
  probe?: boolean;
  ceiling?: boolean;
  /** The ceiling's first N requests are answered 503 (a ceiling counted with failures: not a valid one). */
  ceilingFailed?: number;
  denominator?: boolean;
  /** ISO start of the campaign. */
  start?: string;
  /** No calibration/database.json (the database side not calibrated: aws, existing, calibrate: false, older evidence). */
  noDbCalibration?: boolean;
  /** Leave the folder unsealed (no manifest.json). */
  unsealed?: boolean;
  /** A ladder campaign instead of sustained repeats: rungs `rung-<rate>` of `rungs` × `rungSeconds`. */
  ladder?: { rates: number[]; batch: number; rungs: number; rungSeconds: number };
  /** Control and treatments: each configuration (rung) measured once per variant, as "<name>.<variant>". */
  variants?: CampaignSpecInput['variants'];
  /** The rig's own price in rig.json, as a target that prices its rig writes it (aws: lib/targets/aws/campaign-cost.ts). */
  rigCost?: Pick<RigFile, 'costPerHour' | 'priceSource' | 'priceCovers' | 'costNotes'>;
  /** rig.json's hardware line and the build measured, as another machine or another build writes them (rig history's series). */
  rigFile?: Pick<RigFile, 'hardware' | 'serviceBuild'>;
}

/** One sustained configuration, no probe, ceiling or denominator: the small campaign most report tests start from. */
export const ONE_CONFIG = {
  probe: false,
  ceiling: false,
  denominator: false,
  configurations: [{ name: 'only', eventsPerSecond: 500, batch: 5, p99LimitMs: 100 }],
} as const satisfies Partial<FixtureOptions>;

export interface Fixture {
  dir: string;
  campaignId: string;
  spec: CampaignSpec;
}

function hashStr(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
function normal(r: () => number): number {
  const u = Math.max(r(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}
const iso = (ms: number) => new Date(ms).toISOString();

interface RepeatOutcome {
  rows: SampleRow[];
  eventsClaimed: number;
  quantityClaimed: number;
  cutShort: boolean;
}

/** The open-loop sample stream of one repeat (or of its cut-short first attempt). */
function openLoopRows(r: () => number, c: { eventsPerSecond: number; batch: number }, seconds: number, plan: RepeatPlan | undefined, factor: number, probeRate: number, cutAtS: number | null): RepeatOutcome {
  const rps = c.eventsPerSecond / c.batch;
  const interval = 1e6 / rps;
  const baseMs = (c.batch === 1 ? 2.5 : 2 + 0.4 * c.batch) * factor;
  const end = (cutAtS ?? seconds) * 1e6;
  const n = Math.floor((seconds * 1e6) / interval);
  const rows: SampleRow[] = [];
  let eventsClaimed = 0;
  let quantityClaimed = 0;
  const third = Math.floor(seconds / 3);
  const dropSet = new Set<number>();
  if (plan?.drops) {
    const from = Math.floor(n / 3);
    for (let i = 0; i < plan.drops; i++) dropSet.add(from + Math.floor((i * n) / 3 / plan.drops));
  }
  const stalls = (plan?.stallsAt ?? []).map((s) => [s * 1e6 + 100_000, s * 1e6 + 360_000]);
  for (let i = 0; i < n; i++) {
    const intended = Math.round(i * interval);
    if (intended >= end) break;
    if (dropSet.has(i)) {
      rows.push({ scenario: 'ingest', intended_us: intended, sent_us: null, done_us: null, status: -1, events: c.batch, quantity: 0 });
      continue;
    }
    const sec = intended / 1e6;
    if (plan?.dropSeconds?.includes(Math.floor(sec))) continue;
    // the noise's tail stops at z = 2.6 (0.5 % of requests, all above the p99): every percentile up to
    // p99.5 is unchanged, and a third of 600 requests bounds its p99 closely enough that a steady
    // repeat is decided on drift (lib/protocol/drift.ts, issue 34) rather than read NOT JUDGED
    let lat = baseMs * Math.exp(0.35 * Math.min(2.6, normal(r))) * 1000;
    if (plan?.window && sec >= plan.window[0] && sec < plan.window[1]) lat *= 4;
    if (plan?.drift && sec >= seconds - third) lat *= 2.2;
    const sent = intended + Math.floor(r() * 150) + Math.round((plan?.lateMs ?? 0) * 1000);
    let done = Math.round(sent + lat);
    for (const [a, b] of stalls) if (sent >= a && sent < b) done = Math.round(b + lat);
    let q = 0;
    for (let e = 0; e < c.batch; e++) q += 1 + Math.floor(r() * 100);
    if (cutAtS !== null && done >= end) continue; // in flight when the worker died: never answered
    rows.push({ scenario: 'ingest', intended_us: intended, sent_us: sent, done_us: done, status: 201, events: c.batch, quantity: q });
    eventsClaimed += c.batch;
    quantityClaimed += q;
  }
  if (probeRate > 0) {
    const eps = ['probe:aggregate', 'probe:invoices', 'probe:customers'] as const;
    const pInt = 1e6 / probeRate;
    for (let i = 0; i * pInt < end; i++) {
      const scenario = eps[i % 3];
      const med = scenario === 'probe:aggregate' ? 38 : 3;
      const intended = Math.round(i * pInt + 37_000);
      if (intended >= end) break;
      const sent = intended + Math.floor(r() * 200);
      const done = Math.round(sent + med * Math.exp(0.25 * normal(r)) * 1000);
      if (cutAtS !== null && done >= end) continue;
      rows.push({ scenario, intended_us: intended, sent_us: sent, done_us: done, status: 200, events: 0, quantity: 0 });
    }
  }
  // The generator writes rows as requests complete (drops at their intended time).
  rows.sort((a, b) => (a.done_us ?? a.intended_us) - (b.done_us ?? b.intended_us) || a.intended_us - b.intended_us);
  return { rows, eventsClaimed, quantityClaimed, cutShort: cutAtS !== null };
}

function closedLoopRows(r: () => number, workers: number, batch: number, seconds: number, failFirst = 0): RepeatOutcome {
  const rows: SampleRow[] = [];
  let eventsClaimed = 0;
  let quantityClaimed = 0;
  for (let w = 0; w < workers; w++) {
    let t = Math.floor(r() * 2000);
    while (t < seconds * 1e6) {
      const done = Math.round(t + 160_000 * Math.exp(0.12 * normal(r)));
      let q = 0;
      for (let e = 0; e < batch; e++) q += 1 + Math.floor(r() * 100);
      const failed = rows.length < failFirst;
      rows.push({ scenario: 'ingest', intended_us: t, sent_us: t, done_us: done, status: failed ? 503 : 201, events: batch, quantity: q });
      if (!failed) {
        eventsClaimed += batch;
        quantityClaimed += q;
      }
      t = done + 200;
    }
  }
  rows.sort((a, b) => (a.done_us as number) - (b.done_us as number) || a.intended_us - b.intended_us);
  return { rows, eventsClaimed, quantityClaimed, cutShort: false };
}

function gz(rows: SampleRow[]): Buffer {
  return zlib.gzipSync(Buffer.from(`${SAMPLE_HEADER}\n${rows.map(formatSampleRow).join('')}`, 'latin1'), { level: 6 });
}

function dbRows(r: () => number, startMs: number, seconds: number, eventsPerSecond: number, stalls: number[]): DbSampleRow[] {
  const out: DbSampleRow[] = [];
  let walBytes = 4_000_000_000 + Math.floor(r() * 1e8);
  let walRecords = 30_000_000;
  let walFpi = 90_000;
  let lsn = walBytes + 7_000_000;
  let seq = 0;
  for (let t = 0; t <= seconds; t += 5) {
    if (t > 0) {
      const ev = eventsPerSecond * 5;
      const b = Math.round(ev * (1180 + 60 * r()));
      walBytes += b;
      lsn += Math.round(b * 1.01);
      walRecords += Math.round(ev * (7.6 + 0.2 * r()));
      walFpi += Math.round(ev * 0.05 * r() * 2);
    }
    const stalled = stalls.some((s) => s >= t - 5 && s < t);
    const active = (type: string | null, event: string | null, count: number) => ({ state: 'active', wait_event_type: type, wait_event: event, backend_type: 'client backend', count });
    const waits = [
      active(null, null, 1 + Math.floor(r() * 3)),
      active('IO', 'WALSync', Math.floor(r() * 3) + (stalled ? 9 : 0)),
      active('LWLock', 'WALWrite', Math.floor(r() * 2) + (stalled ? 6 : 0)),
      active('Lock', 'transactionid', Math.floor(r() * 1.4)),
      active('IO', 'DataFileRead', Math.floor(r() * 1.2)),
      active('LWLock', 'MultiXactGen', eventsPerSecond >= 1000 ? Math.floor(r() * 2) : 0),
      { state: 'idle', wait_event_type: 'Client', wait_event: 'ClientRead', backend_type: 'client backend', count: 14 },
      { state: null, wait_event_type: 'Activity', wait_event: 'WalWriterMain', backend_type: 'walwriter', count: 1 },
      { state: null, wait_event_type: stalled ? 'IO' : 'Activity', wait_event: stalled ? 'DataFileSync' : 'CheckpointerMain', backend_type: 'checkpointer', count: 1 },
    ].filter((w) => w.count > 0);
    out.push({
      t: iso(startMs + t * 1000),
      seq: seq++,
      waits,
      activeBackends: waits.filter((w) => w.state === 'active').reduce((s, w) => s + w.count, 0),
      wal: { wal_records: walRecords, wal_bytes: walBytes, wal_fpi: walFpi, lsn_bytes: lsn },
      checkpointer: { checkpoints_timed: 12, checkpoints_req: 0, buffers_checkpoint: 18_000 },
      bgwriter: { buffers_clean: 0, buffers_alloc: 40_000 + t * 100 },
      vacuum: [],
      sizes: { table: 2_000_000_000 + t * 100_000, indexes: { usage_events_pkey: 400_000_000 }, total: 2_600_000_000 + t * 130_000 },
      tableStats: { n_tup_ins: 200_000 + t * eventsPerSecond, n_live_tup: 200_000 + t * eventsPerSecond, last_autovacuum: null },
    });
  }
  return out;
}

function hostRows(r: () => number, startMs: number, seconds: number, stealPct = 0): HostSampleRow[] {
  const out: HostSampleRow[] = [];
  for (let t = 5, seq = 1; t <= seconds; t += 5, seq++) {
    const us = round2(18 + r() * 10);
    const sy = round2(5 + r() * 4);
    const wa = round2(1 + r() * 2);
    out.push({
      t: iso(startMs + t * 1000),
      seq,
      intervalMs: 5000,
      cpu: { us, sy, id: round2(100 - us - sy - wa - (t > (seconds * 2) / 3 ? stealPct : 0)), wa, st: t > (seconds * 2) / 3 ? stealPct : 0 },
      procs: { running: 2 + Math.floor(r() * 3), blocked: 0 },
      memKb: { total: 33_554_432, free: 9_000_000, available: 19_500_000, buffers: 300_000, cached: 11_000_000, dirty: 20_000, swapUsed: 0 },
      rates: { ctxt: 41_000, intr: 22_000, pgpginKb: 0, pgpgoutKb: 9_000, pswpin: 0, pswpout: 0 },
      loadavg: [round2(1 + r() * 2), 1.5, 1.2],
    });
  }
  return out;
}
const round2 = (x: number) => Math.round(x * 100) / 100;

export async function makeFixtureCampaign(o: FixtureOptions): Promise<Fixture> {
  const campaignId = o.campaignId ?? `fixture-${o.seed}`;
  const dir = path.join(o.root, campaignId);
  const store = new EvidenceStore(dir);
  const repeats = o.ladder?.rungs ?? o.repeats ?? 5;
  const repeatSeconds = o.ladder?.rungSeconds ?? o.repeatSeconds ?? 60;
  const cooldown = o.cooldownSeconds ?? 5;
  const factor = o.latencyFactor ?? 1;
  const probeOn = o.ladder ? false : (o.probe ?? true);
  const configurations = o.ladder
    ? o.ladder.rates.map((rate) => ({ name: `rung-${rate}`, eventsPerSecond: rate, batch: o.ladder!.batch, p99LimitMs: Number.MAX_SAFE_INTEGER }))
    : (o.configurations ?? [
    { name: 'single', eventsPerSecond: 200, batch: 1, p99LimitMs: 50 },
    { name: 'batched', eventsPerSecond: 1000, batch: 10, p99LimitMs: 100 },
  ]);
  const input: CampaignSpecInput = {
    name: 'fixture',
    target: 'local',
    watchdogMinutes: 60,
    seed: { customers: 200, historyRows: 200_000, settleTimeoutSeconds: 120 },
    ...(o.ladder
      ? { ladder: { rates: o.ladder.rates, batch: o.ladder.batch, rungs: o.ladder.rungs, rungSeconds: o.ladder.rungSeconds, cooldownSeconds: cooldown } }
      : { sustained: { repeats, repeatSeconds, cooldownSeconds: cooldown, configurations, probe: { rate: probeOn ? 2 : 0, p99BudgetMs: 500 } } }),
    ...(o.ceiling === false ? {} : { ceiling: { workers: 8, batch: 500, seconds: 30 } }),
    ...(o.denominator === false ? {} : { denominator: { batch: 500, clients: 8, seconds: 20 } }),
    hardware: { description: 'fixture machine: 8 vCPU, 32 GB, NVMe', costPerHour: 0.5 },
    ...(o.variants ? { variants: o.variants } : {}),
  };
  const spec = parseCampaignSpec(input);
  // With variants the workflow measures each configuration (rung) under every variant (lib/protocol/variants.ts).
  const measured = o.variants ? measuredConfigurations(spec).map(({ base: _b, variant: _v, ...c }) => c) : configurations;
  store.writeJson('spec.json', spec);

  let clock = Date.parse(o.start ?? '2026-08-16T09:00:00.000Z');
  const steps: StepRecord[] = [];
  let stepIndex = 0;
  const step = (name: StepName, seconds: number, summary: string, body?: () => void) => {
    const startedAt = iso(clock);
    store.logStepStart(name, startedAt);
    body?.();
    clock += seconds * 1000;
    const rec: StepRecord = { step: name, status: 'ok', startedAt, endedAt: iso(clock), summary, index: ++stepIndex };
    steps.push(rec);
    store.writeJson(stepFile(stepIndex, name), rec);
    store.logStepEnd(rec, rec.endedAt);
  };

  const calibration: CalibrationFile = {
    calibrated: true,
    cases: ['constant 5 ms', 'slow 200 ms', '1-s stall', '1 % errors', 'slot exhaustion drops', 'closed loop'].map((name) => ({ name, passed: true, detail: 'within tolerance' })),
  };
  step('calibrate', 42, 'CALIBRATED (six cases)', () => store.writeJson('calibration/calibration.json', calibration));
  step('clean-check', 2, 'clean');
  step('watchdog', 1, `armed until ${iso(clock + 3_600_000)}`);
  const rig: RigFile = {
    target: 'local',
    hardware: 'fixture machine: 8 vCPU, 32 GB, NVMe (local PostgreSQL 16 + reference service)',
    serviceUrl: 'http://127.0.0.1:41234',
    database: '127.0.0.1:41235',
    postgresVersion: '16.4',
    postgresParameters: { ...(spec.database as Record<string, string | number>), log_checkpoints: 'on', log_autovacuum_min_duration: 0 },
    ...o.rigCost,
    ...o.rigFile,
  };
  step('provision', 58, 'local cluster + reference service', () => store.writeJson('rig.json', rig));
  // The database side's calibration, as a local campaign records it since issue 31 (its step's time is
  // not imitated); `noDbCalibration`: none, as on aws, existing or with calibrate: false.
  step('bring-up', 21, 'schema clean; app role reads 11 tables; RLS on the app pool; probe 201 wrote its row', () => {
    if (o.noDbCalibration) return;
    const cases = ['lock wait', 'WAL per event', 'vacuum marker', 'checkpoint marker', 'non-UTC zone'].map((name) => ({ name, ok: true }));
    store.writeJson('calibration/database.json', { calibrated: true, passed: cases.length, total: cases.length, cases });
  });
  step('seed', 240, '200,000 history rows; autovacuum idle after 31 s');

  const summaries: RepeatSummary[] = [];
  const interrupted: InterruptedAttempt[] = [];
  const sustainedStart = iso(clock);
  store.logStepStart(spec.sustained ? 'sustained' : 'ladder', sustainedStart);
  for (const c of measured) {
    for (let k = 1; k <= repeats; k++) {
      const plan = o.plans?.find((p) => p.config === c.name && p.repeat === k);
      const attempts = plan?.interruptedFirst ? 2 : 1;
      for (let a = 1; a <= attempts; a++) {
        const r = rng(o.seed ^ hashStr(`${c.name}/${k}/${a}`));
        const cut = a < attempts ? Math.floor(repeatSeconds / 3) : null;
        const rel = repeatDir(c.name, k, a);
        const startMs = clock;
        const runTag = `${campaignId}-${c.name}-r${k}-a${a}`;
        const out = openLoopRows(r, c, repeatSeconds, plan, factor, probeOn ? 2 : 0, cut);
        store.writeBytes(`${rel}/samples.csv.gz`, gz(out.rows));
        const ranS = cut ?? repeatSeconds;
        const load: LoadFile = {
          mode: 'open',
          started_at: iso(startMs),
          ended_at: iso(startMs + ranS * 1000),
          cut_short: out.cutShort,
          ...(out.cutShort ? { cut_reason: 'worker lost (heartbeat timeout)' } : {}),
          run_tag: runTag,
          rate: c.eventsPerSecond,
          batch: c.batch,
          seconds: repeatSeconds,
          offered: out.rows.filter((x) => x.scenario === 'ingest').length,
          sent: out.rows.filter((x) => x.scenario === 'ingest' && x.status !== -1).length,
          dropped: out.rows.filter((x) => x.status === -1).length,
          host: 'fixture-host',
        };
        store.writeJson(`${rel}/load.json`, load);
        if (!plan?.noDbSamples) store.writeJsonLines(`${rel}/db-samples.jsonl`, dbRows(r, startMs, ranS, c.eventsPerSecond, plan?.stallsAt ?? []));
        if (!plan?.noHostSamples) store.writeJsonLines(`${rel}/host-samples.jsonl`, hostRows(r, startMs, ranS, plan?.stealPct));
        store.writeText(`${rel}/postgres.log`, `${iso(startMs + 1000)} UTC [4242] LOG:  checkpoint starting: time\n${iso(startMs + 9000)} UTC [4242] LOG:  checkpoint complete: wrote 1843 buffers (1.4%)\n`);
        clock += ranS * 1000;
        if (out.cutShort) {
          const reason = 'worker lost mid-repeat (heartbeat timeout); attempt 2 ran it again';
          store.writeJson(`${rel}/interrupted.json`, { reason, detected_by_attempt: a + 1, detected_at: iso(clock + 30_000) });
          interrupted.push({ configuration: c.name, index: k, attempt: a, runTag, dir: rel, reason });
          store.logWarning(`${c.name} r${k}-a${a} interrupted: ${reason}`, iso(clock + 30_000));
          clock += 31_000;
          continue;
        }
        // The database's count for the run tag, and the verdict `rig measure` writes from it.
        const lost = plan?.reconcile === 'rows-lost' ? 3 : 0;
        const lostQ = lost ? out.rows.filter((x) => x.status === 201 && x.scenario === 'ingest').slice(0, lost).reduce((s, x) => s + x.quantity, 0) : 0;
        const recon: ReconcileFile = { run_tag: runTag, rows_written: out.eventsClaimed - lost * c.batch, quantity_gained: out.quantityClaimed - lostQ, livemode: true, checked_at: iso(clock + 500) };
        const haveRecon = plan?.reconcile !== 'missing';
        if (haveRecon) store.writeJson(`${rel}/reconcile.json`, recon);
        // Its stream has no #plan record (a stream older than it): judged against load.json's, as the report does.
        const analysis = analyzeSamples(SampleColumns.fromRows(out.rows), { durationS: repeatSeconds, plan: evidencePlan(load) });
        // The same judgement activities/repeat.ts makes (lib/protocol/evaluate.ts).
        const { verdict, report } = evaluateRun(analysis, {
          kind: spec.sustained ? 'sustained' : 'ladder',
          p99LimitMs: spec.sustained ? c.p99LimitMs : null,
          driftLimit: spec.sustained?.driftLimit ?? 1.5,
          reconciliation: haveRecon ? recon : null,
          probeP99Ms: spec.sustained?.probe.p99BudgetMs ?? 500,
        });
        const gate = verdict.ingest;
        if (plan?.tamperVerdict && report.p99_ms !== null) report.p99_ms = Math.round((report.p99_ms - 1) * 1000) / 1000;
        store.writeJson(`${rel}/verdict.json`, report);
        const summary = summarizeRepeat(
          { configuration: c.name, index: k, attempt: a, runTag, kind: spec.sustained ? 'sustained' : 'rung', dir: rel, cutShort: false },
          report,
          verdict,
          { probe: true, reconciled: gate.reconciled },
        );
        summaries.push(summary);
        store.logVerdict(summary, iso(clock + 1000));
        clock += (cooldown + 2) * 1000;
      }
    }
  }
  const outcomes: ConfigurationOutcome[] = measured.map((c) => {
    const ran = summaries.filter((s) => s.configuration === c.name);
    const passed = ran.filter((s) => s.passed).length;
    return { name: c.name, eventsPerSecond: c.eventsPerSecond, batch: c.batch, passed, total: repeats, held: passed === repeats && ran.length === repeats };
  });
  const sustained: StepRecord = { step: spec.sustained ? 'sustained' : 'ladder', status: 'ok', startedAt: sustainedStart, endedAt: iso(clock), summary: outcomes.map((x) => `${x.name} ${x.passed}/${x.total}`).join(', '), index: ++stepIndex };
  steps.push(sustained);
  store.writeJson(stepFile(stepIndex, sustained.step), sustained);
  store.logStepEnd(sustained, sustained.endedAt);

  let ceilingSummary: RepeatSummary | undefined;
  if (spec.ceiling) {
    const cs = spec.ceiling;
    step('ceiling', cs.seconds + 5, 'closed loop', () => {
      const r = rng(o.seed ^ hashStr('ceiling'));
      const out = closedLoopRows(r, cs.workers, cs.batch, cs.seconds, o.ceilingFailed ?? 0);
      const runTag = `${campaignId}-ceiling`;
      // As activities/repeat.ts lays it out and judges it: ceiling/r1-aA, the ceiling's own gate (no service level).
      const cdir = 'ceiling/r1-a1';
      store.writeBytes(`${cdir}/samples.csv.gz`, gz(out.rows));
      store.writeJson(`${cdir}/load.json`, { mode: 'closed', started_at: iso(clock), ended_at: iso(clock + cs.seconds * 1000), cut_short: false, run_tag: runTag, batch: cs.batch, seconds: cs.seconds, workers: cs.workers } satisfies LoadFile);
      const recon: ReconcileFile = { run_tag: runTag, rows_written: out.eventsClaimed, quantity_gained: out.quantityClaimed, livemode: true };
      store.writeJson(`${cdir}/reconcile.json`, recon);
      const analysis = analyzeSamples(SampleColumns.fromRows(out.rows), { durationS: cs.seconds, plan: evidencePlan({ mode: 'closed', batch: cs.batch, seconds: cs.seconds }) });
      const { verdict, report } = evaluateRun(analysis, { kind: 'ceiling', driftLimit: 1.5, reconciliation: recon });
      store.writeJson(`${cdir}/verdict.json`, report);
      ceilingSummary = summarizeRepeat(
        { configuration: 'ceiling', index: 1, attempt: 1, runTag, kind: 'ceiling', dir: cdir, cutShort: false },
        report,
        verdict,
        { probe: false, reconciled: verdict.ingest.reconciled },
      );
    });
  }
  if (spec.denominator) {
    const d = spec.denominator;
    const legs: DenominatorFile = {
      legs: [
        // As activities/denominator.ts names them; rows per transaction = the spec's batch in every leg
        // but the commit-rate leg (one row per transaction: its tps are commits/s).
        { leg: 'owner-commit', description: "one-row transactions (batch 1), as the owner: the database's own commit rate", clients: d.clients, batch: 1, seconds: d.seconds, transactions: 143_680, rows: 143_680, tps: 7_184, rows_per_s: 7_184, rows_verified: true, rows_expected: 143_680, rows_found: 143_680, livemode: true },
        { leg: 'owner-1row', description: 'one-row INSERTs per transaction, as the owner (the spec denominator)', clients: d.clients, batch: d.batch, seconds: d.seconds, transactions: 2108, rows: 1_054_000, tps: 105.4, rows_per_s: 52_700, rows_verified: true, rows_expected: 1_054_000, rows_found: 1_054_000, livemode: true },
        { leg: 'rls-1row', description: 'the same through row-level security, as the app role with the service session settings', clients: d.clients, batch: d.batch, seconds: d.seconds, transactions: 1640, rows: 820_000, tps: 82, rows_per_s: 41_000, rows_verified: true, rows_expected: 820_000, rows_found: 820_000, livemode: true },
        { leg: 'owner-multirow', description: 'one multi-row INSERT per transaction (the floor for #823)', clients: d.clients, batch: d.batch, seconds: d.seconds, transactions: 6000, rows: 3_000_000, tps: 300, rows_per_s: 150_000, rows_verified: true, rows_expected: 3_000_000, rows_found: 3_000_000, livemode: true },
      ],
    };
    step('denominator', d.seconds * legs.legs.length + 10, legs.legs.map((l) => `${l.leg} ${l.rows_per_s} rows/s`).join('; '), () => store.writeJson('denominator/legs.json', legs));
  }
  step('teardown', 9, 'removed cluster, service, rig folder');
  step('clean-check-after', 2, 'clean');

  const result: CampaignResult = {
    campaignId,
    name: spec.name,
    target: 'local',
    status: outcomes.every((x) => x.held) ? 'held' : 'not-held',
    steps,
    repeats: summaries,
    interrupted,
    configurations: outcomes,
    ceiling: ceilingSummary,
    denominator: spec.denominator ? { legs: [], dir: 'denominator' } : undefined,
    rig: 'destroyed',
    cleanAfter: 'clean',
    resultsDir: campaignId,
  };
  store.writeJson('result.json', result);
  if (!o.unsealed) await store.buildManifest();
  return { dir, campaignId, spec };
}

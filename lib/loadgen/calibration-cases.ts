// The calibration cases: a server behaviour whose truth is known, the load offered to it, and what
// the instrument must report. Each check compares the stream's analysis and gate with the
// calibration server's exact counts and its per-request times (the truth, joined to the stream by
// request number in lib/protocol/calibration-truth.ts), so what is checked is the whole instrument:
// schedule, sample stream, reader, statistics and gates.
//
// Case 0 (the floor) measures what the instrument itself adds on this host, against a 0-ms server;
// case 1 is judged against it. The other cases are judged on counts, as before.
import type { RunAnalysis } from '../protocol/analysis';
import { EDGE_TOLERANCE_US, serverEdges, serverGapTest, serverPhaseCounts } from '../protocol/arrival-truth';
import type { ArrivalSchedule } from '../protocol/arrivals';
import { CALIBRATION_TOLERANCES as TOL, fmtMs, judgeAgainstFloor, judgeFloor, type FloorFigures, type TruthFigures } from '../protocol/calibration-truth';
import { checkReason, type GateVerdict } from '../protocol/gates';
import type { ProbeVerdict } from '../protocol/verdicts';
import type { Behaviour, Tally, TruthRow } from './calibration-server';
import type { LoadSummary } from './generator';
import type { ArrivalsInput } from './options';

export interface CaseContext {
  analysis: RunAnalysis;
  gate: GateVerdict;
  probe: ProbeVerdict;
  tally: Tally;
  summary: LoadSummary;
  /** The server's times joined to the stream's rows. */
  truth: TruthFigures;
  /** The floor measured by case 0 in this calibration (null before it, or when it did not run). */
  floor: FloorFigures | null;
  /** The smallest p99 limit the instrument must be fine enough for (ms). */
  p99LimitMs: number;
  /** The server's own record of each ingest request (its clock). */
  serverTruth: readonly TruthRow[];
  /** The stream plan's shaped schedule (a case with arrivals), else null. */
  schedule: ArrivalSchedule | null;
}

export interface CaseOutcome {
  /** What was measured, in one line. */
  facts: string;
  /** Empty when the instrument reported what it should. */
  problems: string[];
  /** Case 0 only: the floor it measured. */
  floor?: FloorFigures | null;
}

export interface CalibrationCase {
  id: number;
  name: string;
  behaviour: Behaviour;
  load: { rate: number; batch: number; seconds: number; maxInFlight: number; probeRate?: number; arrivals?: ArrivalsInput };
  /** The p99 limit of the sustained gate applied (the case's "configuration"). */
  p99LimitMs: number | null;
  /** Judged against the floor: case 0 runs first whenever this case is chosen. */
  needsFloor?: boolean;
  check(c: CaseContext): CaseOutcome;
}

/** The id of the floor case. */
export const FLOOR_CASE = 0;

const ms = (us: number | null) => (us === null ? '—' : `${(us / 1000).toFixed(2)} ms`);
const failedChecks = (g: GateVerdict) => g.checks.filter((c) => c.passed === false).map((c) => c.name);
const checkOf = (g: GateVerdict, name: string) => g.checks.find((c) => c.name === name);

/** 400 requests/s: light enough for a 2-core machine that also runs the server, >= 1,000 samples in 3 s. */
const RPS = 400;

export const CALIBRATION_CASES: readonly CalibrationCase[] = [
  {
    id: FLOOR_CASE,
    name: 'instrument floor (0 ms service time)',
    behaviour: { serviceMs: 0 },
    // 300 requests/s for 8 s: 2,400 samples (a p99 that is the 24th worst, not one outlier), at a
    // rate near case 1's, so the floor is the instrument's cost in the conditions case 1 runs in.
    load: { rate: 300 * 5, batch: 5, seconds: 8, maxInFlight: 64 },
    p99LimitMs: null,
    check({ analysis: a, truth, p99LimitMs }) {
      const i = a.ingest;
      const { floor, problems } = judgeFloor(truth, p99LimitMs);
      if (i.dropped !== 0 || i.failed !== 0) problems.push(`${i.dropped} dropped and ${i.failed} failed, expected 0 (a 0-ms server answers everything)`);
      const facts = floor
        ? `floor p50 ${floor.p50_ms.toFixed(2)} ms, p99 ${floor.p99_ms.toFixed(2)} ms = ${(floor.share_of_limit * 100).toFixed(1)} % of the p99 limit ${p99LimitMs} ms (at most ${TOL.floorShareOfLimit * 100} %), ${floor.samples} requests`
        : 'no floor';
      return { facts, problems, floor };
    },
  },
  {
    id: 1,
    name: 'constant 5 ms service time',
    behaviour: { serviceMs: 5 },
    // 200 requests/s: 1,800 samples, 600 per third; light, so the server and the generator are
    // on time (what is calibrated is the instrument, not how busy the machine is).
    load: { rate: 200 * 5, batch: 5, seconds: 9, maxInFlight: 64, probeRate: 3 },
    p99LimitMs: 250,
    needsFloor: true,
    check({ analysis: a, gate, probe, tally, truth, floor }) {
      const i = a.ingest;
      // Judged against what the server really did and the floor, not against "5 ms" (see calibration-truth.ts).
      const problems = judgeAgainstFloor(truth, 5, floor);
      const ratio = i.offered_rate_rps > 0 ? i.delivered_rate_rps / i.offered_rate_rps : 0;
      if (!(Math.abs(1 - ratio) <= 0.005)) problems.push(`delivered ${(ratio * 100).toFixed(2)} % of offered, expected within 0.5 %`);
      // Every gate check but drift. Drift is calibrated by case 6, where it is the programmed behaviour;
      // here the excess checks above already hold the instrument to the truth, so a last third slower
      // than the first (the 6th-worst request of 600 moving with the host's other work: measured x1.5-2.1
      // inside a rehearsal campaign on an idle 2-core host, with every excess check passing) is the
      // host's, not the instrument's, and is reported, not judged.
      const failed = gate.checks.filter((c) => c.passed === false && c.name !== 'drift');
      if (failed.length) problems.push(`the gate failed: ${failed.map(checkReason).join('; ')}`);
      if (!gate.reconciled || tally.rows !== i.events_claimed) problems.push(`reconciliation: ${tally.rows} rows stored vs ${i.events_claimed} claimed`);
      if (probe.state !== 'OK') problems.push(`probe ${probe.state}: ${probe.reasons.join('; ')}`);
      const drift = checkOf(gate, 'drift');
      return {
        facts: `server p50 ${fmtMs(truth.server_p50_ms)} (5 ± ${TOL.serverP50Ms}), client p50 ${ms(i.p50_us)}, excess p50 ${fmtMs(truth.excess_p50_ms)} p99 ${fmtMs(truth.excess_p99_ms)} (floor ${floor ? `${floor.p50_ms.toFixed(2)} / ${floor.p99_ms.toFixed(2)} ms` : '—'}), delivered ${(ratio * 100).toFixed(2)} % of offered, gate ${failed.length ? 'FAIL' : 'PASS'} (${tally.rows} rows reconciled; drift ${drift?.detail ?? '—'}, not judged here), probe ${probe.state}`,
        problems,
      };
    },
  },
  {
    id: 2,
    name: 'one 1-second freeze',
    // At 400/s, requests #1200..#1599 are the ones intended in second 3: the arrival of the first starts
    // a 1-second stall that holds all their answers.
    behaviour: { serviceMs: 2, freeze: { fromRequest: RPS * 3, toRequest: RPS * 4, ms: 1000 } },
    load: { rate: RPS * 5, batch: 5, seconds: 6, maxInFlight: 1000 },
    p99LimitMs: null,
    check({ analysis: a }) {
      const i = a.ingest;
      const problems: string[] = [];
      if (i.freeze_seconds.length !== 1 || i.freeze_seconds[0] !== 3) problems.push(`freeze-seconds [${i.freeze_seconds.join(', ')}], expected exactly [3]`);
      if (i.dropped !== 0) problems.push(`${i.dropped} dropped, expected 0 (enough slots for the freeze)`);
      const s3 = i.per_second[3];
      return { facts: `freeze-seconds [${i.freeze_seconds.join(', ')}] (expected [3]); second 3: worst ${ms(s3?.max_us ?? null)}, ${s3?.over_50ms ?? 0}/${s3?.samples ?? 0} over 50 ms`, problems };
    },
  },
  {
    id: 3,
    name: 'capacity below the offered rate',
    // One request at a time, 5 ms each: 200 requests/s of capacity against 400 offered, 8 slots.
    behaviour: { serviceMs: 5, concurrency: 1 },
    load: { rate: RPS * 5, batch: 5, seconds: 4, maxInFlight: 8 },
    p99LimitMs: null,
    check({ analysis: a, gate, tally }) {
      const i = a.ingest;
      const problems: string[] = [];
      if (i.dropped === 0) problems.push('0 dropped, expected drops');
      if (i.sent + i.dropped !== i.offered) problems.push(`sent ${i.sent} + dropped ${i.dropped} != offered ${i.offered}`);
      if (tally.requests !== i.sent) problems.push(`the server received ${tally.requests} requests, the stream says ${i.sent} were sent`);
      if (!failedChecks(gate).includes('dropped')) problems.push(`the gate did not fail on drops (failed: ${failedChecks(gate).join(', ') || 'none'})`);
      return { facts: `${i.dropped} of ${i.offered} dropped, ${i.sent} sent = ${tally.requests} received; gate fails on: ${failedChecks(gate).join(', ')}`, problems };
    },
  },
  {
    id: 4,
    name: '1 % of requests answered 500',
    behaviour: { serviceMs: 2, failEvery: 100 },
    load: { rate: RPS * 5, batch: 5, seconds: 5, maxInFlight: 64 },
    p99LimitMs: null,
    check({ analysis: a, gate, tally }) {
      const i = a.ingest;
      const problems: string[] = [];
      const expected = Math.floor(tally.requests / 100);
      if (tally.answered500 !== expected) problems.push(`the server answered ${tally.answered500} 500s, expected ${expected}`);
      if (i.failed !== tally.answered500) problems.push(`${i.failed} failed in the stream, the server answered ${tally.answered500} 500s`);
      if (!failedChecks(gate).includes('failed')) problems.push('the gate did not fail on failures');
      if (checkOf(gate, 'rows')?.passed !== true || checkOf(gate, 'quantity')?.passed !== true) problems.push('reconciliation should hold (a 500 stores nothing and is not claimed)');
      return { facts: `${i.failed} failed = ${tally.answered500} answered 500 (1 in 100 of ${tally.requests}); gate fails on: ${failedChecks(gate).join(', ')}`, problems };
    },
  },
  {
    id: 5,
    name: 'one event in 1,000 acknowledged but not stored',
    behaviour: { serviceMs: 2, skipStoreEvery: 1000 },
    load: { rate: RPS * 10, batch: 10, seconds: 4, maxInFlight: 64 },
    p99LimitMs: null,
    check({ analysis: a, gate, tally }) {
      const i = a.ingest;
      const problems: string[] = [];
      const missingRows = i.events_claimed - tally.rows;
      const missingQty = i.quantity_claimed - tally.quantity;
      if (tally.skippedRows !== Math.floor(i.events_claimed / 1000) || tally.skippedRows === 0) {
        problems.push(`the server skipped ${tally.skippedRows} of ${i.events_claimed}, expected ${Math.floor(i.events_claimed / 1000)}`);
      }
      if (missingRows !== tally.skippedRows) problems.push(`missing rows ${missingRows}, the server skipped ${tally.skippedRows}`);
      if (missingQty !== tally.skippedQuantity) problems.push(`missing quantity ${missingQty}, the server skipped ${tally.skippedQuantity}`);
      const rows = checkOf(gate, 'rows');
      const qty = checkOf(gate, 'quantity');
      if (rows?.passed !== false || !rows.detail.includes(`missing ${tally.skippedRows}`)) problems.push(`rows check: ${rows?.detail}`);
      if (qty?.passed !== false || !qty.detail.includes(`missing ${tally.skippedQuantity}`)) problems.push(`quantity check: ${qty?.detail}`);
      return { facts: `missing ${missingRows} rows and ${missingQty} quantity (server skipped ${tally.skippedRows} / ${tally.skippedQuantity}); gate fails on: ${failedChecks(gate).join(', ')}`, problems };
    },
  },
  {
    id: 6,
    name: 'service time rising steadily',
    // 9 s at 400 requests/s: thirds of 1,200 samples, so drift's interval (lib/protocol/drift.ts) lies
    // wholly over x1.5 for the ramp's true x2.7; at 6 s x 300 (thirds of 600) the first third's upper
    // bound was its slowest request, and one connection set-up outlier left the case undecided.
    behaviour: { serviceRamp: { fromMs: 2, toMs: 40, overS: 9 } },
    load: { rate: 400 * 5, batch: 5, seconds: 9, maxInFlight: 128 },
    p99LimitMs: null,
    check({ analysis: a, gate }) {
      const d = a.ingest.drift;
      const problems: string[] = [];
      if (d.ratio === null || d.ratio <= 1.5) problems.push(`drift ${d.ratio === null ? '—' : `x${d.ratio.toFixed(2)}`}, expected over x1.5`);
      if (!failedChecks(gate).includes('drift')) problems.push('the gate did not fail on drift');
      return { facts: `drift x${d.ratio?.toFixed(2) ?? '—'} (first-third p99 ${ms(d.first_p99_us)}, last-third ${ms(d.last_p99_us)}); gate fails on: ${failedChecks(gate).join(', ')}`, problems };
    },
  },
  {
    id: 7,
    name: 'Poisson arrivals',
    // 100 requests/s for 6 s, mean gap 10 ms: ~600 gaps, so the KS test's critical D at 0.001 is ~0.08
    // against a constant schedule's ~0.63, while a 2-ms band (arrival-truth.ts) is a fifth of a gap.
    behaviour: { serviceMs: 2 },
    load: { rate: 100 * 5, batch: 5, seconds: 6, maxInFlight: 64, arrivals: { shape: 'poisson' } },
    p99LimitMs: null,
    check({ analysis: a, serverTruth, schedule }) {
      const i = a.ingest;
      const problems: string[] = [];
      if (!schedule || a.plan?.arrivals?.shape !== 'poisson') return { facts: 'no Poisson plan in the stream', problems: ['the stream does not carry its Poisson plan'] };
      const ks = serverGapTest(serverTruth, schedule, 100);
      if (!ks.passed) problems.push(`the gaps the server saw are not exponential: KS D ${ks.d_tolerant.toFixed(3)} (p ${ks.p_value.toExponential(1)} < ${ks.alpha})`);
      if (i.dropped !== 0 || i.failed !== 0) problems.push(`${i.dropped} dropped and ${i.failed} failed, expected 0`);
      if (i.delivery === null || i.delivery.short_seconds.length) problems.push(`delivery against the Poisson schedule: short seconds [${i.delivery?.short_seconds.join(', ') ?? '—'}]`);
      if (serverTruth.length !== schedule.count) problems.push(`the server saw ${serverTruth.length} requests, the schedule held ${schedule.count}`);
      return { facts: `${schedule.count} requests on a Poisson schedule (seed ${a.plan.arrivals.seed}); the server's gaps: KS D ${ks.d.toFixed(3)}, within a ${ks.tolerance_us / 1000}-ms band ${ks.d_tolerant.toFixed(3)}, p ${ks.p_value.toFixed(3)} (n ${ks.n})`, problems };
    },
  },
  {
    id: 8,
    name: 'a spike to 5x',
    // 100 requests/s, 500 from 2 s to 4 s, 6 s in all: 1,400 requests, the spike's two edges judged
    // where the server saw them.
    behaviour: { serviceMs: 2 },
    load: { rate: 100 * 5, batch: 5, seconds: 6, maxInFlight: 128, arrivals: { shape: 'spike', peak: 500 * 5, at: 2, for: 2 } },
    p99LimitMs: null,
    check({ analysis: a, serverTruth, schedule }) {
      const i = a.ingest;
      const problems: string[] = [];
      if (!schedule || a.plan?.arrivals?.shape !== 'spike') return { facts: 'no spike plan in the stream', problems: ['the stream does not carry its spike plan'] };
      const edges = serverEdges(serverTruth, schedule, [2e6, 4e6]);
      for (const e of edges) {
        if (!e.ok) problems.push(`the edge at ${e.edge_us / 1e6} s was seen ${(e.before_us / 1000).toFixed(2)} ms / ${(e.after_us / 1000).toFixed(2)} ms off (before / after), more than ${EDGE_TOLERANCE_US / 1000} ms`);
      }
      const phases = serverPhaseCounts(serverTruth, schedule, [
        [0, 2e6],
        [2e6, 4e6],
        [4e6, 6e6],
      ]);
      for (const p of phases) {
        // A request within a tick of an edge may be seen on its other side: a few, never a phase's share.
        if (Math.abs(p.seen - p.scheduled) > 5) problems.push(`the server saw ${p.seen} requests in [${p.from_us / 1e6}, ${p.to_us / 1e6}) s, the schedule put ${p.scheduled} there`);
      }
      if (i.dropped !== 0 || i.failed !== 0) problems.push(`${i.dropped} dropped and ${i.failed} failed, expected 0`);
      if (i.delivery === null || i.delivery.short_seconds.length) problems.push(`delivery against the spike's schedule: short seconds [${i.delivery?.short_seconds.join(', ') ?? '—'}]`);
      const fmt = (us: number) => `${(us / 1000).toFixed(2)} ms`;
      return {
        facts: `edges seen at ${edges.map((e) => `${e.edge_us / 1e6} s ${fmt(e.before_us)}/${fmt(e.after_us)}`).join(', ')} (before/after, within ${EDGE_TOLERANCE_US / 1000} ms); requests seen per phase ${phases.map((p) => `${p.seen}/${p.scheduled}`).join(', ')}`,
        problems,
      };
    },
  },
];

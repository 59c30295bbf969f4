// test-mode: unit
// The first-run step test (lib/protocol/step-alert.ts) and the history alert's rule
// (lib/protocol/history-alert-rule.ts) on seeded weekly histories whose truth is known: a 10 % p50
// step in 2 % noise after 20 stable runs alerts at its first slow run in at least 16 of 20 histories
// (the change point lands within 3 runs of it); 20 histories of 52 runs of pure noise in all nine
// figures of a typical history raise at most one false alert per 52 runs, with no floor to help; the
// floor silences a change below it (both kinds); a first-run alert confirmed later by its change point,
// or an acknowledged change, does not alert again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changePoints, type ChangePoint } from '../../lib/protocol/change-points';
import { alertedChanges, type AlertedChange, type HistoryAck, type PriorAlert } from '../../lib/protocol/history-alert-rule';
import { DEFAULT_FLOORS_PCT, floorsWith } from '../../lib/protocol/history-floors';
import { CEILING_FIGURES, CONFIGURATION_FIGURES, type FigureChangePoint, type HistorySeries } from '../../lib/protocol/history-series';
import { MIN_REFERENCE_RUNS, STEP_ALPHA, stepTest, withoutNoisyWeek } from '../../lib/protocol/step-alert';
import { studentTCdf, studentTQuantile } from '../../lib/protocol/student-t';
import { normal } from './change-point-series';

const median = (v: readonly number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};

/**
 * A weekly figure as a run records it: the median of its 3 repeats, each the run's level with a
 * run-wide shift (1.5 %: the host that week, a restart) and its own noise (2 %): the run's figure then
 * has about 2 % noise (√(1.5² + 0.45 · 2²)). `stepPct` from run `stepRun` (1-based) on.
 */
function weekly(seed: number, runs: number, opts: { stepRun?: number; stepPct?: number; base?: number; runPct?: number; repeatPct?: number; repeats?: number } = {}) {
  const z = normal(seed);
  const { stepRun = Infinity, stepPct = 0, base = 100, runPct = 1.5, repeatPct = 2, repeats = 3 } = opts;
  const reps = Array.from({ length: runs }, (_, i) => {
    const level = base * (1 + (i + 1 >= stepRun ? stepPct / 100 : 0));
    const shift = (runPct / 100) * z();
    return Array.from({ length: repeats }, () => level * (1 + shift + (repeatPct / 100) * z()));
  });
  return { reps, values: reps.map(median) };
}

test("Student's t: the CDF and quantiles agree with the tables", () => {
  // Tables: t(0.975; 4) = 2.7764, t(0.995; 10) = 3.1693, t(0.999; 19) = 3.5794, t(0.975; 1) = 12.706.
  for (const [p, nu, t] of [[0.975, 4, 2.7764], [0.995, 10, 3.1693], [0.999, 19, 3.5794], [0.975, 1, 12.706], [0.95, 1000, 1.6464]] as const) {
    assert.ok(Math.abs(studentTQuantile(p, nu) - t) < 5e-4, `t(${p}; ${nu}) = ${studentTQuantile(p, nu)}, the table says ${t}`);
    assert.ok(Math.abs(studentTCdf(t, nu) - p) < 1e-4);
  }
  assert.equal(studentTQuantile(0.5, 7), 0);
  assert.ok(Math.abs(studentTQuantile(0.025, 4) + 2.7764) < 5e-4);
});

test('a 10 % p50 step in 2 % noise after 20 stable runs: the first slow run alerts in at least 16 of 20 histories, and the change point lands within 3 runs of it', () => {
  let alerted = 0;
  const missed: number[] = [];
  for (let h = 1; h <= 20; h++) {
    const { reps, values } = weekly(4500 + h, 30, { stepRun: 21, stepPct: 10 });
    // The reference: the 20 stable runs (no change point before them, nothing alerted or acknowledged).
    const r = stepTest({ reference: values.slice(0, 20), value: values[20], repeats: reps[20], direction: 'higher-is-worse', floorPct: DEFAULT_FLOORS_PCT.p50_ms });
    assert.ok(r.tested && r.referenceRuns >= 19);
    if (r.alert) alerted++;
    else missed.push(h);
    // E-divisive over the 20 stable runs and 10 slow ones: the step at run 21 (index 20), within 3 runs.
    const cps = changePoints(values.map((value, i) => ({ value, run: `week-${i + 1}`, build: `b${i + 1}` })), 'higher-is-worse').filter((c) => c.verdict === 'worse');
    assert.ok(cps.length >= 1 && Math.abs(cps[0].index - 20) <= 3, `history ${h}: change points at ${cps.map((c) => c.index).join(', ') || 'none'}`);
  }
  assert.ok(alerted >= 16, `the first slow run alerted in ${alerted} of 20 histories (missed: ${missed.join(', ')})`);
  console.log(`a 10 % step in 2 % noise: the first slow run alerted in ${alerted} of 20 histories`);
});

/** Synthetic series as history-series.ts makes them: two configurations and the ceiling, no change points. */
function noiseHistories(seed: number, runs: number): HistorySeries[][] {
  const z = normal(seed);
  const figureNoise: Record<string, number> = { p50_ms: 2, p99_ms: 5, worst_10s_p99_ms: 8, wal_bytes_per_event: 1, ceiling_evps: 2, ceiling_share: 2 };
  const levels: Record<string, number> = { p50_ms: 2.5, p99_ms: 6, worst_10s_p99_ms: 9, wal_bytes_per_event: 670, ceiling_evps: 25000, ceiling_share: 0.47 };
  const names = ['a (200 ev/s, batch 1)', 'b (2000 ev/s, batch 10)'];
  const series: HistorySeries[] = [
    ...names.map((series) => ({ hardware: 'sim', target: 'local', series, figures: CONFIGURATION_FIGURES, rows: [], changePoints: [] })),
    { hardware: 'sim', target: 'local', series: 'ceiling', figures: CEILING_FIGURES, rows: [], changePoints: [] },
  ];
  const repeats = new Map<string, number[]>();
  const snapshots: HistorySeries[][] = [];
  for (let i = 0; i < runs; i++) {
    const campaignId = `run-${String(i + 1).padStart(2, '0')}`;
    const base = { campaignId, started: `2026-01-${String(i + 1).padStart(2, '0')}`, status: 'held', build: `b${i + 1}`, host: 'h' };
    for (const s of series) {
      const figures: Record<string, number | null> = {};
      for (const f of s.figures) {
        if (f.key === 'pass_share') {
          figures[f.key] = 1;
          continue;
        }
        const sd = figureNoise[f.key] / 100;
        if (s.series === 'ceiling') {
          figures[f.key] = levels[f.key] * (1 + sd * z());
          continue;
        }
        // The run's figure is the median of its three repeats (run-wide shift and each repeat's own noise).
        const shift = 0.75 * sd * z();
        const reps = [0, 1, 2].map(() => levels[f.key] * (1 + shift + sd * z()));
        repeats.set(`${campaignId}|${s.series}|${f.key}`, reps);
        figures[f.key] = median(reps);
      }
      s.rows.push({ ...base, ...(s.series !== 'ceiling' ? { passes: '3/3' } : {}), figures });
    }
    snapshots.push(series.map((s) => ({ ...s, rows: [...s.rows] })));
  }
  (snapshots as unknown as { repeats: typeof repeats }).repeats = repeats;
  return snapshots;
}

/** The rule run run by run over one history, as the report step does (each run's alerts kept for the next). */
function alertsOver(snapshots: HistorySeries[][], floorsPct: Record<string, number | null>): AlertedChange[] {
  const repeats = (snapshots as unknown as { repeats: Map<string, number[]> }).repeats;
  const prior: PriorAlert[] = [];
  const all: AlertedChange[] = [];
  for (let i = 1; i < snapshots.length; i++) {
    const campaignId = snapshots[i][0].rows[i].campaignId;
    const { changes } = alertedChanges({ series: snapshots[i], before: snapshots[i - 1], campaignId, repeatsOf: (s, f) => repeats.get(`${campaignId}|${s}|${f}`) ?? null, prior, acks: [], floorsPct });
    prior.push(...changes);
    all.push(...changes);
  }
  return all;
}

test('pure noise, all nine figures (2 configurations x p50, p99, worst 10-s p99, WAL per event, and the ceiling): at most one false alert per 52 runs, with no floor to help', () => {
  const noFloors = Object.fromEntries(Object.keys(DEFAULT_FLOORS_PCT).map((k) => [k, null]));
  let bare = 0;
  let floored = 0;
  const HISTORIES = 20;
  const RUNS = 52;
  for (let h = 0; h < HISTORIES; h++) {
    const snapshots = noiseHistories(7700 + h, RUNS);
    const a = alertsOver(snapshots, noFloors);
    assert.ok(a.every((c) => c.kind === 'first-run' && c.figure !== 'pass_share' && c.figure !== 'ceiling_share'), JSON.stringify(a));
    bare += a.length;
    floored += alertsOver(snapshots, floorsWith({})).length;
  }
  // The budget: 1 per 52 runs = HISTORIES alerts over HISTORIES x 52 runs. Expected from α = 0.001:
  // 9 figures x (52 - 5 tested runs) x 20 x 0.001 ≈ 8.5.
  assert.ok(bare <= HISTORIES, `${bare} false alerts over ${HISTORIES} x ${RUNS} runs of noise without floors (budget ${HISTORIES})`);
  assert.ok(floored <= bare, `floors only silence: ${floored} with them, ${bare} without`);
  console.log(`pure noise: ${bare} false first-run alerts over ${HISTORIES * RUNS} runs x 9 figures without floors (${((bare / (HISTORIES * RUNS)) * 52).toFixed(2)} per 52 runs), ${floored} with the default floors`);
});

test('the step test: too short a reference is no test; the floor, the repeats and the direction each can silence it; a noisy week is set aside', () => {
  const flat = weekly(31, 21, { runPct: 0.3, repeatPct: 0.4 });
  const ref = flat.values.slice(0, 20);
  // Under MIN_REFERENCE_RUNS reference runs: not tested at all.
  assert.equal(stepTest({ reference: ref.slice(0, MIN_REFERENCE_RUNS - 1), value: 200, direction: 'higher-is-worse', floorPct: 5 }).tested, false);
  // +4 % in 0.5 % noise: far beyond the bound, but under p50's 5 % floor: no alert; a 3 % floor alerts.
  const up4 = stepTest({ reference: ref, value: 104, repeats: [103.8, 104, 104.3], direction: 'higher-is-worse', floorPct: 5 });
  assert.deepEqual([up4.beyondBound, up4.reachesFloor, up4.alert], [true, false, false]);
  assert.equal(stepTest({ reference: ref, value: 104, repeats: [103.8, 104, 104.3], direction: 'higher-is-worse', floorPct: 3 }).alert, true);
  // The repeats disagree: the median is up 10 %, one repeat sits at the old level.
  const split = stepTest({ reference: ref, value: 110, repeats: [99.5, 110, 111], direction: 'higher-is-worse', floorPct: 5 });
  assert.deepEqual([split.beyondBound, split.repeatsAgree, split.alert], [true, false, false]);
  // A higher ceiling is better: +10 % is no alert, -10 % is.
  assert.equal(stepTest({ reference: ref, value: 110, direction: 'higher-is-better', floorPct: 5 }).alert, false);
  assert.equal(stepTest({ reference: ref, value: 90, direction: 'higher-is-better', floorPct: 5 }).alert, true);
  // One noisy week (+50 %) in the reference is set aside, so a 10 % step still shows; without setting it aside it would not.
  const noisy = [...ref];
  noisy[7] *= 1.5;
  const kept = withoutNoisyWeek(noisy);
  assert.equal(kept.setAside, 7);
  const r = stepTest({ reference: noisy, value: 110, direction: 'higher-is-worse', floorPct: 5 });
  assert.deepEqual([r.setAside, r.referenceRuns, r.alert], [7, 19, true]);
  const mean = noisy.reduce((a, b) => a + b, 0) / noisy.length;
  const sd = Math.sqrt(noisy.reduce((a, b) => a + (b - mean) ** 2, 0) / (noisy.length - 1));
  assert.ok(110 < mean + studentTQuantile(1 - STEP_ALPHA, noisy.length - 1) * sd * Math.sqrt(1 + 1 / noisy.length), 'the noisy week kept in would hide the step');
});

/** One series with p50 only, for the rule's cases. */
function p50Series(values: number[], changePoints: FigureChangePoint[] = []): HistorySeries {
  return {
    hardware: 'sim',
    target: 'local',
    series: 'only (200 ev/s, batch 1)',
    figures: CONFIGURATION_FIGURES.filter((f) => f.key === 'p50_ms'),
    rows: values.map((v, i) => ({ campaignId: `run-${i + 1}`, started: String(i), status: 'held', build: `b${i + 1}`, host: 'h', figures: { p50_ms: v } })),
    changePoints,
  };
}
function changeAt(row: number, shiftPct: number): FigureChangePoint {
  const c: ChangePoint = { index: row, run: `run-${row + 1}`, build: `b${row + 1}`, previousRun: `run-${row}`, previousBuild: `b${row}`, medianBefore: 100, medianAfter: 100 + shiftPct, shift: { shift: shiftPct, interval: [shiftPct / 2, shiftPct * 1.5], confidence: 0.95, m: row, n: 10 }, shiftPct, verdict: 'worse', pValue: 0.002, qhat: 1 };
  return { ...c, figure: 'p50_ms', row };
}

test('the rule: a change point new with this run alerts however late, once; not when an earlier run alerted it (first-run at k, found at k +- 3), nor when acknowledged, nor below its floor', () => {
  const values = [...weekly(41, 20, { runPct: 0.3, repeatPct: 0.4 }).values, ...weekly(42, 12, { base: 108, runPct: 0.3, repeatPct: 0.4 }).values];
  const n = values.length;
  const now = p50Series(values, [changeAt(20, 8)]);
  const before = p50Series(values.slice(0, -1));
  const run = (prior: PriorAlert[], acks: HistoryAck[] = [], floors = DEFAULT_FLOORS_PCT) => alertedChanges({ series: [now], before: [before], campaignId: `run-${n}`, prior, acks, floorsPct: floors }).changes;
  // Found 11 runs after it began (row 20 of 32): it alerts, naming the run where it began.
  const late = run([]);
  assert.deepEqual(late.map((c) => [c.kind, c.run, c.build, c.previousBuild]), [['change-point', 'run-21', 'b21', 'b20']]);
  // The first-run test alerted at run 21 (or within 3 runs of it): the change point is that change.
  for (const k of [18, 21, 24]) assert.deepEqual(run([{ series: now.series, figure: 'p50_ms', run: `run-${k}` }]), [], `alerted at run ${k}`);
  assert.equal(run([{ series: now.series, figure: 'p50_ms', run: 'run-25' }]).length, 1, 'an alert 4 runs away is another change');
  assert.equal(run([{ series: 'other', figure: 'p50_ms', run: 'run-21' }]).length, 1, 'another series');
  // Acknowledged (the series named, or every series): no alert.
  const ack = (series: string | null): HistoryAck => ({ run: 'run-22', figure: 'p50_ms', series, by: 'me', at: '2026-12-07T00:00:00Z', reason: 'intended' });
  assert.deepEqual(run([], [ack(now.series)]), []);
  assert.deepEqual(run([], [ack(null)]), []);
  assert.equal(run([], [{ ...ack(null), figure: 'p99_ms' }]).length, 1, 'an ack of another figure');
  // Under the floor: an 8 % change with a 10 % floor never alerts.
  assert.deepEqual(run([], [], { ...DEFAULT_FLOORS_PCT, p50_ms: 10 }), []);
  // Already in the history up to the run before (within one run): not new.
  assert.deepEqual(alertedChanges({ series: [now], before: [{ ...before, changePoints: [changeAt(21, 8)] }], campaignId: `run-${n}`, prior: [], acks: [], floorsPct: DEFAULT_FLOORS_PCT }).changes, []);
});

test('the rule: the first-run reference starts after the last change point, alert or ack, and needs 5 runs', () => {
  const values = [...weekly(51, 20, { runPct: 0.3, repeatPct: 0.4 }).values, 112];
  const now = p50Series(values);
  const before = p50Series(values.slice(0, -1));
  const steps = (prior: PriorAlert[], acks: HistoryAck[] = [], b = before) => alertedChanges({ series: [now], before: [b], campaignId: 'run-21', prior, acks, floorsPct: DEFAULT_FLOORS_PCT });
  const plain = steps([]);
  assert.deepEqual(plain.changes.map((c) => [c.kind, c.run, c.previousBuild]), [['first-run', 'run-21', 'b20']]);
  // A failed week just before (no figure): the build before is the newest run with one.
  const gap = p50Series(values);
  gap.rows[19] = { ...gap.rows[19], figures: { p50_ms: null } };
  const afterGap = alertedChanges({ series: [gap], before: [p50Series(values.slice(0, -1))], campaignId: 'run-21', prior: [], acks: [], floorsPct: DEFAULT_FLOORS_PCT });
  assert.deepEqual(afterGap.changes.map((c) => [c.run, c.previousBuild]), [['run-21', 'b19']]);
  assert.equal(plain.steps[0].referenceFrom, 0);
  // An alert at run 17: the reference is runs 17-20, four: no test.
  const afterAlert = steps([{ series: now.series, figure: 'p50_ms', run: 'run-17' }]);
  assert.deepEqual([afterAlert.changes.length, afterAlert.steps[0].referenceFrom, afterAlert.steps[0].tested], [0, 16, false]);
  // An ack at run 16: runs 16-20, five: tested, and the step still shows.
  const afterAck = steps([], [{ run: 'run-16', figure: 'p50_ms', series: null, by: 'me', at: 'x', reason: null }]);
  assert.deepEqual([afterAck.changes.length, afterAck.steps[0].referenceFrom, afterAck.steps[0].referenceRuns], [1, 15, 5]);
  // A change point found before this run at run 12: the reference starts there.
  assert.equal(steps([], [], { ...before, changePoints: [changeAt(11, 1)] }).steps[0].referenceFrom, 11);
});

// test-mode: unit
// Per-window gates (issue 35, item 4): "p99 under X in every N-s window" beside drift over the whole
// run. On a synthetic constant stream whose truth is known (100 requests/s for 60 s, 2 ms except 80 ms
// in seconds 30-34): windows of 20 s have p99 2, 80 and 2 ms; a limit of 50 ms fails the middle one by
// name while the whole run's p99 would not show it; without windowSeconds nothing changes; a long
// soak's failing windows are named at most NAMED_WINDOWS at a time (its verdict stays small); the spec
// refuses a window longer than the repeat and a window limit without windows; the page lists them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { windowsTable, workloadModel } from '../../lib/evidence/report/workload';
import { analyzeSamples } from '../../lib/protocol/analysis';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { SampleColumns, type SampleRow } from '../../lib/protocol/sample-row';
import type { StreamPlan } from '../../lib/protocol/stream-plan';
import { perWindowP99 } from '../../lib/protocol/window-figures';
import { NAMED_WINDOWS, judgeWindows } from '../../lib/protocol/window-gates';
import { groupBySecond } from '../../lib/protocol/buckets';
import { INGEST } from '../../lib/protocol/sample-row';
import { workloadProblems } from '../../lib/protocol/workload-spec';

const plan: StreamPlan = { mode: 'open', rate: 100, batch: 1, seconds: 60, probe_rate: 0, run_tag: 't', cut_short: false, cut_reason: null, source: 'stream' };

function stream(slow: (s: number) => boolean, seconds = 60): SampleColumns {
  const rows: SampleRow[] = [];
  for (let k = 0; k < seconds * 100; k++) {
    const t = Math.floor((k * 1e6) / 100);
    const lat = slow(Math.floor(t / 1e6)) ? 80_000 : 2000;
    rows.push({ scenario: 'ingest', intended_us: t, sent_us: t + 50, done_us: t + 50 + lat, status: 201, events: 1, quantity: 5 });
  }
  return SampleColumns.fromRows(rows);
}
const judge = (cols: SampleColumns, o: { windowSeconds?: number; windowP99LimitMs?: number }, p = plan) => {
  const a = analyzeSamples(cols, { plan: p, ...(o.windowSeconds ? { windowSeconds: o.windowSeconds } : {}) });
  return { a, ...evaluateRun(a, { p99LimitMs: 100, windowP99LimitMs: o.windowP99LimitMs, reconciliation: { rows_written: a.ingest.events_claimed, quantity_gained: a.ingest.quantity_claimed } }) };
};
const bad = (s: number) => s >= 30 && s < 35;

test('each window\'s p99: [kN, (k+1)N) seconds, a short last one marked partial', () => {
  const g = groupBySecond(stream(bad), INGEST, 60);
  assert.deepEqual(perWindowP99(g, 20).map((w) => [w.from_s, w.to_s, w.samples, w.p99_us, w.partial]), [
    [0, 20, 2000, 2000, false],
    [20, 40, 2000, 80_000, false],
    [40, 60, 2000, 2000, false],
  ]);
  assert.deepEqual(perWindowP99(g, 25).map((w) => [w.from_s, w.to_s, w.partial]), [[0, 25, false], [25, 50, false], [50, 60, true]]);
});

test('a window over its limit fails the verdict, named, though the whole run\'s p99 holds; drift stays over the whole run', () => {
  const { verdict, report } = judge(stream(bad), { windowSeconds: 20, windowP99LimitMs: 50 });
  assert.equal(report.p99_ms! <= 100, true, 'the whole run holds its 100-ms limit');
  const w = verdict.ingest.checks.find((c) => c.name === 'windows')!;
  assert.equal(w.passed, false);
  assert.ok(verdict.reasons.includes('windows: 1 of 3 windows of 20 s over p99 50 ms: 20-40 s p99 80 ms'), verdict.reasons.join('; '));
  assert.ok(verdict.ingest.checks.some((c) => c.name === 'drift'), 'drift is still judged, over the whole run');
  assert.deepEqual(report.windows_p99?.map((x) => x.p99_us), [2000, 80_000, 2000]);
  // Without windowP99LimitMs the configuration's p99 limit holds every window.
  const loose = judge(stream(bad), { windowSeconds: 20 });
  assert.equal(loose.verdict.ingest.checks.find((c) => c.name === 'windows')?.passed, true);
  assert.match(loose.verdict.ingest.checks.find((c) => c.name === 'windows')!.detail, /^every one of 3 windows of 20 s p99 <= 100 ms \(worst 20-40 s p99 80 ms\)$/);
});

test('without windowSeconds: no windows in the analysis, the verdict and the report as before', () => {
  const { a, verdict, report } = judge(stream(bad), {});
  assert.equal('per_window' in a.ingest, false);
  assert.equal('windows_p99' in report, false);
  assert.equal(verdict.ingest.checks.some((c) => c.name === 'windows'), false);
  assert.equal(workloadModel(report, 100, undefined), null, 'a constant repeat without windows has no workload on the page');
});

test('a long soak: many failing windows are named at most NAMED_WINDOWS at a time, with how many more', () => {
  const g = groupBySecond(stream((s) => s % 20 < 2, 600), INGEST, 600);
  const ws = perWindowP99(g, 20);
  const j = judgeWindows(ws, 50);
  assert.equal(j.over.length, 30);
  assert.equal((j.detail.match(/ p99 80 ms/g) ?? []).length, NAMED_WINDOWS);
  assert.match(j.detail, /^30 of 30 windows of 20 s over p99 50 ms: 0-20 s p99 80 ms; .* and 25 more$/);
  assert.ok(j.detail.length < 300, j.detail);
});

test('the spec: a window longer than the repeat, or a window limit without windows, is refused naming the field', () => {
  const c = (w: object) => ({ eventsPerSecond: 100, batch: 1, workload: { arrivals: { shape: 'constant' as const }, ...w } });
  assert.deepEqual(workloadProblems(c({ windowSeconds: 600 }), 300), [
    { message: "a window of 600 s is longer than the repeat's 300 s (sustained.repeatSeconds): shorten the window or lengthen the repeat", path: ['workload', 'windowSeconds'] },
  ]);
  assert.deepEqual(workloadProblems(c({ windowP99LimitMs: 50 }), 300).map((p) => p.path.join('.')), ['workload.windowP99LimitMs']);
  assert.deepEqual(workloadProblems(c({ windowSeconds: 60, windowP99LimitMs: 50 }), 300), []);
});

test('the page: each window\'s p99 beside its limit, the one over marked', () => {
  const { report } = judge(stream(bad), { windowSeconds: 20, windowP99LimitMs: 50 });
  const w = workloadModel(report, 100, { arrivals: { shape: 'constant' }, windowSeconds: 20, windowP99LimitMs: 50 })!;
  assert.deepEqual(windowsTable(w)!.rows.map((r) => [r.cells.join(' | '), r.cls ?? '']), [
    ['0-20 s | 2000 | 2.0 ms | 50.0 ms | within', ''],
    ['20-40 s | 2000 | 80.0 ms | 50.0 ms | over', 'failed'],
    ['40-60 s | 2000 | 2.0 ms | 50.0 ms | within', ''],
  ]);
});

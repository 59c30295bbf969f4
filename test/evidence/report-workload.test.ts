// test-mode: unit
// A shaped repeat on the page (issue 35): its phases with their p99 beside their limits, a spike's
// recovery beside its limit, and the chart's data: offered, delivered and p99 per second on one time
// axis with the phases marked and the recovery where it came. On a synthetic spike whose truth is
// known (100 requests/s, 500 from 20 s to 30 s, 60 s; 2 ms before, 50 ms during, 30 ms for 15 s after,
// then 2 ms): recovered 15 s after the spike's end. A repeat without arrivals has no workload at all.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RepeatSeries } from '../../lib/evidence/report/model-types';
import { workloadModel, workloadTable, recoveryText } from '../../lib/evidence/report/workload';
import { workloadChartData, workloadOption } from '../../lib/evidence/report/workload-chart';
import { analyzeSamples } from '../../lib/protocol/analysis';
import { arrivalSchedule, type Arrivals } from '../../lib/protocol/arrivals';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { SampleColumns, type SampleRow } from '../../lib/protocol/sample-row';
import type { StreamPlan } from '../../lib/protocol/stream-plan';

const spike: Arrivals = { shape: 'spike', peak: 500, at: 20, for: 10 };
const plan: StreamPlan = { mode: 'open', rate: 100, batch: 1, seconds: 60, probe_rate: 0, run_tag: 't', cut_short: false, cut_reason: null, source: 'stream', arrivals: spike };

function judged(p: StreamPlan, slowS: number) {
  const s = arrivalSchedule({ rate: 100, batch: 1, seconds: 60, arrivals: p.arrivals ?? null });
  const rows: SampleRow[] = [];
  for (let k = 0; k < s.count; k++) {
    const t = s.at(k);
    const sec = t / 1e6;
    const lat = sec < 20 || !p.arrivals ? 2000 : sec < 30 ? 50_000 : sec < 30 + slowS ? 30_000 : 2000;
    rows.push({ scenario: 'ingest', intended_us: t, sent_us: t + 50, done_us: t + 50 + lat, status: 201, events: 1, quantity: 5 });
  }
  const a = analyzeSamples(SampleColumns.fromRows(rows), { plan: p });
  return { a, report: evaluateRun(a, { p99LimitMs: 40, phaseP99LimitMs: { during: 60 }, recoveryLimitS: 10, reconciliation: { rows_written: a.ingest.events_claimed, quantity_gained: a.ingest.quantity_claimed } }).report };
}

const seriesOf = (a: ReturnType<typeof analyzeSamples>): RepeatSeries => {
  const ps = a.ingest.per_second;
  return {
    t_s: ps.map((b) => b.start_s),
    p50_ms: ps.map((b) => (b.p50_us === null ? null : b.p50_us / 1000)),
    p99_ms: ps.map((b) => (b.p99_us === null ? null : b.p99_us / 1000)),
    co_p99_ms: ps.map(() => null),
    offered_rps: ps.map((b) => b.offered),
    planned_rps: null,
    delivered_rps: ps.map((b) => b.ok),
    dropped: ps.map((b) => b.dropped),
    freeze_seconds: [],
    windows: [],
  };
};

test('a spike\'s workload on the page: each phase\'s p99 beside its limit, the recovery time beside its limit', () => {
  const { report } = judged(plan, 15);
  const w = workloadModel(report, 40, { arrivals: { shape: 'spike', peak: 500, at: 20, for: 10 }, phaseP99LimitMs: { during: 60 }, recoveryLimitSeconds: 10 })!;
  assert.equal(w.arrivals, 'spike 100 -> 500 ev/s at 20 s for 10 s');
  assert.deepEqual(
    w.phases.map((p) => [p.name, p.from_s, p.to_s, p.samples, p.p99_ms, p.limit_ms, p.passed]),
    [
      ['before', 0, 20, 2000, 2, 40, true],
      ['during', 20, 30, 5000, 50, 60, true],
      ['after', 30, 60, 3000, 30, 40, true],
    ],
  );
  assert.deepEqual(w.recovery, { from_s: 30, before_p99_ms: 2, recovered_after_s: 15, limit_s: 10, passed: false, window_s: 10, factor: 1.2 });
  assert.equal(recoveryText(w.recovery!), '15 s after the spike (limit 10 s): over');
  assert.deepEqual(workloadTable(w)!.rows.map((r) => r.cells.join(' | ')), [
    'before | 0-20 s | 2000 | 2.0 ms | 40.0 ms | within',
    'during | 20-30 s | 5000 | 50.0 ms | 60.0 ms | within',
    'after | 30-60 s | 3000 | 30.0 ms | 40.0 ms | within',
    'recovery | from 30 s | — | 10-s p99 back within x1.2 of 2.0 ms: after 15 s | 10 s | over',
  ]);
});

test('the chart\'s data: offered, delivered and p99 per second on one axis, the phases marked with their p99, the recovery at its second', () => {
  const { a, report } = judged(plan, 15);
  const w = workloadModel(report, 40, undefined)!;
  const s = seriesOf(a);
  const d = workloadChartData(s, w);
  assert.equal(d.t_s.length, 60);
  assert.deepEqual([d.offered_rps[19], d.offered_rps[20], d.offered_rps[29], d.offered_rps[30]], [100, 500, 500, 100], 'the spike in the offered rate');
  assert.deepEqual(d.delivered_rps, d.offered_rps, 'every request answered 2xx');
  assert.deepEqual([d.p99_ms[19], d.p99_ms[20], d.p99_ms[44], d.p99_ms[45]], [2, 50, 30, 2]);
  assert.deepEqual(d.phases, [
    { name: 'before', from_s: 0, to_s: 20, label: 'before: p99 2.0 ms' },
    { name: 'during', from_s: 20, to_s: 30, label: 'during: p99 50.0 ms' },
    { name: 'after', from_s: 30, to_s: 60, label: 'after: p99 30.0 ms' },
  ]);
  assert.equal(d.recovered_at_s, 45);
  assert.equal(d.recovery_label, 'recovered after 15 s');
  // The option draws exactly that: the rates on the left axis, p99 on the right, phases as areas, recovery as a line.
  const o = workloadOption('spike r1-a1', d, w.arrivals) as { series: Array<{ name: string; yAxisIndex?: number; data: unknown[]; markArea?: { data: unknown[] }; markLine?: { data: Array<{ xAxis: number }> } }> };
  assert.deepEqual(o.series.map((x) => [x.name, x.yAxisIndex ?? 0, x.data.length]), [['offered', 0, 60], ['delivered (2xx)', 0, 60], ['p99', 1, 60]]);
  assert.equal(o.series[0].markArea!.data.length, 3);
  assert.deepEqual(o.series[2].markLine!.data.map((x) => x.xAxis), [45]);
  // A service that never recovers: no line, and the label says so.
  const never = workloadChartData(s, workloadModel(judged(plan, 35).report, 40, undefined)!);
  assert.deepEqual([never.recovered_at_s, never.recovery_label], [null, 'not recovered within the repeat']);
});

test('a repeat without arrivals in its plan has no workload: its page is today\'s', () => {
  const { report } = judged({ ...plan, arrivals: undefined }, 0);
  assert.equal(workloadModel(report, 40, undefined), null);
});

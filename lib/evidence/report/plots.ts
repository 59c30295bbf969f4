// The page's charts as ECharts option objects (plain JSON: no functions), built from the model. The
// HTML embeds ECharts itself and these options, so the page draws them offline. Pure and
// deterministic: the same model gives the same options, key for key.
//
// Per repeat:
//   workload    a shaped repeat's (issue 35) offered, delivered and p99 on one time axis, phases marked
//               (./workload-chart.ts); absent without arrivals
//   latency     per-second p50 and p99 (ms); windows shaded; freeze-seconds marked as points
//   throughput  offered vs delivered requests per second, drops as bars
//   waits       backends per wait event over time, stacked (DB sampler)
//   wal         WAL MB/s and records/s over time (DB sampler)
// DB charts exist only when the repeat has DB samples ("not sampled" otherwise, said in the page).
//
// Per ladder (above the runs, beside its table), one point per rung by offered rate:
//   ladder-throughput  delivered against offered (the dashed line is delivered = offered)
//   ladder-latency     p50 and p99 (log scale: a knee is orders of magnitude)
// Rungs that did not hold are drawn and marked (red diamonds), and the first of them by a line.
//
// The spec's history (issue 36: history-alert.json), between At a glance and the runs: each figure of
// each series across the runs, with its change points and the builds (./history-chart.ts).
import type { DbSummary } from './db-summary';
import { drawnFigures, historyOption } from './history-chart';
import { laddersShown } from './ladder';
import { workloadChartData, workloadOption } from './workload-chart';
import type { LadderModel, LadderRung, RepeatModel, RepeatSeries, ReportModel } from './model-types';
export type ChartKind = 'workload' | 'latency' | 'throughput' | 'waits' | 'wal' | 'ladder-throughput' | 'ladder-latency' | 'history';

export interface Chart {
  /** DOM id of its container: chart-<n>, in page order. */
  id: string;
  kind: ChartKind;
  /** The repeat it belongs to ("batched r2-a1", "ceiling"), or "ladder". */
  owner: string;
  option: Record<string, unknown>;
}

const GRID = { left: 56, right: 56, top: 44, bottom: 36 };
const pairs = (t: number[], v: Array<number | null>) => t.map((x, i) => [x, v[i]]);

function base(title: string, yName: string, maxX: number | null): Record<string, unknown> {
  return {
    animation: false,
    title: { text: title, left: 0, top: 0, textStyle: { fontSize: 13, fontWeight: 'normal' } },
    tooltip: { trigger: 'axis' },
    grid: GRID,
    xAxis: { type: 'value', name: 's', min: 0, ...(maxX !== null ? { max: maxX } : {}) },
    yAxis: { type: 'value', name: yName },
  };
}

export function latencyOption(owner: string, s: RepeatSeries): Record<string, unknown> {
  const p99At = new Map(s.t_s.map((t, i) => [t, s.p99_ms[i]]));
  return {
    ...base(`${owner}: latency per second`, 'ms', s.t_s.length),
    legend: { top: 0, right: 0, data: ['p50', 'p99', 'corrected p99', 'freeze-second', 'window'] },
    series: [
      { name: 'p50', type: 'line', showSymbol: false, lineStyle: { width: 1 }, data: pairs(s.t_s, s.p50_ms) },
      // done - intended: a load host that stalled sends late and gets fast answers; only this line shows it
      { name: 'corrected p99', type: 'line', showSymbol: false, lineStyle: { width: 1, type: 'dotted' }, data: pairs(s.t_s, s.co_p99_ms) },
      {
        name: 'p99',
        type: 'line',
        showSymbol: false,
        lineStyle: { width: 1 },
        data: pairs(s.t_s, s.p99_ms),
        markArea: { silent: true, itemStyle: { color: 'rgba(214, 39, 40, 0.15)' }, data: s.windows.map(([a, b]) => [{ xAxis: a, name: 'window' }, { xAxis: b }]) },
      },
      { name: 'freeze-second', type: 'scatter', symbol: 'diamond', symbolSize: 9, itemStyle: { color: '#d62728' }, data: s.freeze_seconds.map((t) => [t, p99At.get(t) ?? null]) },
      // An empty series carries the "window" legend entry for the shaded areas.
      { name: 'window', type: 'line', data: [], itemStyle: { color: 'rgba(214, 39, 40, 0.35)' } },
    ],
  };
}

export function throughputOption(owner: string, s: RepeatSeries): Record<string, unknown> {
  return {
    ...base(`${owner}: offered vs delivered`, 'requests/s', s.t_s.length),
    legend: { top: 0, right: 0, data: [...(s.planned_rps ? ['planned'] : []), 'offered', 'delivered (2xx)', 'dropped'] },
    series: [
      // The plan's schedule: a second the stream left out is offered nothing, and only this line shows what it should have been.
      ...(s.planned_rps ? [{ name: 'planned', type: 'line', showSymbol: false, step: 'end', lineStyle: { width: 1, type: 'dotted' }, data: pairs(s.t_s, s.planned_rps) }] : []),
      { name: 'offered', type: 'line', showSymbol: false, step: 'end', lineStyle: { width: 1, type: 'dashed' }, data: pairs(s.t_s, s.offered_rps) },
      { name: 'delivered (2xx)', type: 'line', showSymbol: false, step: 'end', lineStyle: { width: 1 }, data: pairs(s.t_s, s.delivered_rps) },
      { name: 'dropped', type: 'bar', itemStyle: { color: '#d62728' }, data: pairs(s.t_s, s.dropped) },
    ],
  };
}

export function waitsOption(owner: string, db: DbSummary, maxX: number | null): Record<string, unknown> {
  return {
    ...base(`${owner}: what requests waited on (active client backends of the service, stacked)`, 'backends', maxX),
    legend: { top: 0, right: 0, type: 'scroll', width: '55%' },
    series: db.series.waits.map((w) => ({
      name: w.event,
      type: 'line',
      stack: 'waits',
      areaStyle: {},
      showSymbol: false,
      lineStyle: { width: 0.5 },
      data: pairs(db.series.t_s, w.values),
    })),
  };
}

export function walOption(owner: string, db: DbSummary, maxX: number | null): Record<string, unknown> {
  const o = base(`${owner}: WAL rate`, 'MB/s', maxX);
  return {
    ...o,
    yAxis: [
      { type: 'value', name: 'MB/s' },
      { type: 'value', name: 'records/s', splitLine: { show: false } },
    ],
    legend: { top: 0, right: 0, data: ['WAL MB/s', 'WAL records/s'] },
    series: [
      { name: 'WAL MB/s', type: 'line', showSymbol: true, symbolSize: 3, data: db.series.wal_mb_per_s },
      { name: 'WAL records/s', type: 'line', yAxisIndex: 1, showSymbol: false, lineStyle: { width: 1, type: 'dotted' }, data: db.series.wal_records_per_s },
    ],
  };
}

const RED = '#d62728';

function ladderBase(title: string, yName: string, yType: 'value' | 'log'): Record<string, unknown> {
  return {
    animation: false,
    title: { text: title, left: 0, top: 0, textStyle: { fontSize: 13, fontWeight: 'normal' } },
    tooltip: { trigger: 'item' },
    grid: GRID,
    xAxis: { type: 'value', name: 'ev/s offered', min: 0 },
    yAxis: { type: yType, name: yName },
  };
}

/** The knee as a vertical line at its offered rate (none without a knee). */
function kneeLine(l: LadderModel): Record<string, unknown> {
  if (!l.knee) return {};
  return { markLine: { silent: true, symbol: 'none', lineStyle: { color: RED, type: 'dotted' }, label: { formatter: `first that did not hold: ${l.knee.rung}` }, data: [{ xAxis: l.knee.offered_evps }] } };
}

const failedPoints = (rungs: LadderRung[], y: (r: LadderRung) => number | null) =>
  rungs.filter((r) => r.status === 'did-not-hold' && y(r) !== null).map((r) => [r.offered_evps, y(r)]);

export function ladderThroughputOption(l: LadderModel, title = 'ladder'): Record<string, unknown> {
  const ran = l.rungs.filter((r) => r.delivered_evps);
  const delivered = (r: LadderRung) => r.delivered_evps?.median ?? null;
  return {
    ...ladderBase(`${title}: offered vs delivered per rung`, 'ev/s delivered', 'value'),
    legend: { top: 0, right: 0, data: ['offered', 'delivered', 'did not hold'] },
    series: [
      { name: 'offered', type: 'line', showSymbol: false, lineStyle: { width: 1, type: 'dashed' }, data: l.rungs.map((r) => [r.offered_evps, r.offered_evps]) },
      { name: 'delivered', type: 'line', symbolSize: 6, data: ran.map((r) => [r.offered_evps, delivered(r)]), ...kneeLine(l) },
      { name: 'did not hold', type: 'scatter', symbol: 'diamond', symbolSize: 12, itemStyle: { color: RED }, data: failedPoints(l.rungs, delivered) },
    ],
  };
}

export function ladderLatencyOption(l: LadderModel, title = 'ladder'): Record<string, unknown> {
  const p50 = (r: LadderRung) => r.p50_ms?.median ?? null;
  const p99 = (r: LadderRung) => r.p99_ms?.median ?? null;
  return {
    ...ladderBase(`${title}: p50 and p99 per rung`, 'ms', 'log'),
    legend: { top: 0, right: 0, data: ['p50', 'p99', 'did not hold'] },
    series: [
      { name: 'p50', type: 'line', symbolSize: 6, data: l.rungs.filter((r) => p50(r) !== null).map((r) => [r.offered_evps, p50(r)]) },
      { name: 'p99', type: 'line', symbolSize: 6, data: l.rungs.filter((r) => p99(r) !== null).map((r) => [r.offered_evps, p99(r)]), ...kneeLine(l) },
      { name: 'did not hold', type: 'scatter', symbol: 'diamond', symbolSize: 12, itemStyle: { color: RED }, data: failedPoints(l.rungs, p99) },
    ],
  };
}

/** The charts of one repeat (or of the ceiling), ids assigned by the caller's counter. */
export function repeatCharts(r: RepeatModel, owner: string, next: () => string): Chart[] {
  const out: Chart[] = [];
  if (!r.series) return out;
  const maxX = r.series.t_s.length;
  // A shaped repeat's first chart: offered, delivered and p99 on one time axis, its phases marked.
  if (r.workload) out.push({ id: next(), kind: 'workload', owner, option: workloadOption(owner, workloadChartData(r.series, r.workload), r.workload.arrivals) });
  out.push({ id: next(), kind: 'latency', owner, option: latencyOption(owner, r.series) });
  out.push({ id: next(), kind: 'throughput', owner, option: throughputOption(owner, r.series) });
  if (r.db && r.db.series.waits.length) out.push({ id: next(), kind: 'waits', owner, option: waitsOption(owner, r.db, maxX) });
  if (r.db && r.db.series.wal_mb_per_s.length) out.push({ id: next(), kind: 'wal', owner, option: walOption(owner, r.db, maxX) });
  return out;
}

/** Every chart of the page, in page order, keyed by the repeat they belong to. */
export function pageCharts(m: ReportModel): Map<string, Chart[]> {
  let n = 0;
  const next = () => `chart-${n++}`;
  const out = new Map<string, Chart[]>();
  // The ladder's charts stand in At a glance, above every repeat's.
  for (const { key, variant, ladder } of laddersShown(m)) {
    out.set(key, [
      { id: next(), kind: 'ladder-throughput', owner: key, option: ladderThroughputOption(ladder, variant === null ? 'ladder' : `ladder of ${variant}`) },
      { id: next(), kind: 'ladder-latency', owner: key, option: ladderLatencyOption(ladder, variant === null ? 'ladder' : `ladder of ${variant}`) },
    ]);
  }
  // The history's, under the key 'history' (its section stands before the runs).
  const history = (m.history?.series ?? []).flatMap((hs) => drawnFigures(hs).map((f): Chart => ({ id: next(), kind: 'history', owner: `${hs.series}: ${f.key}`, option: historyOption(hs, f, m.campaign.id) })));
  if (history.length) out.set('history', history);
  for (const c of m.configurations) for (const r of c.repeats) if (r.series) out.set(r.id, repeatCharts(r, r.id, next));
  const last = m.ceiling?.attempts[m.ceiling.attempts.length - 1];
  if (last?.series) out.set('ceiling', repeatCharts(last, 'ceiling', next));
  return out;
}

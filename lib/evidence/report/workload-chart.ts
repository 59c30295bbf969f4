// A shaped repeat's chart (issue 35, item 3): the offered rate, the delivered rate and the p99, per
// second on one time axis, with the workload's phases marked (a spike's before, during and after, each
// labelled with its p99) and where the service recovered after a spike. The data is a pure function of
// the repeat's series and its workload model (workloadChartData, unit-tested), the option an ECharts
// one like the page's others (./plots.ts, ./history-chart.ts).
import type { RepeatSeries } from './model-types';
import { ms } from './cells';
import type { WorkloadModel } from './workload';

export interface WorkloadChartData {
  t_s: number[];
  /** Requests per second whose intended time fell in the second (sent or dropped). */
  offered_rps: number[];
  /** Requests answered 2xx per second. */
  delivered_rps: number[];
  p99_ms: Array<number | null>;
  /** Each phase's span and its label ("during: p99 48.1 ms"). */
  phases: Array<{ name: string; from_s: number; to_s: number; label: string }>;
  /** The second the service was back within the factor after a spike (the spike's end + its recovery); null: none or never. */
  recovered_at_s: number | null;
  /** The recovery in words, for the line's label (or the note that it never came). */
  recovery_label: string | null;
}

export function workloadChartData(s: RepeatSeries, w: WorkloadModel): WorkloadChartData {
  const r = w.recovery;
  return {
    t_s: s.t_s,
    offered_rps: s.offered_rps,
    delivered_rps: s.delivered_rps,
    p99_ms: s.p99_ms,
    phases: w.phases.map((p) => ({ name: p.name, from_s: p.from_s, to_s: p.to_s, label: `${p.name}: p99 ${ms(p.p99_ms)}` })),
    recovered_at_s: r && r.recovered_after_s !== null ? r.from_s + r.recovered_after_s : null,
    recovery_label: r ? (r.recovered_after_s === null ? 'not recovered within the repeat' : `recovered after ${r.recovered_after_s} s`) : null,
  };
}

const PHASE_COLOURS: Record<string, string> = { before: 'rgba(44, 160, 44, 0.08)', during: 'rgba(214, 39, 40, 0.12)', after: 'rgba(31, 119, 180, 0.08)', ramp: 'rgba(255, 127, 14, 0.1)' };
const pairs = (t: number[], v: Array<number | null>) => t.map((x, i) => [x, v[i]]);

export function workloadOption(owner: string, d: WorkloadChartData, arrivals: string): Record<string, unknown> {
  const recovered = d.recovered_at_s !== null ? [{ xAxis: d.recovered_at_s, name: d.recovery_label, label: { formatter: d.recovery_label ?? '', position: 'insideEndTop' } }] : [];
  return {
    animation: false,
    title: { text: `${owner}: offered, delivered and p99 per second (${arrivals})`, left: 0, top: 0, textStyle: { fontSize: 13, fontWeight: 'normal' } },
    tooltip: { trigger: 'axis' },
    grid: { left: 56, right: 56, top: 44, bottom: 36 },
    legend: { top: 18, right: 0, data: ['offered', 'delivered (2xx)', 'p99'] },
    xAxis: { type: 'value', name: 's', min: 0, max: d.t_s.length },
    yAxis: [
      { type: 'value', name: 'requests/s' },
      { type: 'value', name: 'p99 ms', splitLine: { show: false } },
    ],
    series: [
      {
        name: 'offered',
        type: 'line',
        showSymbol: false,
        step: 'end',
        lineStyle: { width: 1, type: 'dashed' },
        data: pairs(d.t_s, d.offered_rps),
        // The phases, shaded and labelled with their p99.
        markArea: { silent: true, data: d.phases.map((p) => [{ xAxis: p.from_s, name: p.label, itemStyle: { color: PHASE_COLOURS[p.name] ?? 'rgba(0,0,0,0.05)' }, label: { position: 'insideTop', fontSize: 10 } }, { xAxis: p.to_s }]) },
      },
      { name: 'delivered (2xx)', type: 'line', showSymbol: false, step: 'end', lineStyle: { width: 1 }, data: pairs(d.t_s, d.delivered_rps) },
      {
        name: 'p99',
        type: 'line',
        yAxisIndex: 1,
        showSymbol: false,
        lineStyle: { width: 1, color: '#d62728' },
        itemStyle: { color: '#d62728' },
        data: pairs(d.t_s, d.p99_ms),
        markLine: { silent: true, symbol: 'none', lineStyle: { color: '#2ca02c', type: 'solid', width: 2 }, data: recovered },
      },
    ],
  };
}

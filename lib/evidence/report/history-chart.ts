// The page's history (issue 36): each figure of the spec's series across its runs, as the report step
// read it (history-alert.json), drawn with its change points and the builds, so that a reader sees
// when a figure moved and which build did it. ECharts options like the page's other charts (./plots.ts),
// and the change points as a table for the Markdown page. Pure and deterministic.
//
// One chart per series and figure that has two values or more: the runs along x, oldest first, each
// labelled with its build (and a tick where the build changes); the figure's values as points on a
// line (a run without a value, a failed week, is a gap); each change point a vertical line at its run,
// labelled with the builds either side, the shift and its p-value, red when worse and green when
// better; this run marked.
import type { FigureChangePoint, HistoryFigure, HistorySeries } from '../../protocol/history-series';
import type { HistoryAlert } from '../history-alert';
import type { Table } from './tables';

const WORSE = '#d62728';
const BETTER = '#2ca02c';

const num = (v: number | null | undefined, digits = 2) => (v === null || v === undefined ? '-' : Number(v.toFixed(digits)).toString());

/** The figures of a series the page draws: those with two values or more. */
export function drawnFigures(s: HistorySeries): HistoryFigure[] {
  return s.figures.filter((f) => s.rows.filter((r) => typeof r.figures[f.key] === 'number').length >= 2);
}

/** A run's label on the x axis: its place and its build (the build is what a reader looks for). */
export function runLabel(s: HistorySeries, i: number): string {
  return `${i + 1}: ${s.rows[i].build ?? 'build unknown'}`;
}

/** A change point in words: `svc-1 -> svc-2 +41.2 %, p = 0.008`. */
export function changeLabel(c: FigureChangePoint): string {
  const pct = c.shiftPct === null ? '' : ` ${c.shiftPct >= 0 ? '+' : ''}${num(c.shiftPct, 1)} %`;
  return `${c.previousBuild ?? '?'} -> ${c.build ?? '?'}${pct}, p = ${num(c.pValue, 3)}`;
}

export function historyOption(s: HistorySeries, f: HistoryFigure, ownRun: string): Record<string, unknown> {
  const labels = s.rows.map((_, i) => runLabel(s, i));
  const own = s.rows.findIndex((r) => r.campaignId === ownRun);
  const changes = s.changePoints.filter((c) => c.figure === f.key);
  const unit = f.unit ? ` (${f.unit})` : '';
  return {
    animation: false,
    title: { text: `${s.series}: ${f.label} across ${s.rows.length} runs`, left: 0, top: 0, textStyle: { fontSize: 13, fontWeight: 'normal' } },
    tooltip: { trigger: 'axis' },
    grid: { left: 56, right: 24, top: 44, bottom: 96 },
    legend: { top: 0, right: 0, data: [f.label, 'this run'] },
    xAxis: { type: 'category', data: labels, axisLabel: { rotate: 45, fontSize: 10 } },
    yAxis: { type: 'value', name: `${f.label}${unit}`, scale: true },
    series: [
      {
        name: f.label,
        type: 'line',
        showSymbol: true,
        symbolSize: 5,
        connectNulls: false,
        lineStyle: { width: 1 },
        data: s.rows.map((r) => r.figures[f.key] ?? null),
        markLine: {
          silent: true,
          symbol: 'none',
          data: changes.map((c) => ({
            xAxis: labels[c.row],
            name: 'change point',
            lineStyle: { color: c.verdict === 'worse' ? WORSE : BETTER, type: 'solid', width: 2 },
            label: { formatter: changeLabel(c), position: 'insideEndTop', color: c.verdict === 'worse' ? WORSE : BETTER },
          })),
        },
      },
      { name: 'this run', type: 'scatter', symbol: 'diamond', symbolSize: 10, itemStyle: { color: '#1f77b4' }, data: own >= 0 ? [[labels[own], s.rows[own].figures[f.key] ?? null]] : [] },
    ],
  };
}

/** The change points of the history, one row each, for both pages. Null when there is no history. */
export function historyTable(h: HistoryAlert): Table | null {
  if (!h.series?.length) return null;
  const alerted = new Set(h.changes.map((c) => `${c.series}|${c.figure}|${c.run}`));
  const rows = h.series.flatMap((s) =>
    s.changePoints.map((c) => {
      const f = s.figures.find((x) => x.key === c.figure);
      const unit = f?.unit ? ` ${f.unit}` : '';
      const interval = c.shift.interval ? ` [${num(c.shift.interval[0], 3)}, ${num(c.shift.interval[1], 3)}]` : '';
      return {
        cells: [
          s.series,
          f?.label ?? c.figure,
          `${s.rows.findIndex((r) => r.campaignId === c.run) + 1}: ${c.run}`,
          `${c.previousBuild ?? 'unknown'} -> ${c.build ?? 'unknown'}`,
          `${num(c.medianBefore, 3)} -> ${num(c.medianAfter, 3)}${unit} (shift ${num(c.shift.shift, 3)}${unit}${interval})`,
          c.verdict,
          num(c.pValue, 3),
          alerted.has(`${s.series}|${c.figure}|${c.run}`) ? 'yes: new with this run' : 'no',
        ],
        ...(c.verdict === 'worse' ? { cls: 'failed' } : {}),
      };
    }),
  );
  return { header: ['series', 'figure', 'at run', 'builds', 'median before -> after', 'verdict', 'p', 'alerted'], rows };
}

/** One line above the charts: what was read and what it found. */
export function historyText(h: HistoryAlert): string {
  const n = h.series?.reduce((k, s) => k + s.changePoints.length, 0) ?? 0;
  return `${h.summary}. ${n ? `${n} change point(s) over the whole history, in the table below` : 'No change point over the whole history'}; each chart marks them at their run, with the builds either side.`;
}

// Which changes in a run's history alert (issue 36 part 4, issue 45 items 3 and 4): pure, series in
// (./history-series.ts, up to this run and up to the run before), the earlier runs' alerts and the
// acknowledgements in, the changes that set RigRegressed out. lib/evidence/history-alert.ts reads all
// of it from the evidence folders, so the rule works from the folders alone, without Temporal.
//
// Two kinds, each alerting once per change:
//   - first-run: the newest run beyond the noise of its reference runs, the wrong way, by at least the
//     figure's floor (./step-alert.ts). The reference of a figure starts at the latest of the last
//     change point found before this run, the last alerted change and the last acknowledged one.
//   - change-point: a change point (E-divisive, ./change-points.ts) new with this run (the history up
//     to the run before had none within one run of it), worse by the figure's direction, at least its
//     floor, that no earlier run alerted (an alert of the same series and figure within
//     SAME_CHANGE_RUNS runs of it: the first-run alert of the same step, or the change point alerted
//     where it was found and since moved by a run or two), and that nobody acknowledged (an ack within
//     SAME_CHANGE_RUNS runs). However late it is found: the newest-8-runs window is gone, so a change
//     found 9 or more runs after it began still alerts, once, naming the run where it began.
import { reachesFloor } from './history-floors';
import type { FigureChangePoint, HistorySeries } from './history-series';
import { STEP_FIGURES, stepTest, type StepResult } from './step-alert';

/** An alert and a change, or an ack and a change, this many runs apart are the same change. */
export const SAME_CHANGE_RUNS = 3;

/** A change that alerts. */
export interface AlertedChange {
  /** first-run: this run's step test; change-point: E-divisive's. Absent in alerts written before issue 45 (change points). */
  kind?: 'first-run' | 'change-point';
  series: string;
  figure: string;
  /** The run where the change began (the first run after it). */
  run: string;
  build: string | null;
  previousBuild: string | null;
  shiftPct: number | null;
  /** The change point's p-value; null for a first-run alert. */
  pValue: number | null;
  /** first-run: the bound the run was beyond, and how many reference runs it came from. */
  bound?: number;
  referenceRuns?: number;
}

/** What an earlier run alerted, as its history-alert.json has it. */
export interface PriorAlert {
  series: string;
  figure: string;
  run: string;
}

/** A change someone accepted (`rig history ack`): it stops alerting. */
export interface HistoryAck {
  /** The run the change began at (the campaign id). */
  run: string;
  figure: string;
  /** The series; null: every series of the run that has the figure. */
  series: string | null;
  by: string;
  at: string;
  reason: string | null;
}

export interface AlertInput {
  /** The series up to this run (this run last in each of its series). */
  series: readonly HistorySeries[];
  /** The series up to the run before. */
  before: readonly HistorySeries[];
  campaignId: string;
  /** This run's per-repeat figures of a series, when it holds them (null: none). */
  repeatsOf?: (series: string, figure: string) => readonly number[] | null;
  prior: readonly PriorAlert[];
  acks: readonly HistoryAck[];
  floorsPct: Readonly<Record<string, number | null>>;
}

export interface StepReading extends StepResult {
  series: string;
  figure: string;
  /** The row the reference started at. */
  referenceFrom: number;
}

/** The rows (of series s) of the prior alerts and acks for one figure. */
function rowsOf(s: HistorySeries, figure: string, items: ReadonlyArray<{ series: string | null; figure: string; run: string }>): number[] {
  return items
    .filter((a) => a.figure === figure && (a.series === null || a.series === s.series))
    .map((a) => s.rows.findIndex((r) => r.campaignId === a.run))
    .filter((i) => i >= 0);
}

/** The changes that alert, and each first-run test's reading (for the reader: what it was held to). */
export function alertedChanges(input: AlertInput): { changes: AlertedChange[]; steps: StepReading[] } {
  const changes: AlertedChange[] = [];
  const steps: StepReading[] = [];
  for (const s of input.series) {
    const last = s.rows.length - 1;
    if (s.rows[last]?.campaignId !== input.campaignId) continue;
    const before = input.before.find((p) => p.series === s.series);
    // The change points of the history up to the run before, as rows of this series.
    const known: FigureChangePoint[] = (before?.changePoints ?? []).map((c) => ({ ...c, row: s.rows.findIndex((r) => r.campaignId === c.run) })).filter((c) => c.row >= 0);
    for (const f of s.figures) {
      const floor = input.floorsPct[f.key] ?? null;
      const alerted = rowsOf(s, f.key, input.prior);
      const acked = rowsOf(s, f.key, input.acks);
      const own = s.rows[last].figures[f.key];
      // First run: against the runs since the latest change point, alert or ack of this figure.
      if (STEP_FIGURES.includes(f.key) && typeof own === 'number' && Number.isFinite(own)) {
        const from = Math.max(0, ...known.filter((c) => c.figure === f.key).map((c) => c.row), ...alerted, ...acked);
        const reference = s.rows
          .slice(from, last)
          .map((r) => r.figures[f.key])
          .filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
        const r = stepTest({ reference, value: own, repeats: input.repeatsOf?.(s.series, f.key) ?? null, direction: f.direction, floorPct: floor });
        steps.push({ ...r, series: s.series, figure: f.key, referenceFrom: from });
        if (r.alert) {
          // The build before: the newest earlier run with this figure (a failed week has none), as a change point names it.
          const previous = s.rows.slice(0, last).filter((row) => typeof row.figures[f.key] === 'number' && Number.isFinite(row.figures[f.key])).pop();
          changes.push({ kind: 'first-run', series: s.series, figure: f.key, run: s.rows[last].campaignId, build: s.rows[last].build, previousBuild: previous?.build ?? null, shiftPct: r.shiftPct, pValue: null, bound: r.bound, referenceRuns: r.referenceRuns });
        }
      }
      const near = (rows: number[], row: number) => rows.some((a) => Math.abs(a - row) <= SAME_CHANGE_RUNS);
      const alertedNow = changes.filter((c) => c.series === s.series && c.figure === f.key).map(() => last);
      for (const c of s.changePoints) {
        if (c.figure !== f.key || c.verdict !== 'worse') continue;
        if (known.some((k) => k.figure === c.figure && Math.abs(k.row - c.row) <= 1)) continue;
        if (!reachesFloor(c.shiftPct, floor)) continue;
        if (near(alerted, c.row) || near(acked, c.row) || near(alertedNow, c.row)) continue;
        changes.push({ kind: 'change-point', series: s.series, figure: c.figure, run: c.run, build: c.build, previousBuild: c.previousBuild, shiftPct: c.shiftPct, pValue: c.pValue });
      }
    }
  }
  return { changes, steps };
}

/** One change in words, for the summary and the campaign log. */
export function changeWords(c: AlertedChange): string {
  const pct = c.shiftPct === null ? '' : `, ${c.shiftPct >= 0 ? '+' : ''}${c.shiftPct.toFixed(1)} %`;
  const how = c.kind === 'first-run' ? `first run beyond the noise bound ${Number(c.bound!.toPrecision(4))} of ${c.referenceRuns} reference runs` : `change point, p = ${(c.pValue ?? NaN).toFixed(3)}`;
  return `${c.series} ${c.figure} worse at ${c.run} (build ${c.build ?? 'unknown'}, after ${c.previousBuild ?? 'unknown'}${pct}, ${how})`;
}

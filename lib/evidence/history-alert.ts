// The report step's alert from a run's history (issue 36 part 4): does a change point at or just
// before this run move a figure the wrong way? Read from the folders of the same spec's earlier runs
// in this results folder (lib/evidence/history.ts: nothing later than this run, on this run's
// hardware), with the change points of lib/protocol/change-points.ts.
//
// Which change points alert: the ones this run's history has and the history up to the run before
// did not (same figure, within one run), that moved the figure the wrong way (beyond the tolerance),
// and that lie among the newest ALERT_WINDOW runs. New, because a change point is found some runs
// after it happened: a step in the newest run alone never is one, since a permutation test cannot tell
// one high week from an outlier (that is what makes it robust to one); on ranks a 10 % step among 2 % noise
// is found four or five runs after it (fewer runs after it can be a passing noisy spell). So a step alerts once,
// on the run where the history first shows it, naming the run and the builds where it happened; the
// pairwise comparison with the baseline judges the first week meanwhile. A slow slide alerts the
// same way, when enough of it has accumulated to be a change point.
import fs from 'node:fs';
import path from 'node:path';
import { findHistoryRuns, readHistoryRun } from './history';
import { historySeries, type HistorySeries } from '../protocol/history-series';

/** Change points among the newest this-many runs alert (when new). */
export const ALERT_WINDOW = 8;
/** Fewer runs than this on one hardware are no history to read. */
export const MIN_HISTORY_RUNS = 6;
/** The newest runs read (the change-point search is O(n²) per permutation). */
export const MAX_HISTORY_RUNS = 60;

export interface AlertedChange {
  series: string;
  figure: string;
  run: string;
  build: string | null;
  previousBuild: string | null;
  shiftPct: number | null;
  pValue: number;
}

export interface HistoryAlert {
  /** Runs of the spec on this run's hardware read, this one included. */
  runs: number;
  regressed: boolean;
  /** The change points that alert (new with this run, worse, beyond the tolerance, among the newest ALERT_WINDOW runs). */
  changes: AlertedChange[];
  /** The whole judgement in a line, for the campaign log. */
  summary: string;
  /**
   * The series it was read from (this run's hardware, up to this run), with their change points: what
   * the page plots, so a reader sees when a figure moved and which build did it. Absent in alerts
   * written before the page drew them.
   */
  series?: HistorySeries[];
}

/** The alert for the campaign in `dir`; null when it has no result yet or too short a history. */
export function historyAlert(dir: string, opts: { tolerancePct?: number } = {}): HistoryAlert | null {
  const own = readHistoryRun(dir);
  if (!own) return null;
  const name = (readHistoryRunName(dir) ?? '').trim();
  if (!name) return null;
  const tolerance = opts.tolerancePct ?? 0;
  const { runs } = findHistoryRuns(path.dirname(dir), name);
  const earlier = runs
    .filter((r) => r.hardware === own.hardware && r.target === own.target && r.started <= own.started)
    .sort((a, b) => a.started.localeCompare(b.started))
    .slice(-MAX_HISTORY_RUNS);
  if (earlier.length < MIN_HISTORY_RUNS) return null;
  const changes: AlertedChange[] = [];
  const before = historySeries(earlier.slice(0, -1));
  const series = historySeries(earlier);
  for (const s of series) {
    if (s.rows[s.rows.length - 1]?.campaignId !== own.campaignId) continue;
    const known = before.find((p) => p.series === s.series)?.changePoints ?? [];
    for (const c of s.changePoints) {
      if (c.row < s.rows.length - ALERT_WINDOW || c.verdict !== 'worse') continue;
      if (c.shiftPct !== null && Math.abs(c.shiftPct) <= tolerance) continue;
      if (known.some((k) => k.figure === c.figure && Math.abs(k.row - c.row) <= 1)) continue;
      changes.push({ series: s.series, figure: c.figure, run: c.run, build: c.build, previousBuild: c.previousBuild, shiftPct: c.shiftPct, pValue: c.pValue });
    }
  }
  const words = changes.map((c) => `${c.series} ${c.figure} worse at ${c.run} (build ${c.build ?? 'unknown'}, after ${c.previousBuild ?? 'unknown'}${c.shiftPct === null ? '' : `, ${c.shiftPct >= 0 ? '+' : ''}${c.shiftPct.toFixed(1)} %`}, p = ${c.pValue.toFixed(3)})`);
  return {
    runs: earlier.length,
    regressed: changes.length > 0,
    changes,
    summary: changes.length
      ? `history of ${earlier.length} runs: a new change point among the newest ${ALERT_WINDOW} runs: ${words.join('; ')}`
      : `history of ${earlier.length} runs: no new change point among the newest ${ALERT_WINDOW} runs moved a figure the wrong way`,
    series: series.filter((s) => s.rows[s.rows.length - 1]?.campaignId === own.campaignId),
  };
}

function readHistoryRunName(dir: string): string | null {
  try {
    return (JSON.parse(fs.readFileSync(path.join(dir, 'result.json'), 'utf8')) as { name?: string }).name ?? null;
  } catch {
    return null;
  }
}

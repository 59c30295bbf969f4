// The report step's alert from a run's history (issue 36 part 4, issue 45 items 3 and 4): does this
// run, or a change point its history now shows, move a figure the wrong way? Read from the folders of
// the same spec's earlier runs in this results folder (lib/evidence/history.ts: nothing later than
// this run, on this run's hardware), so it works from the folders alone, without Temporal.
//
// The rule is lib/protocol/history-alert-rule.ts (pure): a first-run step test (the newest run beyond
// the noise of its reference runs, lib/protocol/step-alert.ts), and the change points
// (lib/protocol/change-points.ts) new with this run, however late they are found; each change alerts
// once. What it reads here: the series up to this run and up to the run before, this run's per-repeat
// figures, what the earlier runs alerted (their history-alert.json), the acknowledged changes (each
// run's history-acks.json, `rig history ack`) and the figures' floors (this run's spec.json
// `history.floors` over lib/protocol/history-floors.ts's defaults).
import fs from 'node:fs';
import path from 'node:path';
import { findHistoryRuns, readHistoryRun } from './history';
import { readHistoryAcks } from './history-acks';
import { HISTORY_ALERT_FILE, SPEC_FILE } from './layout';
import { alertedChanges, changeWords, type AlertedChange, type HistoryAck, type PriorAlert } from '../protocol/history-alert-rule';
import { floorsWith } from '../protocol/history-floors';
import { configurationSeries, historySeries, type HistorySeries } from '../protocol/history-series';

export type { AlertedChange } from '../protocol/history-alert-rule';

/** Fewer runs than this on one hardware are no history to read. */
export const MIN_HISTORY_RUNS = 6;
/** The newest runs read (the change-point search is O(n²) per permutation). */
export const MAX_HISTORY_RUNS = 60;

export interface HistoryAlert {
  /** Runs of the spec on this run's hardware read, this one included. */
  runs: number;
  regressed: boolean;
  /** The changes that alert: first-run steps and change points new with this run, each once, worse, at least its floor, not acknowledged. */
  changes: AlertedChange[];
  /** The whole judgement in a line, for the campaign log. */
  summary: string;
  /** The floors it held each figure to (percent; null: none). Absent in alerts written before issue 45. */
  floors_pct?: Record<string, number | null>;
  /** The acknowledged changes it read. Absent in alerts written before issue 45. */
  acks?: HistoryAck[];
  /**
   * The series it was read from (this hardware, up to this run), with their change points: what
   * the page plots, so a reader sees when a figure moved and which build did it. Absent in alerts
   * written before the page drew them.
   */
  series?: HistorySeries[];
}

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

/** The floors a run's spec asks (its spec.json `history.floors` over the defaults). */
export function floorsOfRun(dir: string): Record<string, number | null> {
  return floorsWith(readJson<{ history?: { floors?: Record<string, number | null> } }>(path.join(dir, SPEC_FILE))?.history?.floors);
}

/** The alert for the campaign in `dir`; null when it has no result yet or too short a history. */
export function historyAlert(dir: string, opts: { floorsPct?: Record<string, number | null> } = {}): HistoryAlert | null {
  const own = readHistoryRun(dir);
  if (!own) return null;
  const name = (readJson<{ name?: string }>(path.join(dir, 'result.json'))?.name ?? '').trim();
  if (!name) return null;
  const floors = { ...floorsOfRun(dir), ...(opts.floorsPct ?? {}) };
  const { runs } = findHistoryRuns(path.dirname(dir), name);
  const earlier = runs
    .filter((r) => r.hardware === own.hardware && r.target === own.target && r.started <= own.started)
    .sort((a, b) => a.started.localeCompare(b.started))
    .slice(-MAX_HISTORY_RUNS);
  if (earlier.length < MIN_HISTORY_RUNS) return null;
  // What the earlier runs alerted (read from their own history-alert.json: the evidence, not Temporal).
  const prior: PriorAlert[] = earlier
    .filter((r) => r.campaignId !== own.campaignId && r.dir)
    .flatMap((r) => readJson<{ changes?: PriorAlert[] }>(path.join(r.dir!, HISTORY_ALERT_FILE))?.changes ?? [])
    .filter((c) => typeof c?.series === 'string' && typeof c.figure === 'string' && typeof c.run === 'string');
  const acks = earlier.flatMap((r) => (r.dir ? readHistoryAcks(r.dir).map((a) => ({ ...a, run: r.campaignId })) : []));
  const before = historySeries(earlier.slice(0, -1));
  const series = historySeries(earlier);
  const repeatsOf = (s: string, figure: string) => {
    const c = own.configurations.find((x) => configurationSeries(x) === s);
    return (c?.repeats as Record<string, number[]> | undefined)?.[figure] ?? null;
  };
  const { changes } = alertedChanges({ series, before, campaignId: own.campaignId, repeatsOf, prior, acks, floorsPct: floors });
  return {
    runs: earlier.length,
    regressed: changes.length > 0,
    changes,
    summary: changes.length
      ? `history of ${earlier.length} runs: a new change point or first-run step moved a figure the wrong way: ${changes.map(changeWords).join('; ')}`
      : `history of ${earlier.length} runs: no new change moved a figure the wrong way beyond its floor (first-run step test and change points)`,
    floors_pct: floors,
    acks,
    series: series.filter((s) => s.rows[s.rows.length - 1]?.campaignId === own.campaignId),
  };
}

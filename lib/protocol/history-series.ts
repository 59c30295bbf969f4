// A spec's or a schedule's runs read as time series (issue 36): per hardware and configuration, each
// figure across the runs, with the change points lib/protocol/change-points.ts finds in it. Pure:
// runs in (as lib/evidence/history.ts reads them from the evidence folders), series out.
//
// Runs on other hardware are other series, never one: a change of machine is not a regression. A
// configuration is its name with its rate and batch, so a spec that changed a configuration's rate
// starts a new series rather than reading the new rate as a step.
import { changePoints, type ChangePoint, type DetectOptions, type Direction } from './change-points';

/** One configuration's figures in one run: medians over its passing repeats, as the page's At a glance. */
export interface RunConfiguration {
  name: string;
  eventsPerSecond: number;
  batch: number;
  passed: number;
  total: number;
  p50_ms: number | null;
  p99_ms: number | null;
  worst_10s_p99_ms: number | null;
  /** WAL bytes per event (pg_stat_wal over the reconciled rows), median over passing repeats with DB samples. */
  wal_bytes_per_event: number | null;
  /** Each passing repeat's figures, of which the four above are the medians (absent: not read). */
  repeats?: Record<'p50_ms' | 'p99_ms' | 'worst_10s_p99_ms' | 'wal_bytes_per_event', number[]>;
}

/** One run (campaign) of a spec or schedule. */
export interface HistoryRun {
  campaignId: string;
  /** Its evidence folder, when read from one. */
  dir?: string;
  /** ISO time of its first step. */
  started: string;
  status: string;
  target: string;
  /**
   * The build measured: the build the service named itself (its /healthz `build`), else for the
   * reference service the worker's build id (visibility, or rig.json's for an unversioned worker),
   * else rig.json's words (an image, a command).
   */
  build: string | null;
  /** The worker build id that ran the campaign (Temporal visibility, else rig.json), when known; `build` is buildLabel of these. */
  rigBuild: string | null;
  /** The words rig.json gives for the service under test. */
  serviceBuild: string | null;
  /** The build the service reported of itself at bring-up (service.json), when it did. */
  reportedBuild?: string | null;
  /** The host whose data worker ran the load (load.json). */
  host: string | null;
  /** rig.json's hardware line: runs on other hardware are other series. */
  hardware: string | null;
  /** The closed-loop ceiling (ev/s) when valid, and its share of the database's floor of the same batch. */
  ceiling_evps: number | null;
  ceiling_share: number | null;
  configurations: RunConfiguration[];
}

export interface HistoryFigure {
  key: string;
  label: string;
  unit: string;
  direction: Direction;
}

/** The figures of a configuration's series, in table order. */
export const CONFIGURATION_FIGURES: readonly HistoryFigure[] = [
  { key: 'p50_ms', label: 'p50', unit: 'ms', direction: 'higher-is-worse' },
  { key: 'p99_ms', label: 'p99', unit: 'ms', direction: 'higher-is-worse' },
  { key: 'worst_10s_p99_ms', label: 'worst 10-s p99', unit: 'ms', direction: 'higher-is-worse' },
  { key: 'pass_share', label: 'passes', unit: '', direction: 'higher-is-better' },
  { key: 'wal_bytes_per_event', label: 'WAL per event', unit: 'B', direction: 'higher-is-worse' },
];
/** The figures of the campaign's ceiling series. */
export const CEILING_FIGURES: readonly HistoryFigure[] = [
  { key: 'ceiling_evps', label: 'ceiling', unit: 'ev/s', direction: 'higher-is-better' },
  { key: 'ceiling_share', label: "ceiling's share of the denominator", unit: '', direction: 'higher-is-better' },
];

export interface SeriesRow {
  campaignId: string;
  started: string;
  status: string;
  build: string | null;
  host: string | null;
  /** passed/total, for a configuration's series. */
  passes?: string;
  figures: Record<string, number | null>;
}

export interface FigureChangePoint extends ChangePoint {
  figure: string;
  /** The change point's run as an index into the series' rows (its `index` counts the runs with a value). */
  row: number;
}

export interface HistorySeries {
  hardware: string | null;
  target: string;
  /** `<name> (<rate> ev/s, batch <b>)`, or `ceiling` for the campaign's ceiling. */
  series: string;
  figures: readonly HistoryFigure[];
  rows: SeriesRow[];
  changePoints: FigureChangePoint[];
}

export interface SeriesOptions extends DetectOptions {
  /** Keep the rows from the first run of this build on, and the change points after it. */
  since?: string;
}

/** A configuration's series name: its name with its rate and batch (a changed rate is a new series). */
export function configurationSeries(c: Pick<RunConfiguration, 'name' | 'eventsPerSecond' | 'batch'>): string {
  return `${c.name} (${c.eventsPerSecond} ev/s, batch ${c.batch})`;
}

/** Whether a run's build label names BUILD (a commit prefix, an image tag: any part of it). */
export function namesBuild(label: string | null, build: string): boolean {
  return label !== null && build !== '' && label.includes(build);
}

/**
 * The build label of a run: the build the service named itself, when it did; else the worker's build
 * id for the reference service (whose code is the worker's); else the service's words (and the worker's).
 */
export function buildLabel(serviceBuild: string | null, rigBuild: string | null, reportedBuild: string | null = null): string | null {
  const reference = serviceBuild === null || serviceBuild.startsWith('the reference service');
  if (reference) return reportedBuild ?? rigBuild ?? serviceBuild;
  const own = reportedBuild ? `${serviceBuild}, build ${reportedBuild}` : serviceBuild;
  return rigBuild ? `${own} (rig ${rigBuild})` : own;
}

/** The runs whose build names BUILD (a commit prefix, an image tag), in order. */
export function runsOfBuild(runs: readonly HistoryRun[], build: string): HistoryRun[] {
  return runs.filter((r) => namesBuild(r.build, build));
}

function figuresOf(c: RunConfiguration): Record<string, number | null> {
  return {
    p50_ms: c.p50_ms,
    p99_ms: c.p99_ms,
    worst_10s_p99_ms: c.worst_10s_p99_ms,
    pass_share: c.total > 0 ? c.passed / c.total : null,
    wal_bytes_per_event: c.wal_bytes_per_event,
  };
}

function detect(rows: SeriesRow[], figures: readonly HistoryFigure[], opts: DetectOptions): FigureChangePoint[] {
  const out: FigureChangePoint[] = [];
  for (const f of figures) {
    const at = rows.map((r, i) => [r, i] as const).filter(([r]) => typeof r.figures[f.key] === 'number' && Number.isFinite(r.figures[f.key]));
    const points = at.map(([r]) => ({ value: r.figures[f.key] as number, run: r.campaignId, build: r.build }));
    for (const c of changePoints(points, f.direction, opts)) out.push({ ...c, figure: f.key, row: at[c.index][1] });
  }
  return out.sort((a, b) => a.row - b.row || a.figure.localeCompare(b.figure));
}

/**
 * Every series of the runs: per hardware, each configuration's and the ceiling's, oldest run first,
 * with its change points. `since` keeps each series from the first run of that build on (the change
 * points are found over the whole series, so a change right after the build still has its "before").
 */
export function historySeries(runs: readonly HistoryRun[], opts: SeriesOptions = {}): HistorySeries[] {
  const ordered = [...runs].sort((a, b) => a.started.localeCompare(b.started) || a.campaignId.localeCompare(b.campaignId));
  const groups = new Map<string, HistorySeries>();
  const group = (r: HistoryRun, series: string, figures: readonly HistoryFigure[]) => {
    const key = JSON.stringify([r.hardware, r.target, series]);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { hardware: r.hardware, target: r.target, series, figures, rows: [], changePoints: [] }));
    return g;
  };
  for (const r of ordered) {
    const base = { campaignId: r.campaignId, started: r.started, status: r.status, build: r.build, host: r.host };
    for (const c of r.configurations) {
      group(r, configurationSeries(c), CONFIGURATION_FIGURES).rows.push({ ...base, passes: `${c.passed}/${c.total}`, figures: figuresOf(c) });
    }
    if (r.ceiling_evps !== null || r.ceiling_share !== null) group(r, 'ceiling', CEILING_FIGURES).rows.push({ ...base, figures: { ceiling_evps: r.ceiling_evps, ceiling_share: r.ceiling_share } });
  }
  const out = [...groups.values()];
  for (const g of out) g.changePoints = detect(g.rows, g.figures, opts);
  if (opts.since !== undefined) {
    const since = opts.since;
    for (const g of out) {
      const first = g.rows.findIndex((row) => namesBuild(row.build, since));
      if (first < 0) {
        g.rows = [];
        g.changePoints = [];
        continue;
      }
      g.changePoints = g.changePoints.filter((c) => c.row > first).map((c) => ({ ...c, row: c.row - first }));
      g.rows = g.rows.slice(first);
    }
    return out.filter((g) => g.rows.length > 0);
  }
  return out;
}

// `rig history SPEC-NAME|SCHEDULE [--since BUILD] [-o json|csv] [--evidence-only]`: every run of a spec
// or a schedule as time series, per hardware and configuration, with the change points in each
// figure (issue 36). The runs come from Temporal's visibility when it answers (a schedule's runs,
// with the worker build each ran on) and from the evidence folders (the figures; and, without
// Temporal, the runs themselves: folders whose result.json names the spec, or whose id is a run of
// the schedule). The series and change points are lib/protocol/history-series.ts.
import { defineCommand } from '../command';
import { UsageError } from '../parse-flags';
import { EXIT } from '../exit-codes';
import { connectClient, type RigClient } from '../connect';
import { findHistoryRuns } from '../../lib/evidence/history';
import { resultsDir } from '../../lib/tools/paths';
import { historySeries, runsOfBuild, type FigureChangePoint, type HistorySeries } from '../../lib/protocol/history-series';
import { DEFAULT_ALPHA, DEFAULT_PERMUTATIONS } from '../../lib/protocol/change-points';

export const summary = "a spec's or schedule's runs as time series, with the change points in each figure";

const HELP = `usage: rig history SPEC-NAME|SCHEDULE [--since BUILD] [-o json|csv] [--evidence-only]

Each configuration's figures across its runs, oldest first: p50, p99, worst 10-s p99, passes out
of repeats, WAL per event, and the campaign's closed-loop ceiling with its share of the database's
floor (pgbench, same batch). Each run with its build, host and hardware; runs on other hardware
are other series, never mixed. Under each series, its change points per figure: the run where the
figure moved and the builds either side, the shift in medians (Hodges-Lehmann, with its exact
95 % rank interval), worse or better by the figure's direction (a higher p99 is worse, a higher
ceiling better) and the p-value: E-divisive means on ranks with ${DEFAULT_PERMUTATIONS} seeded permutations,
significant at p <= ${DEFAULT_ALPHA} (lib/protocol/change-points.ts: how it differs from Apache Otava).

Where the runs come from: Temporal's visibility when it answers (the runs its schedule SCHEDULE
started, with the worker build each ran on), and the evidence folders under RIG_RESULTS (default
state/results): every folder whose result.json names the spec SPEC-NAME, or whose id is a run of the
schedule. The figures are those each campaign recorded (result.json, and WAL per event from the
repeats' DB samples), not re-derived: rig report does that for one run.

  --since BUILD     what moved since BUILD (any part of a build: a commit prefix, an image tag): the
                    runs from BUILD's first run on, and the change points after it (found over the
                    whole history)
  -o json|csv       the same data as JSON (one object) or CSV (one row per run and series; the
                    change points landing on a run in its change_points column)
  --evidence-only   do not ask Temporal: the evidence folders alone

exit 0  the history was printed
exit 1  no run of that name in the results folder (nor in visibility)
exit 2  usage: a bad flag, or --since names no build of these runs`;

/** The runs' ids a schedule started, with the worker build each ran on; null when Temporal does not answer. */
async function scheduledRuns(schedule: string): Promise<{ ids: Map<string, string | null>; note: string } | null> {
  let rc: RigClient;
  try {
    rc = await connectClient();
  } catch (err) {
    console.error(`note: ${(err as Error).message.split(' (')[0]}; reading the evidence folders alone`);
    return null;
  }
  try {
    const ids = new Map<string, string | null>();
    const query = `WorkflowType = 'benchCampaign' AND TemporalScheduledById = '${schedule.replace(/'/g, "\\'")}'`;
    for await (const wf of rc.client.workflow.list({ query })) {
      const raw = wf.raw as { versioningInfo?: { deploymentVersion?: { buildId?: string | null } | null } | null; mostRecentWorkerVersionStamp?: { buildId?: string | null } | null };
      ids.set(wf.workflowId, raw.versioningInfo?.deploymentVersion?.buildId || raw.mostRecentWorkerVersionStamp?.buildId || null);
    }
    return { ids, note: `visibility on ${rc.env.address}: ${ids.size} run(s) of schedule ${schedule}` };
  } catch (err) {
    console.error(`note: visibility on ${rc.env.address} did not answer the query (${(err as Error).message}); reading the evidence folders alone`);
    return null;
  } finally {
    await rc.close();
  }
}

const num = (v: number | null | undefined, digits = 2) => (v === null || v === undefined ? '-' : Number(v.toFixed(digits)).toString());

function changeWords(s: HistorySeries, c: FigureChangePoint): string {
  const f = s.figures.find((x) => x.key === c.figure)!;
  const unit = f.unit ? ` ${f.unit}` : '';
  const pct = c.shiftPct === null ? '' : `${c.shiftPct >= 0 ? '+' : ''}${num(c.shiftPct, 1)} %, `;
  const interval = c.shift.interval ? `, 95 % [${num(c.shift.interval[0], 3)}, ${num(c.shift.interval[1], 3)}]` : ', too few runs for an interval';
  return (
    `${f.label}: at ${c.run} (build ${c.build ?? 'unknown'}) after ${c.previousRun} (build ${c.previousBuild ?? 'unknown'}): ` +
    `median ${num(c.medianBefore, 3)} -> ${num(c.medianAfter, 3)}${unit} (${pct}shift ${num(c.shift.shift, 3)}${unit}${interval}), ${c.verdict}, p = ${num(c.pValue, 3)}`
  );
}

function text(name: string, series: HistorySeries[], notes: string[]): string {
  const lines = [`rig history ${name}`, ...notes.map((n) => `  (${n})`)];
  for (const s of series) {
    lines.push('', `${s.series} on ${s.hardware ?? 'unknown hardware'} (${s.target}), ${s.rows.length} run(s)`);
    const header = ['run', 'started', 'status', 'build', 'host', ...(s.rows[0]?.passes !== undefined ? ['passes'] : []), ...s.figures.filter((f) => f.key !== 'pass_share').map((f) => `${f.label}${f.unit ? ` ${f.unit}` : ''}`)];
    const rows = s.rows.map((r) => [
      r.campaignId,
      r.started.slice(0, 16),
      r.status,
      r.build ?? '-',
      r.host ?? '-',
      ...(r.passes !== undefined ? [r.passes] : []),
      ...s.figures.filter((f) => f.key !== 'pass_share').map((f) => num(r.figures[f.key], f.key === 'ceiling_share' ? 3 : 2)),
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    for (const r of [header, ...rows]) lines.push('  ' + r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
    lines.push(s.changePoints.length ? '  change points:' : '  no change points');
    for (const c of s.changePoints) lines.push(`    ${changeWords(s, c)}`);
  }
  return lines.join('\n');
}

const CSV_FIGURES = ['p50_ms', 'p99_ms', 'worst_10s_p99_ms', 'pass_share', 'wal_bytes_per_event', 'ceiling_evps', 'ceiling_share'];
const csvCell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

function csv(series: HistorySeries[]): string {
  const out = [['hardware', 'target', 'series', 'campaign_id', 'started', 'status', 'build', 'host', 'passes', ...CSV_FIGURES, 'change_points'].join(',')];
  for (const s of series) {
    s.rows.forEach((r, i) => {
      const changes = s.changePoints.filter((c) => c.row === i).map((c) => `${c.figure}:${c.verdict}:p=${num(c.pValue, 3)}`).join(';');
      const figures = CSV_FIGURES.map((k) => (r.figures[k] === null || r.figures[k] === undefined ? '' : String(r.figures[k])));
      out.push([s.hardware ?? '', s.target, s.series, r.campaignId, r.started, r.status, r.build ?? '', r.host ?? '', r.passes ?? '', ...figures, changes].map(csvCell).join(','));
    });
  }
  return out.join('\n');
}

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: {
    since: { type: 'string' },
    output: { type: 'string', short: 'o' },
    'evidence-only': { type: 'boolean' },
  },
  positionals: true,
  async run({ values, positionals }) {
    if (positionals.length !== 1) throw new UsageError(`give exactly one spec name or schedule id (got ${positionals.length})`);
    const name = positionals[0];
    const output = values.output ?? 'text';
    if (!['text', 'json', 'csv'].includes(output)) throw new UsageError(`-o must be json or csv, got '${values.output}'`);
    if (values.since !== undefined && !values.since.trim()) throw new UsageError('--since needs a build: a commit prefix or an image tag');
    const notes: string[] = [];
    const visible = values['evidence-only'] ? null : await scheduledRuns(name);
    if (visible) notes.push(visible.note);
    const results = resultsDir();
    const { runs, missing } = findHistoryRuns(results, name, visible?.ids);
    notes.push(`evidence folders under ${results}: ${runs.length} run(s)`);
    if (missing.length) notes.push(`no result in this results folder for ${missing.length} run(s) visibility lists: ${missing.join(', ')}`);
    if (!runs.length) {
      console.error(`rig history: no run of '${name}' in ${results}${visible ? ' nor in visibility' : ''} (a spec's name, or a schedule's id; RIG_RESULTS is the folder the workers write to)`);
      return EXIT.FAILED;
    }
    if (values.since !== undefined && runsOfBuild(runs, values.since).length === 0) {
      const builds = [...new Set(runs.map((r) => r.build).filter((b): b is string => b !== null))];
      throw new UsageError(`--since ${values.since}: no run of '${name}' has that build; its builds: ${builds.join(', ') || 'none recorded'}`);
    }
    const series = historySeries(runs, { since: values.since });
    if (output === 'json') console.log(JSON.stringify({ name, since: values.since ?? null, notes, missing, series }, null, 2));
    else if (output === 'csv') console.log(csv(series));
    else console.log(text(name, series, notes));
    return EXIT.OK;
  },
});

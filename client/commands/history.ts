// `rig history SPEC-NAME|SCHEDULE [--since BUILD] [-o json|csv] [--evidence-only]`: every run of a spec
// or a schedule as time series, per hardware and configuration, with the change points in each
// figure (issue 36), each figure's magnitude floor and the acknowledged changes (issue 45). The runs
// come from Temporal's visibility when it answers (a schedule's runs, with the worker build each ran
// on) and from the evidence folders (the figures; and, without Temporal, the runs themselves: folders
// whose result.json names the spec, or whose id is a run of the schedule). The series and change
// points are lib/protocol/history-series.ts.
//
// `rig history ack RUN FIGURE [--series S] [--reason TEXT]`: accepts a known change, so it stops
// alerting (lib/evidence/history-acks.ts: RUN's own folder, no Temporal needed).
import os from 'node:os';
import path from 'node:path';
import { defineCommand } from '../command';
import { UsageError } from '../parse-flags';
import { EXIT } from '../exit-codes';
import { connectClient, type RigClient } from '../connect';
import { findHistoryRuns, readHistoryRun } from '../../lib/evidence/history';
import { readHistoryAcks, recordHistoryAck } from '../../lib/evidence/history-acks';
import { floorsOfRun } from '../../lib/evidence/history-alert';
import { resultsDir } from '../../lib/tools/paths';
import { campaignIdOf } from '../../lib/protocol/campaign-id';
import { CEILING_FIGURES, CONFIGURATION_FIGURES, historySeries, runsOfBuild, type FigureChangePoint, type HistorySeries } from '../../lib/protocol/history-series';
import type { HistoryAck } from '../../lib/protocol/history-alert-rule';
import { DEFAULT_FLOORS_PCT } from '../../lib/protocol/history-floors';
import { STEP_ALPHA } from '../../lib/protocol/step-alert';
import { DEFAULT_ALPHA, DEFAULT_PERMUTATIONS } from '../../lib/protocol/change-points';

export const summary = "a spec's or schedule's runs as time series, with the change points in each figure";

const FIGURE_KEYS = [...CONFIGURATION_FIGURES, ...CEILING_FIGURES].map((f) => f.key);
const floorWords = (v: number | null) => (v === null || v === 0 ? 'none' : `${v} %`);

const HELP = `usage: rig history SPEC-NAME|SCHEDULE [--since BUILD] [-o json|csv] [--evidence-only]
       rig history ack RUN FIGURE [--series SERIES] [--reason TEXT]

Each configuration's figures across its runs, oldest first: p50, p99, worst 10-s p99, passes out
of repeats, WAL per event, and the campaign's closed-loop ceiling with its share of the database's
floor (pgbench, same batch). Each run with its build, host and hardware; runs on other hardware
are other series, never mixed. Under each series, its change points per figure: the run where the
figure moved and the builds either side, the shift in medians (Hodges-Lehmann, with its exact
95 % rank interval), worse or better by the figure's direction (a higher p99 is worse, a higher
ceiling better) and the p-value: E-divisive means on ranks with ${DEFAULT_PERMUTATIONS} seeded permutations,
significant at p <= ${DEFAULT_ALPHA} (lib/protocol/change-points.ts: how it differs from Apache Otava).

Each figure's floor (the table's floor row): the smallest move, in percent of the level before it,
worth a verdict; a change below it never alerts. Defaults ${Object.entries(DEFAULT_FLOORS_PCT).map(([k, v]) => `${k} ${floorWords(v)}`).join(', ')}
(docs/benchmarks.md's bench:sensitivity table); a spec overrides them in history.floors, and the
newest run's spec is the one shown.

What sets RigRegressed (the report step, history-alert.json): the newest run beyond the noise of the
runs before it (a one-sided prediction bound at ${STEP_ALPHA}, lib/protocol/step-alert.ts), or a change
point new with this run however late it is found; worse, at least its floor, each change once, and
not acknowledged.

rig history ack RUN FIGURE: accept a known change (a slower build you meant to ship), so it stops
alerting: a change within 3 runs of RUN in FIGURE no longer alerts, and the first-run test measures
later runs against RUN and after. RUN is a campaign id as the run column shows it; FIGURE one of
${FIGURE_KEYS.join(', ')}. Recorded in RUN's evidence folder (history-acks.json: who,
when, why), so it holds without Temporal.

  --series SERIES   the series the change is in, as the history names it ("only (200 ev/s, batch
                    1)", "ceiling"); default: every series of RUN that has FIGURE
  --reason TEXT     why the change is accepted (kept beside who and when)

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

exit 0  the history was printed; ack: the change was recorded (or was already)
exit 1  no run of that name in the results folder (nor in visibility); ack: no campaign RUN there
exit 2  usage: a bad flag, or --since names no build of these runs; ack: an unknown figure or series`;

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

function text(name: string, series: HistorySeries[], notes: string[], floors: Record<string, number | null>, acks: HistoryAck[]): string {
  const lines = [`rig history ${name}`, ...notes.map((n) => `  (${n})`)];
  for (const s of series) {
    lines.push('', `${s.series} on ${s.hardware ?? 'unknown hardware'} (${s.target}), ${s.rows.length} run(s)`);
    const passes = s.rows[0]?.passes !== undefined;
    const header = ['run', 'started', 'status', 'build', 'host', ...(passes ? ['passes'] : []), ...s.figures.filter((f) => f.key !== 'pass_share').map((f) => `${f.label}${f.unit ? ` ${f.unit}` : ''}`)];
    // Each figure's floor, under its name: a change below it never alerts.
    const floorRow = ['floor', '', '', '', '', ...(passes ? [floorWords(floors.pass_share ?? null)] : []), ...s.figures.filter((f) => f.key !== 'pass_share').map((f) => floorWords(floors[f.key] ?? null))];
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
    for (const r of [header, floorRow, ...rows]) lines.push('  ' + r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
    lines.push(s.changePoints.length ? '  change points:' : '  no change points');
    for (const c of s.changePoints) lines.push(`    ${changeWords(s, c)}`);
    const own = acks.filter((a) => (a.series === null || a.series === s.series) && s.rows.some((r) => r.campaignId === a.run) && s.figures.some((f) => f.key === a.figure));
    if (own.length) lines.push('  acknowledged (no longer alert):');
    for (const a of own) lines.push(`    ${s.figures.find((f) => f.key === a.figure)!.label} at ${a.run}, by ${a.by} at ${a.at}${a.reason ? `: ${a.reason}` : ''}`);
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
    series: { type: 'string' },
    reason: { type: 'string' },
  },
  positionals: true,
  async run({ values, positionals }) {
    // `ack` is an action only with its arguments: `rig history ack` alone is the history of a spec named ack.
    if (positionals[0] === 'ack' && positionals.length > 1) {
      if (values.since !== undefined || values.output !== undefined || values['evidence-only']) throw new UsageError('rig history ack takes --series and --reason only');
      return ack(positionals.slice(1), values.series, values.reason);
    }
    if (values.series !== undefined || values.reason !== undefined) throw new UsageError('--series and --reason go with rig history ack RUN FIGURE');
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
    // The floors of the newest run's spec (its history.floors over the defaults); the acks of every run.
    const newest = [...runs].sort((a, b) => a.started.localeCompare(b.started)).pop()!;
    const floors = newest.dir ? floorsOfRun(newest.dir) : { ...DEFAULT_FLOORS_PCT };
    const acks = runs.flatMap((r) => (r.dir ? readHistoryAcks(r.dir).map((a) => ({ ...a, run: r.campaignId })) : []));
    if (output === 'json') console.log(JSON.stringify({ name, since: values.since ?? null, notes, missing, floors_pct: floors, acks, series }, null, 2));
    else if (output === 'csv') console.log(csv(series));
    else console.log(text(name, series, [...notes, `floors: ${newest.campaignId}'s spec (history.floors) over the defaults`], floors, acks));
    return EXIT.OK;
  },
});

/** `rig history ack RUN FIGURE`: records the ack in RUN's folder; refusals name the fix. */
function ack(args: string[], seriesName: string | undefined, reason: string | undefined): number {
  if (args.length !== 2) throw new UsageError(`rig history ack takes a run and a figure: rig history ack RUN FIGURE (got ${args.length} argument(s))`);
  const [runArg, figure] = args;
  if (!FIGURE_KEYS.includes(figure)) throw new UsageError(`unknown figure '${figure}': one of ${FIGURE_KEYS.join(', ')}`);
  if (reason !== undefined && !reason.trim()) throw new UsageError('--reason needs words: why the change is accepted');
  const results = resultsDir();
  const dir = path.join(results, campaignIdOf(runArg));
  const run = readHistoryRun(dir);
  if (!run) {
    console.error(`rig history ack: no campaign '${runArg}' with a result in ${results} (give a run id as \`rig history NAME\` lists it in its run column; RIG_RESULTS is the folder the workers write to)`);
    return EXIT.FAILED;
  }
  // The run's series that have FIGURE: a configuration's figure is in each configuration's series, the ceiling's in "ceiling".
  const own = historySeries([run]).filter((s) => s.figures.some((f) => f.key === figure) && typeof s.rows[0]?.figures[figure] === 'number');
  if (!own.length) throw new UsageError(`run ${run.campaignId} has no value of ${figure} (its series: ${historySeries([run]).map((s) => s.series).join(', ') || 'none'}): name a figure it measured`);
  if (seriesName !== undefined && !own.some((s) => s.series === seriesName)) throw new UsageError(`unknown series '${seriesName}' for ${figure} in run ${run.campaignId}: one of ${own.map((s) => `"${s.series}"`).join(', ')}`);
  const by = process.env.USER || os.userInfo().username || 'unknown';
  const entry: HistoryAck = { run: run.campaignId, figure, series: seriesName ?? null, by, at: new Date().toISOString(), reason: reason?.trim() ?? null };
  const r = recordHistoryAck(dir, entry);
  const which = seriesName ? `series "${seriesName}"` : `every series of the run (${own.map((s) => s.series).join(', ')})`;
  if (!r.added) console.log(`already acknowledged: ${figure} at ${run.campaignId} in ${which}, by ${r.existing!.by} at ${r.existing!.at}${r.existing!.reason ? ` (${r.existing!.reason})` : ''}`);
  else console.log(`acknowledged: ${figure} at ${run.campaignId} in ${which}, by ${by}${entry.reason ? ` (${entry.reason})` : ''}; a change within 3 runs of it no longer alerts (${path.join(dir, 'history-acks.json')})`);
  return EXIT.OK;
}

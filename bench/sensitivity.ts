// npm run bench:sensitivity (issue 45): the smallest change the rig's verdicts can see, and how often
// they call one where there is none, measured on real repeats of an unchanged target.
//
//   npm run bench:sensitivity                     runs `rig rehearse examples/sensitivity-aa.json` (two
//                                                 identical variants, interleaved, the service restarted
//                                                 at each change: about 30 min), then the tables
//   npm run bench:sensitivity -- --from DIR[,DIR]  the tables from A/A campaigns already run
//     --draws N     draws per cell (default 2000)      --histories N   weekly histories per cell (default 20)
//     --seed S      the draws' seed (default 1)        --no-otava      leave Apache Otava's column out
//     --no-weekly   tables 1 and 2 only (table 3 runs Otava on every prefix: an hour on a loaded host)
//
// Tables (lib/protocol/sensitivity.ts says how each is drawn):
//   1. the pool: each configuration's real repeats, each figure's median and its spread between
//      repeats, the part of it left between neighbours in time (what pairing cannot remove:
//      lib/protocol/sensitivity.ts neighbourNoise), and the host's CPU steal and load while they ran;
//   2. one campaign, control beside treatment at 5 and at 3 repeats a side: per figure, how often an
//      A/A pair is called different, the share of draws called worse at +2, +5, +10 and +20 %, and
//      the smallest change called worse in 80 % of draws (the MDE); "any figure" is the page's
//      family false-alarm rate;
//   3. a weekly schedule: histories of 20 stable runs (each the median of 5 real repeats) then a step,
//      and 60-run histories of pure noise: runs after the step until each detector first alerts,
//      and its false alerts per 52 runs, beside Apache Otava's default on the same series.
// Nothing here judges; every figure is a share of draws from the real repeats named in table 1.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { changePoints } from '../lib/protocol/change-points';
import { alertedChanges, type PriorAlert } from '../lib/protocol/history-alert-rule';
import { DEFAULT_FLOORS_PCT } from '../lib/protocol/history-floors';
import { historySeries, type HistoryRun } from '../lib/protocol/history-series';
import { COMPARED_FIGURES } from '../lib/protocol/compare';
import { detectionRate, falseAlarms, minimumDetectableEffect, neighbourNoise, weeklyRuns, type RepeatValues, type WeeklyRun } from '../lib/protocol/sensitivity';
import { buildReportModel, loadEvidence, repeatFigures } from '../lib/evidence/report';
import { toolPath } from '../lib/tools/binaries';
import { median } from '../lib/protocol/percentile';
import { QUIET_STEAL_PCT, quietP50Applies } from '../lib/protocol/host-quiet';
import { hostOfAttempts } from './gates-rehearsals';

const root = path.resolve(__dirname, '..');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const DRAWS = Number(arg('--draws') ?? 2000);
const HISTORIES = Number(arg('--histories') ?? 20);
const SEED = Number(arg('--seed') ?? 1);
const EFFECTS = [2, 5, 10, 20];
/** The figures a weekly history is made of (a configuration's series, lib/protocol/history-series.ts). */
const WEEKLY_FIGURES = ['p50_ms', 'p99_ms', 'worst_10s_p99_ms', 'wal_bytes_per_event'];
const STABLE_RUNS = 20;
const AFTER_RUNS = 12;
const NOISE_RUNS = 60;
/** A history needs this many runs before it is read (lib/evidence/history-alert.ts MIN_HISTORY_RUNS). */
const FIRST_JUDGED = 6;

interface Pool {
  configuration: string;
  repeats: RepeatValues[];
  total: number;
  campaigns: string[];
  steal: number | null;
  load: number | null;
  /** The passing repeats' figures in the order they ran (campaign, repeat, variant, attempt). */
  timeOrder: Array<{ key: number[]; figures: RepeatValues }>;
}

function run(): string {
  const spec = path.join(root, 'examples', 'sensitivity-aa.json');
  const summary = path.join(os.tmpdir(), `rig-sensitivity-${process.pid}.json`);
  process.stderr.write(`bench:sensitivity: node bin/rig.cjs rehearse ${spec}\n`);
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'rig.cjs'), 'rehearse', spec, '--summary-export', summary], { stdio: 'inherit', cwd: root });
  if (!fs.existsSync(summary)) throw new Error(`rig rehearse ended (exit ${r.status}) without a summary: see its output above`);
  return (JSON.parse(fs.readFileSync(summary, 'utf8')) as { resultsDir: string }).resultsDir;
}

const maxOf = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/** Every configuration's passing repeats, variants of one base pooled (an A/A campaign's two sides are one target). */
async function pools(dirs: string[]): Promise<Pool[]> {
  const out = new Map<string, Pool>();
  for (const [di, dir] of dirs.entries()) {
    const model = buildReportModel(await loadEvidence(dir));
    for (const [ci, c] of model.configurations.entries()) {
      if (c.kind !== 'sustained') continue;
      const base = c.name.split('.')[0];
      const p = out.get(base) ?? { configuration: base, repeats: [], total: 0, campaigns: [], steal: null, load: null, timeOrder: [] };
      for (const r of c.repeats) {
        if (r.status === 'interrupted' || r.status === 'not-run') continue;
        p.total++;
        const h = hostOfAttempts([path.join(dir, r.dir)]);
        p.steal = maxOf(p.steal, h.steal);
        p.load = maxOf(p.load, h.load);
        const f = repeatFigures(r);
        if (f.passed) {
          p.repeats.push(f.figures);
          // Interleaved variants run repeat by repeat, in the order the configurations are listed.
          p.timeOrder.push({ key: [di, r.repeat, ci, r.attempt], figures: f.figures });
        }
      }
      if (!p.campaigns.includes(path.basename(dir))) p.campaigns.push(path.basename(dir));
      out.set(base, p);
    }
  }
  const byKey = (a: number[], b: number[]) => a.reduce((d, x, i) => d || x - b[i], 0);
  for (const p of out.values()) p.timeOrder.sort((a, b) => byKey(a.key, b.key));
  return [...out.values()];
}

const valuesOf = (p: Pool, figure: string) => p.repeats.map((r) => r[figure]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
const pct = (x: number) => `${(x * 100).toFixed(x < 0.1 && x > 0 ? 1 : 0)} %`;
const label = (key: string) => (key === 'p50_quiet_ms' ? 'p50, quiet seconds' : (COMPARED_FIGURES.find((f) => f.key === key)?.label ?? key));
/** The pool table's figures: the compared ones, with p50 over the seconds of low host steal (lib/protocol/host-quiet.ts) after p50. */
const POOL_FIGURES = [COMPARED_FIGURES[0], { key: 'p50_quiet_ms', label: 'p50, quiet seconds', unit: 'ms' }, ...COMPARED_FIGURES.slice(1)];
/** The repeats as a campaign's comparison reads them (lib/evidence/report/comparison.ts): p50 over the quiet seconds when every repeat has them. */
const asCompared = (rs: readonly RepeatValues[]): { repeats: RepeatValues[]; quiet: boolean } =>
  quietP50Applies([rs.map((r) => r.p50_quiet_ms)]) ? { repeats: rs.map((r) => ({ ...r, p50_ms: r.p50_quiet_ms ?? null })), quiet: true } : { repeats: [...rs], quiet: false };

function table(head: string[], rows: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(w[i])).join(' | ')} |`;
  return [line(head), `| ${w.map((n) => '-'.repeat(n)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

function poolTable(ps: Pool[]): string {
  const rows: string[][] = [];
  for (const p of ps) {
    for (const f of POOL_FIGURES) {
      const v = valuesOf(p, f.key);
      if (!v.length) continue;
      const m = median(v);
      const mad = median(v.map((x) => Math.abs(x - m))) * 1.4826;
      const inOrder = p.timeOrder.map((t) => t.figures[f.key]).filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
      const nb = neighbourNoise(inOrder);
      rows.push([p.configuration, `${p.repeats.length} of ${p.total}`, f.label, `${m.toFixed(f.unit === 'ms' ? 2 : 0)} ${f.unit}`.trim(), m ? pct(mad / m) : '—', nb === null ? '—' : pct(nb), `${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)}`, p.steal === null ? '—' : `${p.steal.toFixed(1)} %`, p.load === null ? '—' : p.load.toFixed(1)]);
    }
  }
  return table(['configuration', 'passing repeats', 'figure', 'median', 'spread (1.48 MAD / median)', 'between neighbours', 'min–max', 'steal max', 'load1 max'], rows);
}

function campaignTable(pool: Pool, perSide: number): string {
  const compared = asCompared(pool.repeats);
  const p = { ...pool, repeats: compared.repeats.filter((r) => typeof r.p50_ms === 'number') };
  const figures = COMPARED_FIGURES.map((f) => f.key).filter((k) => valuesOf(p, k).length === p.repeats.length && new Set(valuesOf(p, k)).size > 1);
  const opts = { perSide, draws: DRAWS, seed: SEED };
  const aa = falseAlarms(p.repeats, figures, opts);
  const rows = figures.map((f) => {
    const mde = minimumDetectableEffect(p.repeats, f, opts, figures);
    return [label(f), pct(aa.perFigure[f]), ...EFFECTS.map((e) => pct(detectionRate(p.repeats, f, e, opts, figures))), mde === null ? 'none within +200 %' : `+${mde} %`];
  });
  rows.push(['any figure (the page)', pct(aa.family), ...EFFECTS.map(() => '—'), '—']);
  return table(['figure', 'A/A called different', ...EFFECTS.map((e) => `worse at +${e} %`), 'MDE (80 % power)'], rows);
}

/** A detector reads a whole history run by run, as a weekly schedule does, and says which runs (0-based) alerted. */
type Detector = (runs: readonly WeeklyRun[], figure: string) => Set<number>;

/** The figure's change points in each prefix of a history, computed once per length (the rig's E-divisive on ranks). */
function prefixChangePoints(values: readonly number[]): Array<number[]> {
  return values.map((_, i) => (i + 1 < FIRST_JUDGED - 1 ? [] : changePoints(values.slice(0, i + 1).map((value, k) => ({ value, run: `r${k}`, build: null })), 'higher-is-worse').filter((c) => c.verdict === 'worse').map((c) => c.index)));
}

/** The rig's weekly alert as 9340af0 had it (lib/evidence/history-alert.ts then): a new worse change point among the newest 8 runs. */
const rigBefore: Detector = (runs) => {
  const cps = prefixChangePoints(runs.map((r) => r.value));
  const out = new Set<number>();
  for (let end = FIRST_JUDGED - 1; end < runs.length; end++) {
    const known = cps[end - 1];
    if (cps[end].some((c) => c >= end + 1 - 8 && !known.some((k) => Math.abs(k - c) <= 1))) out.add(end);
  }
  return out;
};

/** One configuration's run as lib/evidence/history.ts reads it from a folder, carrying one figure. */
function historyRun(i: number, figure: string, value: number): HistoryRun {
  const figures = { p50_ms: null, p99_ms: null, worst_10s_p99_ms: null, wal_bytes_per_event: null, [figure]: value };
  return { campaignId: `r${String(i).padStart(3, '0')}`, started: new Date(Date.UTC(2026, 0, 5 + 7 * i)).toISOString(), status: 'held', target: 'local', build: `b${i}`, rigBuild: null, serviceBuild: null, host: 'bench', hardware: 'bench', ceiling_evps: null, ceiling_share: null, configurations: [{ name: 'single', eventsPerSecond: 240, batch: 1, passed: 5, total: 5, ...figures }] };
}

/**
 * The rig's weekly alert now (lib/protocol/history-alert-rule.ts, as the report step runs it): the
 * first-run step test and the change points, each change alerted once, with the default floors; the
 * earlier runs' alerts carried forward as their history-alert.json files carry them.
 */
const rigNow: Detector = (runs, figure) => {
  const rows = runs.map((r, i) => historyRun(i, figure, r.value));
  const prior: PriorAlert[] = [];
  const out = new Set<number>();
  let before = historySeries(rows.slice(0, FIRST_JUDGED - 1));
  for (let end = FIRST_JUDGED - 1; end < runs.length; end++) {
    const series = historySeries(rows.slice(0, end + 1));
    const { changes } = alertedChanges({ series, before, campaignId: rows[end].campaignId, repeatsOf: (_s, f) => (f === figure ? runs[end].repeats : null), prior, acks: [], floorsPct: DEFAULT_FLOORS_PCT });
    const own = changes.filter((c) => c.figure === figure);
    if (own.length) out.add(end);
    prior.push(...own.map((c) => ({ series: c.series, figure: c.figure, run: c.run })));
    before = series;
  }
  return out;
};

/**
 * Apache Otava's default (`otava analyze`: E-divisive with its t-test, window 50, p <= 0.001) run once
 * over every prefix of every history, each prefix a test of its own; a run alerts when Otava finds an
 * increase that it did not find on the prefix before (within one run).
 */
function otavaAlerts(histories: ReadonlyArray<readonly number[]>): Array<Set<number>> {
  const otava = toolPath('otava');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-sens-otava-'));
  try {
    const tests: string[] = [];
    const yaml: string[] = ['tests:'];
    histories.forEach((h, hi) => {
      for (let len = FIRST_JUDGED - 1; len <= h.length; len++) {
        const name = `h${hi}_${len}`;
        const rows = ['time,v', ...h.slice(0, len).map((v, i) => `${new Date(Date.UTC(2026, 0, 5 + 7 * i)).toISOString()},${v.toFixed(6)}`)];
        fs.writeFileSync(path.join(dir, `${name}.csv`), rows.join('\n') + '\n');
        yaml.push(`  ${name}:`, '    type: csv', `    file: ${path.join(dir, `${name}.csv`)}`, '    time_column: time', '    metrics:', '      v:', '        column: v');
        tests.push(name);
      }
    });
    fs.writeFileSync(path.join(dir, 'otava.yaml'), yaml.join('\n') + '\n');
    // HOME: Otava also reads ~/.otava/*.yaml; an empty home keeps a user's own config out.
    const stdout = execFileSync(otava, ['analyze', ...tests, '--config-file', path.join(dir, 'otava.yaml'), '--output', 'json'], { encoding: 'utf8', env: { ...process.env, HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
    const found: Record<string, Array<{ index: number; up: boolean }>> = {};
    for (const line of stdout.split('\n').filter((l) => l.startsWith('{'))) {
      // One line per test: {"<test>": [{"changes": [{"metric", "index", "forward_change_percent": "11", ...}]}]} (its numbers are strings).
      const obj = JSON.parse(line) as Record<string, Array<{ changes: Array<{ index: number; forward_change_percent?: string }> }>>;
      for (const [name, groups] of Object.entries(obj)) found[name] = groups.flatMap((g) => g.changes.map((c) => ({ index: c.index, up: Number(c.forward_change_percent ?? 0) > 0 })));
    }
    return histories.map((h, hi) => {
      const alerts = new Set<number>();
      for (let len = FIRST_JUDGED; len <= h.length; len++) {
        const now = found[`h${hi}_${len}`] ?? [];
        const before = found[`h${hi}_${len - 1}`] ?? [];
        if (now.some((c) => c.up && !before.some((b) => Math.abs(b.index - c.index) <= 1))) alerts.add(len - 1);
      }
      return alerts;
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** "k/N at the first slow run, ..." for the runs after the step each history first alerted at. */
function delayCell(alerts: ReadonlyArray<Set<number>>): string {
  const delays = alerts.map((a) => [...a].filter((i) => i >= STABLE_RUNS).sort((x, y) => x - y)[0]).map((i) => (i === undefined ? null : i - STABLE_RUNS + 1));
  const got = delays.filter((d): d is number => d !== null).sort((a, b) => a - b);
  const n = alerts.length;
  const early = alerts.filter((a) => [...a].some((i) => i < STABLE_RUNS)).length;
  return `${delays.filter((d) => d === 1).length}/${n} at the first slow run, ${delays.filter((d) => d !== null && d <= 3).length}/${n} within 3, median ${got.length ? median(got) : '—'} (${n - got.length} never in ${AFTER_RUNS}); ${early}/${n} alerted a stable run`;
}

function falseCell(alerts: ReadonlyArray<Set<number>>): string {
  const n = alerts.reduce((s, a) => s + a.size, 0);
  const runs = alerts.length * (NOISE_RUNS - FIRST_JUDGED + 1);
  return `${n} false alerts in ${runs} runs: ${((n / runs) * 52).toFixed(2)} per 52`;
}

function weeklyTable(p: Pool, withOtava: boolean, detectors: Record<string, Detector>): string {
  const rows: string[][] = [];
  for (const figure of WEEKLY_FIGURES) {
    const values = valuesOf(p, figure);
    if (values.length < 5 || new Set(values).size < 2) continue;
    for (const step of [5, 10, 20]) {
      const hs = Array.from({ length: HISTORIES }, (_, i) => weeklyRuns(values, { runs: STABLE_RUNS + AFTER_RUNS, perRun: 5, stepAt: STABLE_RUNS, stepPct: step, seed: SEED * 1000 + i }));
      for (const [name, d] of Object.entries(detectors)) rows.push([label(figure), `+${step} %`, name, delayCell(hs.map((h) => d(h, figure)))]);
      if (withOtava) rows.push([label(figure), `+${step} %`, 'Otava 0.8 default', delayCell(otavaAlerts(hs.map((h) => h.map((r) => r.value))))]);
    }
    const noise = Array.from({ length: HISTORIES }, (_, i) => weeklyRuns(values, { runs: NOISE_RUNS, perRun: 5, seed: SEED * 7000 + i }));
    for (const [name, d] of Object.entries(detectors)) rows.push([label(figure), 'none', name, falseCell(noise.map((h) => d(h, figure)))]);
    if (withOtava) rows.push([label(figure), 'none', 'Otava 0.8 default', falseCell(otavaAlerts(noise.map((h) => h.map((r) => r.value))))]);
  }
  return table(['figure', 'step', 'detector', 'runs after the step until it alerts (of the histories)'], rows);
}

async function main(): Promise<void> {
  const from = arg('--from');
  const dirs = from ? from.split(',').map((d) => path.resolve(d)) : [run()];
  const ps = await pools(dirs);
  if (!ps.length) throw new Error(`no sustained configuration with passing repeats in ${dirs.join(', ')}`);
  console.log(`bench:sensitivity: ${dirs.map((d) => path.basename(d)).join(', ')}; ${DRAWS} draws a cell, seed ${SEED}; node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'})\n`);
  console.log('1. The real repeats (an unchanged target; a treatment\'s repeats pooled with its identical control)\n');
  console.log(poolTable(ps) + '\n');
  for (const p of ps) {
    for (const perSide of [5, 3]) {
      if (p.repeats.length < 2 * perSide) continue;
      const q = asCompared(p.repeats);
      const quietNote = q.quiet ? `; p50 over the seconds of host steal under ${QUIET_STEAL_PCT} % (${q.repeats.filter((r) => typeof r.p50_ms !== 'number').length} repeats with too few left out), as the page compares it` : '';
      console.log(`2. One campaign, ${p.configuration}: ${perSide} vs ${perSide} repeats drawn from ${p.repeats.length} real ones, the rig's comparison (lib/protocol/compare.ts)${quietNote}\n`);
      console.log(campaignTable(p, perSide) + '\n');
    }
    if (process.argv.includes('--no-weekly')) continue;
    console.log(`3. A weekly schedule, ${p.configuration}: ${HISTORIES} histories a cell, ${STABLE_RUNS} stable runs then the step (each run the median of 5 of the ${p.repeats.length} real repeats); noise: ${NOISE_RUNS} runs, judged from run ${FIRST_JUDGED}\n`);
    // p50 as the history now reads it (lib/evidence/history.ts): over the quiet seconds when every repeat has them.
    const weekly = asCompared(p.repeats);
    if (weekly.quiet) console.log(`   p50: over the seconds of host steal under ${QUIET_STEAL_PCT} %, as the history reads it\n`);
    console.log(weeklyTable({ ...p, repeats: weekly.repeats }, !process.argv.includes('--no-otava'), { 'rig now (step test + change points)': rigNow, 'rig at 9340af0 (change points, newest 8)': rigBefore }) + '\n');
  }
}

main().catch((err: unknown) => {
  console.error(`bench:sensitivity: ${(err as Error).message}`);
  process.exit(1);
});

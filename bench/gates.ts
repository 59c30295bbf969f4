// npm run bench:gates: an A/A study of every gate (issue 34). One unchanged configuration, measured
// many times on the local rig (a real dev server, in-process workers, a PostgreSQL cluster and the
// reference service: one campaign whose sustained series is N repeats of each configuration, judged
// by the real gates), then, per gate, how often it failed and why, with the host's CPU steal and load
// average beside it. A healthy, unchanging target should fail no gate: every failure counted here is
// a false alarm (or the host), which is what the rehearsal's sizing must keep rare.
//
//   npm run bench:gates -- [--runs N] [--configs single,batched] [--seconds S] [--long] [--calibrate]
//   npm run bench:gates -- --rehearsals N       N consecutive `npm start`s (rig rehearse, as a newcomer runs it)
//   npm run bench:gates -- --from DIR[,DIR...]  the table over campaigns already run (their results folders)
//     --runs N        repeats per configuration (default 30)
//     --configs a,b   configurations of examples/rehearsal.json (default: both)
//     --seconds S     repeat length (default: the rehearsal's)
//     --long          also one 10-minute repeat of each configuration (the protocol's repeat length)
//     --calibrate     calibrate first (needs the host to itself); default off
//     --rehearsals N  runs `node bin/rig.cjs rehearse` N times, one after another, each whole (calibration,
//                     bring-up, seed, the repeats, ceiling, denominator, teardown): a line per rehearsal
//                     (its verdict, each configuration's state, the host's CPU steal and load), then the
//                     gates' table over all their repeats. Issue 34's "HELD in at least 9 of 10" and its
//                     A/A study in one run: 10 rehearsals are 30 repeats of each configuration.
//     --from DIRS     the same tables from results folders of campaigns that already ran (result.json)
//
// Each judged attempt is a run, including an invalid one and its re-run (workflows/campaign.ts). Prints
// tables; never a pass/fail. Figures from a host shared with other work are that host's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startCampaignServer } from '../test/harness/campaign-server';
import type { CampaignResult, RepeatSummary } from '../lib/protocol/campaign-result';
import type { CampaignSpecInput } from '../lib/protocol/spec';

type ConfigurationSpecInput = NonNullable<CampaignSpecInput['sustained']>['configurations'][number];
import { DRIFT_NOTED, type CheckName } from '../lib/protocol/gates';
import { DEFAULT_DRIFT_LIMIT, judgeDrift, type Drift } from '../lib/protocol/drift';
import { createRigWorkers } from '../worker/run-worker';
import { rehearsalSeries, resultsOf } from './gates-rehearsals';

Runtime.install({ logger: new DefaultLogger('ERROR') });
const root = path.resolve(__dirname, '..');
const GATES: Array<CheckName | 'probe'> = ['threshold', 'dropped', 'failed', 'rows', 'quantity', 'samples', 'drift', 'delivered', 'instrument', 'probe'];

interface Run {
  config: string;
  dir: string;
  seconds: number;
  passed: boolean;
  invalid?: string;
  /** Set when the repeat was NOT JUDGED (neither a pass nor a failure): why, e.g. "drift not judgeable". */
  notJudged?: string[];
  /** Each gate: failed (with why), passed, or not checked. */
  gates: Map<string, { passed: boolean | null; detail: string }>;
  stealMax: number | null;
  loadMax: number | null;
  /** Drift as the protocol's gate would have judged it (its 95 % interval against the limit), gated or only noted. */
  driftIfGated: 'pass' | 'fail' | 'undecided' | null;
}

function rehearsal(): CampaignSpecInput {
  const spec = JSON.parse(fs.readFileSync(path.join(root, 'examples', 'rehearsal.json'), 'utf8')) as CampaignSpecInput & { $schema?: string };
  delete spec.$schema;
  return spec;
}

/** The study's campaign: the rehearsal's rig and configurations, its sustained series only. */
function studySpec(base: CampaignSpecInput, configs: ConfigurationSpecInput[], runs: number, seconds: number, calibrate: boolean, name: string): CampaignSpecInput {
  return {
    name,
    target: 'local',
    calibrate,
    watchdogMinutes: Math.ceil((runs * configs.length * (seconds + (base.sustained?.cooldownSeconds ?? 5) + 15)) / 60) * 2 + 60,
    seed: base.seed,
    sustained: { ...base.sustained!, repeats: runs, repeatSeconds: seconds, configurations: configs },
  };
}

function readRun(resultsDir: string, r: RepeatSummary, seconds: number): Run {
  const dir = path.join(resultsDir, r.dir);
  const gates = new Map<string, { passed: boolean | null; detail: string }>();
  let driftIfGated: string | null = null;
  try {
    const v = JSON.parse(fs.readFileSync(path.join(dir, 'verdict.json'), 'utf8')) as {
      gate?: { checks: Array<{ name: string; passed: boolean | null; detail: string }>; notes?: string[] };
      probe?: { verdict: string; reasons?: string[] };
      drift?: number | null;
      drift_low?: number | null;
      drift_high?: number | null;
    };
    for (const c of v.gate?.checks ?? []) gates.set(c.name, { passed: c.passed, detail: c.detail });
    // sustained.drift "noted": not a check, but the study still counts what the gate would have said.
    const noted = (v.gate?.notes ?? []).find((n) => n.startsWith(DRIFT_NOTED));
    if (noted && !gates.has('drift')) gates.set('drift', { passed: null, detail: noted });
    driftIfGated = typeof v.drift === 'number' && typeof v.drift_low === 'number' ? judgeDrift({ ratio: v.drift, ratio_low: v.drift_low, ratio_high: v.drift_high ?? null } as Drift, limitOf(gates.get('drift')?.detail)).state : null;
    if (driftIfGated === 'unjudgeable') driftIfGated = null;
    if (v.probe) gates.set('probe', { passed: v.probe.verdict === 'OFF' ? null : v.probe.verdict !== 'DEGRADED', detail: (v.probe.reasons ?? []).join('; ') || v.probe.verdict });
  } catch (err) {
    gates.set('verdict', { passed: false, detail: `verdict.json unreadable: ${(err as Error).message}` });
  }
  let stealMax: number | null = null;
  let loadMax: number | null = null;
  const hostFile = path.join(dir, 'host-samples.jsonl');
  if (fs.existsSync(hostFile)) {
    for (const line of fs.readFileSync(hostFile, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const s = JSON.parse(line) as { cpu?: { st?: number }; loadavg?: number[] };
        if (typeof s.cpu?.st === 'number') stealMax = Math.max(stealMax ?? 0, s.cpu.st);
        if (typeof s.loadavg?.[0] === 'number') loadMax = Math.max(loadMax ?? 0, s.loadavg[0]);
      } catch {
        // a torn last line
      }
    }
  }
  return { config: r.configuration, dir: r.dir, seconds, passed: r.passed, ...(r.invalid ? { invalid: r.invalid } : {}), ...(r.notJudged?.length ? { notJudged: r.notJudged } : {}), gates, stealMax, loadMax, driftIfGated: driftIfGated as Run['driftIfGated'] };
}

/** The drift limit a repeat was judged (or noted) against, as its drift detail names it ("limit x1.5"); the default when it names none. */
function limitOf(detail: string | undefined): number {
  const m = /limit x([0-9.]+)/.exec(detail ?? '');
  return m ? Number(m[1]) : DEFAULT_DRIFT_LIMIT;
}

/**
 * The same run judged by the rules before issue 34, from its own recorded checks: drift failed on the
 * point ratio alone (ratio >= limit, however few samples the thirds held), and a repeat that failed on
 * the instrument (or under steal past the bound) was the repeat's failure, never re-run. The evidence is the same; only the
 * rule differs, so "before" and "after" are the same repeats counted twice.
 */
function failedBefore(r: Run, gate: string): boolean {
  const g = r.gates.get(gate);
  if (!g) return false;
  if (gate === 'drift') {
    const m = /x([0-9.]+) \(.*limit x([0-9.]+)/.exec(g.detail);
    return m ? Number(m[1]) >= Number(m[2]) : g.passed === false;
  }
  return g.passed === false;
}

const fmt1 = (x: number | null) => (x === null ? '—' : x.toFixed(1));

function table(header: string[], rows: string[][]): string {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(w[i])).join(' | ')} |`;
  return [line(header), `|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** Per configuration and gate: failures out of runs, the steal and load of the failed runs, and one reason. */
function report(runs: Run[], label: string): string {
  const out: string[] = [];
  const configs = [...new Set(runs.map((r) => r.config))];
  const rows: string[][] = [];
  for (const c of configs) {
    const mine = runs.filter((r) => r.config === c);
    for (const g of GATES) {
      const checked = mine.filter((r) => r.gates.get(g)?.passed !== null && r.gates.has(g));
      const failed = mine.filter((r) => r.gates.get(g)?.passed === false);
      const steal = failed.map((r) => r.stealMax).filter((x): x is number => x !== null);
      const load = failed.map((r) => r.loadMax).filter((x): x is number => x !== null);
      rows.push([
        c,
        g,
        `${failed.length}/${mine.length}${checked.length < mine.length ? ` (${mine.length - checked.length} not checked)` : ''}`,
        `${mine.filter((r) => failedBefore(r, g)).length}/${mine.length}`,
        failed.length ? `${fmt1(Math.max(...steal, 0))} %` : '',
        failed.length ? fmt1(Math.max(...load, 0)) : '',
        failed.length ? (failed[0].gates.get(g)?.detail ?? '').slice(0, 140) : '',
      ]);
    }
    // Drift as the gate would have judged it, also where the campaign only noted it (sustained.drift "noted").
    const judged = mine.filter((r) => r.driftIfGated !== null);
    const would = (s: Run['driftIfGated']) => mine.filter((r) => r.driftIfGated === s).length;
    rows.push([c, `drift at x${DEFAULT_DRIFT_LIMIT} (if gated)`, `${would('fail')} fail, ${would('undecided')} not judged / ${judged.length}`, `${mine.filter((r) => failedBefore(r, 'drift')).length}/${mine.length}`, '', '', mine.some((r) => r.gates.get('drift')?.passed === null && r.gates.get('drift')?.detail.startsWith(DRIFT_NOTED)) ? 'noted, not gated, in these runs (sustained.drift "noted")' : '']);
    // A repeat NOT JUDGED (its drift interval straddled the limit) is neither a pass nor a failure.
    const unjudged = mine.filter((r) => !r.passed && !r.invalid && r.notJudged);
    const failedRuns = mine.filter((r) => !r.passed && !r.notJudged);
    rows.push([c, 'NOT JUDGED (repeat)', `${unjudged.length}/${mine.length}`, '—', '', '', unjudged.length ? `${unjudged[0].notJudged!.join(', ')}: ${(unjudged[0].gates.get('drift')?.detail ?? '').slice(0, 100)}` : '']);
    rows.push([c, 'ANY (repeat FAIL)', `${failedRuns.length}/${mine.length}`, `${mine.filter((r) => GATES.some((g) => failedBefore(r, g))).length}/${mine.length}`, '', '', mine.filter((r) => r.invalid).length ? `${mine.filter((r) => r.invalid).length} invalid (the instrument's, re-run)` : '']);
  }
  out.push(`## ${label}`, '', table(['configuration', 'gate', 'failed / runs', 'before (plain rules)', 'steal max (failed runs)', 'load1 max (failed runs)', 'why (first failure)'], rows));
  const steal = runs.map((r) => r.stealMax).filter((x): x is number => x !== null).sort((a, b) => a - b);
  const load = runs.map((r) => r.loadMax).filter((x): x is number => x !== null).sort((a, b) => a - b);
  const mid = (xs: number[]) => (xs.length ? xs[Math.floor(xs.length / 2)] : null);
  out.push('', `host over all ${runs.length} runs: CPU steal max per run median ${fmt1(mid(steal))} %, max ${fmt1(steal.at(-1) ?? null)} %; load1 max per run median ${fmt1(mid(load))}, max ${fmt1(load.at(-1) ?? null)} (${os.cpus().length} cores)`);
  return out.join('\n');
}

async function campaign(spec: CampaignSpecInput, address: string, client: import('@temporalio/client').Client): Promise<CampaignResult> {
  const { connection, workers } = await createRigWorkers({ env: { address, namespace: 'default' } });
  const running = Promise.all(workers.map((w) => w.run()));
  try {
    return (await client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: `${spec.name}-${Date.now()}`, args: [spec] })) as CampaignResult;
  } finally {
    workers.forEach((w) => w.shutdown());
    await running;
    await connection.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '30' },
      configs: { type: 'string' },
      seconds: { type: 'string' },
      long: { type: 'boolean', default: false },
      calibrate: { type: 'boolean', default: false },
      rehearsals: { type: 'string' },
      from: { type: 'string' },
    },
  });
  const base = rehearsal();
  if (values.rehearsals !== undefined || values.from !== undefined) {
    const n = Number(values.rehearsals ?? 0);
    if (values.rehearsals !== undefined && (!Number.isInteger(n) || n < 1)) throw new Error(`--rehearsals ${values.rehearsals}: give a whole number >= 1`);
    const series = values.from !== undefined ? resultsOf(values.from.split(',')) : await rehearsalSeries(root, n);
    console.log(`bench:gates on ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, ${new Date().toISOString().slice(0, 16)}Z`);
    console.log(series.table);
    const all = series.campaigns.flatMap((c) => c.result.repeats.filter((x) => x.kind === 'sustained').map((x) => readRun(c.result.resultsDir, x, c.seconds)));
    console.log(`\n${report(all, `${series.campaigns.length} rehearsal(s): ${all.length} repeats (examples/rehearsal.json as it stands)`)}`);
    return;
  }
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs ${values.runs}: give a whole number >= 1`);
  const all = base.sustained!.configurations;
  const names = values.configs ? values.configs.split(',') : all.map((c) => c.name);
  const configs = names.map((n) => all.find((c) => c.name === n) ?? (() => { throw new Error(`--configs: no configuration ${n} in examples/rehearsal.json (${all.map((c) => c.name).join(', ')})`); })());
  const seconds = values.seconds ? Number(values.seconds) : base.sustained!.repeatSeconds;
  if (!Number.isInteger(seconds) || seconds < 1) throw new Error(`--seconds ${values.seconds}: give a whole number of seconds >= 1`);

  const server = await startCampaignServer('rig-bench-gates-');
  try {
    const sections: string[] = [];
    console.error(`bench:gates: ${runs} runs x ${seconds} s of ${names.join(', ')} on the local rig...`);
    const r = await campaign(studySpec(base, configs, runs, seconds, values.calibrate, 'gates'), server.address, server.client);
    console.error(`  campaign ${r.status}: ${r.configurations.map((c) => `${c.name} ${c.passed}/${c.total}`).join(', ')}`);
    sections.push(report(r.repeats.map((x) => readRun(r.resultsDir, x, seconds)), `${runs} runs x ${seconds} s per configuration (examples/rehearsal.json's rates)`));
    if (values.long) {
      console.error('bench:gates: one 10-minute repeat of each configuration...');
      const l = await campaign(studySpec(base, configs, 1, 600, values.calibrate, 'gates-long'), server.address, server.client);
      sections.push(report(l.repeats.map((x) => readRun(l.resultsDir, x, 600)), '1 run x 600 s per configuration (the protocol\'s repeat length)'));
    }
    console.log(`bench:gates on ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, ${new Date().toISOString().slice(0, 16)}Z, calibrated: ${values.calibrate ? 'yes' : 'no'}`);
    console.log(sections.join('\n\n'));
  } finally {
    await server.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

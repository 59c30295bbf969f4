// bench:soak (issue 35 item 4): the one-hour soak of examples/soak.json on the local rig, and a row per
// 10-min window: its requests, its p99 beside the window limit (the per-window gate), the generator's
// RSS in that window beside the first window's (is the generator's memory bounded?), and its parts:
// anonymous and file-backed pages (Linux's split: a leak grows the first), V8's heap and external
// memory (which of the process's own allocations), and the host's CPU steal and load. Under it: the
// RSS slopes over the run (lib/protocol/memory-trend.ts) and the campaign's verdict. Nothing here
// judges: the gates are the campaign's; this re-reads its evidence.
//
//   npm run bench:soak                       runs `rig rehearse examples/soak.json` (about 70 min), then the table
//   npm run bench:soak -- --from DIR         the table of a soak already run (its results folder)
//   npm run bench:soak -- --spec FILE        another soak spec (a configuration with workload.windowSeconds)
//   npm run bench:soak -- --hours 2          the spec's soak made H hours long (its watchdog stretched to cover it)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HOST_SAMPLES, LOAD, RESULT_FILE, SAMPLES, SPEC_FILE } from '../lib/evidence/layout';
import { analyzeFile } from '../lib/loadgen/analyze-file';
import type { CampaignResult } from '../lib/protocol/campaign-result';
import { mbPerHour } from '../lib/evidence/report/workload';
import { memoryTrend, type MemorySeries } from '../lib/protocol/memory-trend';
import { median } from '../lib/protocol/percentile';
import { watchdogNeed } from '../lib/protocol/plan';
import { parseCampaignSpec } from '../lib/protocol/spec';

const root = path.resolve(__dirname, '..');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};

function run(spec: string): string {
  const summary = path.join(os.tmpdir(), `rig-soak-${process.pid}.json`);
  process.stderr.write(`bench:soak: node bin/rig.cjs rehearse ${spec} (the repeat alone is ${repeatSecondsOf(spec) / 60} min)\n`);
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'rig.cjs'), 'rehearse', spec, '--summary-export', summary], { stdio: 'inherit', cwd: root });
  if (!fs.existsSync(summary)) throw new Error(`rig rehearse ended (exit ${r.status}) without a summary: see its output above`);
  return (JSON.parse(fs.readFileSync(summary, 'utf8')) as { resultsDir: string }).resultsDir;
}

/**
 * A copy of the soak spec `file` whose one repeat lasts `hours`, named for it, with watchdogMinutes
 * raised to what the plan then needs (the spec check's own rule, lib/protocol/plan.ts), in a temporary
 * folder: the spec in examples/ stays the one-hour soak.
 */
function lengthened(file: string, hours: number): string {
  if (!(hours > 0 && hours <= 48)) throw new Error(`--hours must be within (0, 48], got ${hours}`);
  const input = JSON.parse(fs.readFileSync(file, 'utf8')) as { name: string; watchdogMinutes: number; sustained: { repeatSeconds: number } };
  input.name = `${input.name}-${hours}h`;
  input.sustained.repeatSeconds = Math.round(hours * 3600);
  input.watchdogMinutes = Math.max(input.watchdogMinutes, watchdogNeed(parseCampaignSpec(input)).minutes);
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rig-soak-')), `${input.name}.json`);
  fs.writeFileSync(out, `${JSON.stringify(input, null, 2)}\n`);
  return out;
}

function repeatSecondsOf(spec: string): number {
  return (JSON.parse(fs.readFileSync(spec, 'utf8')) as { sustained: { repeatSeconds: number } }).sustained.repeatSeconds;
}

interface SpecConfig {
  name: string;
  p99LimitMs: number;
  workload?: { windowSeconds?: number; windowP99LimitMs?: number };
}

const f1 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(1));
const f2 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(2));
const rate = (x: number | null) => (x === null ? '—' : mbPerHour(x));

interface HostRow {
  t?: string;
  cpu?: { st?: number };
  loadavg?: number[];
}

/** Max steal % and load1 of the host samples whose time falls in [from, to) s after the load's start. */
function hostIn(rows: readonly HostRow[], startMs: number, from: number, to: number): { steal: number | null; load: number | null } {
  let steal: number | null = null;
  let load: number | null = null;
  for (const s of rows) {
    const at = Date.parse(s.t ?? '');
    if (!Number.isFinite(at) || at < startMs + from * 1000 || at >= startMs + to * 1000) continue;
    if (typeof s.cpu?.st === 'number') steal = Math.max(steal ?? 0, s.cpu.st);
    if (typeof s.loadavg?.[0] === 'number') load = Math.max(load ?? 0, s.loadavg[0]);
  }
  return { steal, load };
}

async function main(): Promise<void> {
  const given = path.resolve(arg('--spec') ?? path.join(root, 'examples', 'soak.json'));
  const hours = arg('--hours');
  const spec = hours === undefined ? given : lengthened(given, Number(hours));
  const dir = arg('--from') ?? run(spec);
  const result = JSON.parse(fs.readFileSync(path.join(dir, RESULT_FILE), 'utf8')) as CampaignResult;
  const campaignSpec = JSON.parse(fs.readFileSync(path.join(dir, SPEC_FILE), 'utf8')) as { sustained?: { repeatSeconds: number; configurations: SpecConfig[] } };
  const configs = campaignSpec.sustained?.configurations ?? [];
  console.log(`\n## bench:soak: ${result.campaignId ?? path.basename(dir)}\n`);
  console.log(`${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), node ${process.version}; results ${dir}\n`);
  for (const x of result.repeats) {
    const cfg = configs.find((c) => c.name === x.configuration);
    const windowS = cfg?.workload?.windowSeconds;
    if (!cfg || !windowS || x.kind !== 'sustained') continue;
    const at = (f: string) => path.join(result.resultsDir, x.dir, f);
    const load = JSON.parse(fs.readFileSync(at(LOAD), 'utf8')) as { started_at: string; generator?: { memory?: MemorySeries; cpu_us_per_request?: number | null } };
    const mem = load.generator?.memory;
    const { analysis } = await analyzeFile(at(SAMPLES), { durationS: campaignSpec.sustained?.repeatSeconds, windowSeconds: windowS });
    const limit = cfg.workload?.windowP99LimitMs ?? cfg.p99LimitMs;
    const startMs = Date.parse(load.started_at);
    // Read once for every window; a torn line (the sampler stopped mid-write) is left out.
    const hostRows = fs.existsSync(at(HOST_SAMPLES)) ? fs.readFileSync(at(HOST_SAMPLES), 'utf8').split('\n').flatMap((l) => { try { return [JSON.parse(l) as HostRow]; } catch { return []; } }) : [];
    const inWindow = (xs: number[] | undefined, from: number, to: number) => {
      const v = (xs ?? []).filter((_, i) => i * (mem?.every_s ?? 1) >= from && i * (mem?.every_s ?? 1) < to);
      return v.length ? median(v) : null;
    };
    const rss0 = mem ? inWindow(mem.rss_mb, 0, windowS) : null;
    console.log(`### ${x.configuration} r${x.index}-a${x.attempt}: ${x.passed ? 'passed' : `failed (${(x.reasons ?? []).join('; ')})`}\n`);
    console.log('| window | requests | p99 ms | limit ms | verdict | generator RSS MB (median) | vs first window | anonymous MB | file-backed MB | heap used MB | heap committed MB | external MB | host steal max % | load1 max |');
    console.log('|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const w of analysis.ingest.per_window ?? []) {
      const p99 = w.p99_us === null ? null : w.p99_us / 1000;
      const rss = mem ? inWindow(mem.rss_mb, w.from_s, w.to_s) : null;
      const heap = mem ? inWindow(mem.heap_used_mb, w.from_s, w.to_s) : null;
      const heapTotal = mem?.heap_total_mb ? inWindow(mem.heap_total_mb, w.from_s, w.to_s) : null;
      const external = mem?.external_mb ? inWindow(mem.external_mb, w.from_s, w.to_s) : null;
      const anon = mem?.rss_anon_mb ? inWindow(mem.rss_anon_mb, w.from_s, w.to_s) : null;
      const file = mem?.rss_file_mb ? inWindow(mem.rss_file_mb, w.from_s, w.to_s) : null;
      const h = hostIn(hostRows, startMs, w.from_s, w.to_s);
      const vs = rss !== null && rss0 !== null ? `${rss - rss0 >= 0 ? '+' : ''}${(rss - rss0).toFixed(1)}` : '—';
      console.log(`| ${w.from_s}-${w.to_s} s${w.partial ? ' (partial)' : ''} | ${w.samples} | ${f2(p99)} | ${limit} | ${p99 !== null && p99 <= limit ? 'within' : 'over'} | ${f1(rss)} | ${vs} | ${f1(anon)} | ${f1(file)} | ${f1(heap)} | ${f1(heapTotal)} | ${f1(external)} | ${f1(h.steal)} | ${f2(h.load)} |`);
    }
    const t = mem ? memoryTrend(mem) : null;
    console.log(
      t
        ? `\nGenerator RSS: ${f1(t.first_mb)} MB over the first tenth, ${f1(t.last_mb)} MB over the last (max ${f1(t.max_mb)}); slope after the first tenth ${rate(t.slope_mb_per_h)}, over the second half ${rate(t.second_half_slope_mb_per_h)} (a plateau reads ~0 there, a leak its whole rate)${t.anon_slope_mb_per_h === undefined ? '' : `; anonymous memory ${f1(t.anon_first_mb)} -> ${f1(t.anon_last_mb)} MB, slope ${rate(t.anon_slope_mb_per_h)}; file-backed ${f1(t.file_first_mb)} -> ${f1(t.file_last_mb)} MB`} (${t.samples} samples every ${mem?.every_s} s over ${t.span_s} s). CPU ${f2(load.generator?.cpu_us_per_request)} µs/request.`
        : '\nGenerator RSS: not in load.json (a generator older than the memory series).',
    );
  }
  const ends = result.configurations.map((c) => `${c.name}: ${c.held ? 'held' : c.notJudged ? `not judged (${c.notJudged})` : 'not held'}`).join('; ');
  console.log(`\nCampaign: ${result.status}; ${ends}.`);
}

main().catch((err: unknown) => {
  console.error(`bench:soak: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

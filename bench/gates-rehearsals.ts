// bench:gates --rehearsals N / --from DIRS (issue 34): `npm start` as a newcomer runs it, N times one
// after another, and a line per rehearsal: its verdict, each configuration's state (held, not held,
// not judged (drift) or (instrument)), the host's CPU steal and load while it measured. Each
// rehearsal's result.json then feeds bench/gates.ts's per-gate table, so the must-show "HELD in at
// least 9 of 10 consecutive runs, with the steal" and the A/A study (30 repeats of each
// configuration) are one run. Nothing here judges: it prints what the rig said.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HOST_SAMPLES, RESULT_FILE, SPEC_FILE } from '../lib/evidence/layout';
import type { CampaignResult } from '../lib/protocol/campaign-result';
import { configurationEnds } from '../lib/protocol/configuration-state';

export interface StudiedCampaign {
  result: CampaignResult;
  /** The spec's repeat length (s), for the gates' table. */
  seconds: number;
  startedAt: string;
  minutes: number | null;
  exitCode: number | null;
}

/** The host's CPU steal and load1 over a campaign's sustained repeats (max of each repeat's samples). */
function hostOf(r: CampaignResult): { steal: number | null; load: number | null } {
  return hostOfAttempts(r.repeats.map((x) => path.join(r.resultsDir, x.dir)));
}

/** The host's CPU steal and load1 maxima over attempts' folders (their host-samples.jsonl; bench:sensitivity too). */
export function hostOfAttempts(dirs: readonly string[]): { steal: number | null; load: number | null } {
  let steal: number | null = null;
  let load: number | null = null;
  for (const dir of dirs) {
    const f = path.join(dir, HOST_SAMPLES);
    if (!fs.existsSync(f)) continue;
    for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
      try {
        const s = JSON.parse(line) as { cpu?: { st?: number }; loadavg?: number[] };
        if (typeof s.cpu?.st === 'number') steal = Math.max(steal ?? 0, s.cpu.st);
        if (typeof s.loadavg?.[0] === 'number') load = Math.max(load ?? 0, s.loadavg[0]);
      } catch {
        // an empty or torn line
      }
    }
  }
  return { steal, load };
}

function readResult(dir: string): CampaignResult {
  const file = path.join(dir, RESULT_FILE);
  if (!fs.existsSync(file)) throw new Error(`${dir}: no ${RESULT_FILE} (give a campaign's results folder)`);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as CampaignResult;
}

function seconds(dir: string): number {
  try {
    const spec = JSON.parse(fs.readFileSync(path.join(dir, SPEC_FILE), 'utf8')) as { sustained?: { repeatSeconds?: number } };
    return spec.sustained?.repeatSeconds ?? 45;
  } catch {
    return 45;
  }
}

const f1 = (x: number | null) => (x === null ? '—' : x.toFixed(1));

function lines(cs: StudiedCampaign[]): string {
  const names = [...new Set(cs.flatMap((c) => c.result.configurations.map((x) => x.name)))];
  const header = ['run', 'started (UTC)', 'minutes', 'exit', 'verdict', ...names, 'steal max %', 'load1 max'];
  const rows = cs.map((c, i) => {
    const ends = configurationEnds(c.result);
    const host = hostOf(c.result);
    return [
      String(i + 1),
      c.startedAt.slice(0, 16).replace('T', ' '),
      f1(c.minutes),
      c.exitCode === null ? '—' : String(c.exitCode),
      c.result.status.toUpperCase(),
      ...names.map((n) => {
        const e = ends.find((x) => x.name === n);
        return e ? `${e.passed}/${e.total} ${e.state}${e.invalid ? ` (+${e.invalid} invalid)` : ''}` : '—';
      }),
      f1(host.steal),
      f1(host.load),
    ];
  });
  const held = cs.filter((c) => c.result.status === 'held').length;
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((x, i) => x.padEnd(w[i])).join(' | ')} |`;
  return [`## ${cs.length} rehearsal(s): HELD in ${held} of ${cs.length}`, '', line(header), `|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The table from results folders of campaigns that already ran. */
export function resultsOf(dirs: string[]): { campaigns: StudiedCampaign[]; table: string } {
  const campaigns = dirs.map((d) => {
    const result = readResult(path.resolve(d));
    return { result: { ...result, resultsDir: path.resolve(d) }, seconds: seconds(d), startedAt: fs.statSync(path.join(d, RESULT_FILE)).mtime.toISOString(), minutes: null, exitCode: null };
  });
  return { campaigns, table: lines(campaigns) };
}

/** `node bin/rig.cjs rehearse` n times, one after another; each one's output kept beside its summary. */
export async function rehearsalSeries(root: string, n: number): Promise<{ campaigns: StudiedCampaign[]; table: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-bench-rehearsals-'));
  const campaigns: StudiedCampaign[] = [];
  for (let i = 1; i <= n; i++) {
    const summary = path.join(dir, `rehearsal-${i}.json`);
    const log = path.join(dir, `rehearsal-${i}.log`);
    const startedAt = new Date();
    console.error(`bench:gates: rehearsal ${i} of ${n} (${startedAt.toISOString().slice(11, 19)}Z; output in ${log})...`);
    const exitCode = await new Promise<number | null>((resolve) => {
      const out = fs.openSync(log, 'w');
      const child = spawn(process.execPath, [path.join(root, 'bin', 'rig.cjs'), 'rehearse', '--summary-export', summary], { cwd: root, stdio: ['ignore', out, out] });
      child.on('exit', (code) => {
        fs.closeSync(out);
        resolve(code);
      });
    });
    if (!fs.existsSync(summary)) {
      console.error(`  rehearsal ${i}: exit ${exitCode}, no summary (see ${log}); not counted`);
      continue;
    }
    const s = JSON.parse(fs.readFileSync(summary, 'utf8')) as { resultsDir: string };
    const result = readResult(s.resultsDir);
    campaigns.push({ result, seconds: seconds(s.resultsDir), startedAt: startedAt.toISOString(), minutes: (Date.now() - startedAt.getTime()) / 60_000, exitCode });
    console.error(`  rehearsal ${i}: ${result.status.toUpperCase()} (exit ${exitCode})`);
  }
  return { campaigns, table: lines(campaigns) };
}

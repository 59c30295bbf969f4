// npm run docs:pictures [-- FOLDER|CAMPAIGN_ID [--watch TRANSCRIPT.json]]
//
// The README's two pictures, taken again so they never go stale: the report page of a real rehearsal
// in Chromium, and `rig campaign watch` following that rehearsal. Without an argument it runs a
// rehearsal (`rig rehearse`, as `npm start` does; about 11 minutes on a 2-core host), follows it from
// a second process with `rig campaign watch` and keeps that transcript; given a results folder (or a
// campaign id under RIG_RESULTS) it photographs that campaign's page, with the transcript an earlier
// run of this script kept (state/docs-pictures/transcripts/<id>/campaign-watch.json) or one given with --watch.
// Chromium is driven as the browser test drives it (test/evidence/browser.test.ts: Debian's chromium
// through playwright-core, which downloads no browser); `npm run setup:browser` installs it.
//
// It runs on a dev server and a state folder of its own (state/docs-pictures/: RIG_STATE_DIR for the
// commands it starts, a free port, a new server database each run), stopped at the end: the rehearsal never meets a dev server whose
// Worker Deployment has another build current (a checkout with new commits would otherwise start its
// campaign on the old build, with no worker), and `npm start`'s server and results stay untouched.
//
// Writes docs/pictures/report.png, campaign-watch.png, campaign-watch.txt and source.json (which
// campaign, its status, when). Exit 0 when the pictures come from a rehearsal that ran end to end;
// 1 when they were written from one that did not (the page then shows why: on a loaded host the
// calibration may refuse it), 2 when there is nothing to photograph or no Chromium.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { terminalPageHtml, type TerminalPage } from '../lib/docs/terminal-page';
import { freePort } from '../lib/tools/free-port';
import { projectRoot, resultsDir, stateDir } from '../lib/tools/paths';

const CHROMIUM = process.env.RIG_CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const RIG = path.join(projectRoot, 'bin', 'rig.cjs');
const OUT = path.join(projectRoot, 'docs', 'pictures');
/** The state folder of every command this script starts (its dev server, rigs and results). */
const OWN_STATE = path.join(stateDir(), 'docs-pictures');
process.env.RIG_STATE_DIR = OWN_STATE;

class Refusal extends Error {}

/** Runs `rig ARGS`; each line of its stdout and stderr goes to onLine as it comes. */
function runRig(args: string[], onLine: (line: string) => void, env: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<number | null> } {
  const child = spawn(process.execPath, [RIG, ...args], { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const streams = [child.stdout!, child.stderr!].map((s) => new Promise<void>((resolve) => readline.createInterface({ input: s }).on('line', onLine).on('close', resolve)));
  const done = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => void Promise.all(streams).then(() => resolve(code)));
  });
  return { child, done };
}

/** A rehearsal, followed by `rig campaign watch` from a second process: its id, exit code and the watch transcript. */
async function rehearse(): Promise<{ id: string; code: number | null; watch: TerminalPage }> {
  const port = await freePort();
  const uiPort = await freePort();
  const dev = ['--port', String(port), '--ui-port', String(uiPort)];
  // A fresh server each time: an earlier run's would keep that run's build as the Worker
  // Deployment's current version, and this checkout's campaign would start on it with no worker.
  fs.rmSync(path.join(OWN_STATE, 'temporal'), { recursive: true, force: true });
  const up = await runRig(['dev', 'up', ...dev], (l) => console.log(l)).done;
  if (up !== 0) throw new Refusal(`rig dev up ${dev.join(' ')} exited ${up} (see above)`);
  try {
    return await rehearseOn({ TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
  } finally {
    await runRig(['dev', 'down', ...dev], (l) => console.log(l)).done;
  }
}

/** The transcript of `rig campaign watch ID`, started again while it could not reach Temporal and the rehearsal still runs (a loaded host can miss the connect timeout). */
async function follow(id: string, env: NodeJS.ProcessEnv, children: ChildProcess[], rehearsalRunning: () => boolean): Promise<TerminalPage> {
  for (;;) {
    const lines: string[] = [];
    const w = runRig(['campaign', 'watch', id], (l) => lines.push(l), env);
    children.push(w.child);
    const code = await w.done;
    if (code !== 69 || !rehearsalRunning()) return { command: `npx rig campaign watch ${id}`, lines, exitCode: code };
    console.error(`docs:pictures: rig campaign watch could not reach Temporal (exit 69): starting it again`);
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

async function rehearseOn(env: NodeJS.ProcessEnv): Promise<{ id: string; code: number | null; watch: TerminalPage }> {
  let id: string | undefined;
  let watch: Promise<TerminalPage> | undefined;
  let running = true;
  const children: ChildProcess[] = [];
  const stop = () => children.forEach((c) => c.kill('SIGINT'));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // A loaded host answers slowly: give the watch's connect more than the default 10 s.
  const watchEnv = { ...env, RIG_TEMPORAL_CONNECT_TIMEOUT_MS: process.env.RIG_TEMPORAL_CONNECT_TIMEOUT_MS ?? '60000' };
  const r = runRig(['rehearse'], (line) => {
    console.log(line);
    const m = /^campaign (\S+) started/.exec(line);
    if (m && !watch) {
      id = m[1];
      watch = follow(id, watchEnv, children, () => running);
    }
  }, env);
  children.push(r.child);
  const code = await r.done;
  running = false;
  if (!id || !watch) throw new Refusal(`rig rehearse exited ${code} before its campaign started (see above): nothing to photograph`);
  return { id, code, watch: await watch };
}

function transcriptFile(id: string): string {
  return path.join(OWN_STATE, 'transcripts', id, 'campaign-watch.json');
}

async function photograph(folder: string, watch: TerminalPage): Promise<void> {
  const page = path.join(folder, 'report.html');
  if (!fs.existsSync(page)) throw new Refusal(`${page} does not exist: give a campaign's results folder (rig report ${folder} --format html --out ${page} makes the page)`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-docs-pictures-'));
  const context = await chromium.launchPersistentContext(path.join(tmp, 'profile'), { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1280, height: 1000 } });
  try {
    const report = await context.newPage();
    await report.goto(pathToFileURL(page).href);
    await report.waitForSelector('body[data-charts]', { timeout: 60_000 });
    await report.screenshot({ path: path.join(OUT, 'report.png') });
    const termHtml = path.join(tmp, 'campaign-watch.html');
    fs.writeFileSync(termHtml, terminalPageHtml(watch));
    const term = await context.newPage();
    await term.setViewportSize({ width: 1280, height: 200 });
    await term.goto(pathToFileURL(termHtml).href);
    await term.screenshot({ path: path.join(OUT, 'campaign-watch.png'), fullPage: true });
  } finally {
    await context.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({ args: process.argv.slice(2), options: { watch: { type: 'string' } }, allowPositionals: true, strict: true });
  if (!fs.existsSync(CHROMIUM)) throw new Refusal(`no Chromium at ${CHROMIUM}: npm run setup:browser installs Debian's chromium (or set RIG_CHROMIUM)`);
  let id: string;
  let folder: string;
  let watch: TerminalPage;
  let rehearsalCode: number | null = 0;
  if (positionals.length === 0) {
    const r = await rehearse();
    id = r.id;
    folder = path.join(resultsDir(), id);
    watch = r.watch;
    rehearsalCode = r.code;
    fs.mkdirSync(path.dirname(transcriptFile(id)), { recursive: true });
    fs.writeFileSync(transcriptFile(id), `${JSON.stringify(watch, null, 2)}\n`);
  } else {
    const given = positionals[0];
    folder = fs.existsSync(given) ? path.resolve(given) : path.join(resultsDir(), given);
    id = path.basename(folder);
    const from = values.watch ?? transcriptFile(id);
    if (!fs.existsSync(from)) throw new Refusal(`no transcript of rig campaign watch for ${id} at ${from}: run npm run docs:pictures without a folder (it keeps one), or give --watch FILE`);
    watch = JSON.parse(fs.readFileSync(from, 'utf8')) as TerminalPage;
  }
  const result = JSON.parse(fs.readFileSync(path.join(folder, 'result.json'), 'utf8')) as { status?: string };
  fs.mkdirSync(OUT, { recursive: true });
  await photograph(folder, watch);
  fs.writeFileSync(path.join(OUT, 'campaign-watch.txt'), `$ ${watch.command}\n${watch.lines.join('\n')}\n`);
  const source = { campaign: id, status: result.status ?? 'unknown', rehearsalExitCode: rehearsalCode, host: os.hostname(), cpus: os.cpus().length, takenAt: new Date().toISOString() };
  fs.writeFileSync(path.join(OUT, 'source.json'), `${JSON.stringify(source, null, 2)}\n`);
  console.log(`docs/pictures: report.png and campaign-watch.png from campaign ${id} (${source.status})`);
  if (rehearsalCode !== 0) {
    console.error(`the rehearsal did not run end to end (exit ${rehearsalCode}): the pictures show why; run it again on a quieter host`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`docs:pictures: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(err instanceof Refusal ? 2 : 1);
  },
);

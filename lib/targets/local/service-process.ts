// The service under test as a detached process: the reference service, or the user's build started by
// `service.run.command` (issue 14). It outlives the orchestrator that started it (like the postmaster),
// writes stdout+stderr to a log file in the rig folder, and is marked with the rig's environment
// variables so that it can be found and identified later (a user's command has no script of ours in its
// argv: the marker alone proves it is ours).
//
// The environment is the contract of docs/your-service.md, "The service contract": DATABASE_URL (the
// app role), HOST and PORT (where to listen; HC_* twins for the reference service), then the settings
// (lib/protocol/service-spec.ts settingsEnv), on top of the worker's own environment without its
// Temporal and AWS credentials, which the service under test has no use for.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { HEALTH_PATH } from '../../protocol/hardcount-api';
import { settingsEnv } from '../../protocol/service-spec';
import { freePort, portAnswers } from '../../tools/free-port';
import { projectRoot } from '../../tools/paths';
import type { ServiceParameters } from '../target';
import { isAlive, pidMatches, processGroup, scanMarkedProcesses, sleep, waitGone } from './proc';
import { MARKER_CAMPAIGN, MARKER_RESOURCE, MARKER_RIG_DIR } from './rig-paths';

/** The script, relative to the project root: /proc/<pid>/cmdline must end with it before we signal. */
export const SERVICE_SCRIPT = 'reference/main.ts';

export interface StartServiceOptions {
  campaignId: string;
  /** Ledger id of this service ('service-1', ...). */
  resourceId: string;
  rigDir: string;
  /** The app role's URL, with its password (the service's env only; never logged). */
  databaseUrl: string;
  service: ServiceParameters;
  logFile: string;
  pidFile: string;
  /** Called synchronously right after spawn, before anything can fail: record the pid in the ledger. */
  onSpawned(pid: number): void;
  readyTimeoutMs?: number;
  /** Where it listens: default loopback on a free port (the local rig); an AWS app node listens on its own address. */
  listen?: { host: string; port: number };
}

export interface StartedService {
  pid: number;
  port: number;
  url: string;
}

/** The worker's environment as a service inherits it: without the orchestrator's credentials, nor the test runner's marks. */
function inheritedEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    // Test-runner variables would make a service started from a test behave like a test.
    if (/^(TEMPORAL_|AWS_)/.test(k) || k === 'NODE_TEST_CONTEXT') continue;
    env[k] = v;
  }
  return env;
}

/** The service's whole environment: inherited, then its settings, then what the rig owns (which always wins). */
export function serviceEnv(opts: Pick<StartServiceOptions, 'campaignId' | 'resourceId' | 'rigDir' | 'databaseUrl' | 'service'>, listen: { host: string; port: number }): NodeJS.ProcessEnv {
  const s = opts.service;
  return {
    ...inheritedEnv(),
    ...(s.poolSize !== undefined ? { HC_POOL_SIZE: String(s.poolSize) } : {}),
    ...settingsEnv(s),
    HOST: listen.host,
    PORT: String(listen.port),
    HC_HOST: listen.host,
    HC_PORT: String(listen.port),
    DATABASE_URL: opts.databaseUrl,
    HC_DATABASE_URL: opts.databaseUrl,
    [MARKER_CAMPAIGN]: opts.campaignId,
    [MARKER_RESOURCE]: opts.resourceId,
    [MARKER_RIG_DIR]: opts.rigDir,
  };
}

/** What to spawn: the reference service through tsx from the project, or the spec's argv in its folder. */
function program(opts: StartServiceOptions): { file: string; args: string[]; cwd: string; what: string } {
  const run = opts.service.run;
  if (!run) return { file: process.execPath, args: ['--import', 'tsx', path.join(projectRoot, SERVICE_SCRIPT)], cwd: projectRoot, what: 'the reference service' };
  if (!run.command) throw new Error('service.run.image: a container image is started by the aws app node (docker run), not as a local process');
  return { file: run.command[0], args: run.command.slice(1), cwd: run.cwd ?? opts.rigDir, what: `the service (${run.command[0]})` };
}

/** The {"listening": ..., "pid": ...} line the service prints once it accepts connections. */
function listeningLine(log: string): { listening: string; pid: number } | undefined {
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const v = JSON.parse(line) as { listening?: unknown; pid?: unknown };
      if (typeof v.listening === 'string') return { listening: v.listening, pid: Number(v.pid) };
    } catch {
      // not the line we want
    }
  }
  return undefined;
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export async function startService(opts: StartServiceOptions): Promise<StartedService> {
  const run = opts.service.run;
  const prog = program(opts);
  const host = opts.listen?.host ?? '127.0.0.1';
  // The reference service takes port 0 and says which it got; a user's build is given its port (the
  // spec's fixed one, or a free one the rig picked) and is ready when that port answers /healthz.
  const port = run ? (run.port ?? opts.listen?.port ?? (await freePort(host))) : (opts.listen?.port ?? 0);
  const probe = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  if (run && (await portAnswers(host === '0.0.0.0' ? '127.0.0.1' : host, port))) {
    throw new Error(`${host}:${port} already answers before ${prog.what} started: something else listens there`);
  }
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const out = fs.openSync(opts.logFile, 'a', 0o600);
  let pid: number | undefined;
  try {
    const child = spawn(prog.file, prog.args, {
      cwd: prog.cwd,
      env: serviceEnv(opts, { host, port }),
      detached: true, // its own process group and session: the orchestrator's death or Ctrl-C does not reach it
      stdio: ['ignore', out, out],
    });
    // A program that cannot be executed is reported on the child's 'error' event; its pid is undefined.
    child.on('error', () => undefined);
    pid = child.pid;
    if (pid === undefined) throw new Error(`could not start ${prog.what}: see ${opts.logFile}`);
    opts.onSpawned(pid);
    child.unref();
  } finally {
    fs.closeSync(out);
  }
  fs.writeFileSync(opts.pidFile, `${pid}\n`);
  const timeoutMs = opts.readyTimeoutMs ?? (run ? run.readyTimeoutSeconds * 1000 : 60_000);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (run) {
      if (await healthy(probe)) return { pid, port, url: probe };
    } else {
      const line = listeningLine(fs.readFileSync(opts.logFile, 'utf8'));
      if (line) {
        const url = new URL(line.listening);
        const base = `${url.protocol}//${url.host}`;
        if (await healthy(base)) return { pid, port: Number(url.port), url: base };
      }
    }
    if (!isAlive(pid)) {
      throw new Error(`${prog.what} exited during start-up (it must stay in the foreground); last lines of ${opts.logFile}:\n${tail(opts.logFile)}`);
    }
    await sleep(200);
  }
  throw new Error(`${prog.what} did not answer ${run ? probe : ''}${HEALTH_PATH} with 200 within ${timeoutMs} ms; last lines of ${opts.logFile}:\n${tail(opts.logFile)}`);
}

/** True when GET /healthz answers 200. */
export async function healthy(baseUrl: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const res = await fetch(baseUrl + HEALTH_PATH, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

export type StopOutcome = 'stopped' | 'gone' | 'not-ours';

/**
 * Stop the service the ledger recorded: only when /proc/<pid> is still that process (its marker names
 * this campaign and resource; for the reference service its argv also has the script, `who.script`).
 * A user's command carries no script of ours, so its marker must be readable. SIGTERM its group, then
 * SIGKILL after graceMs.
 */
export async function stopService(pid: number, who: { campaignId: string; resourceId: string; script?: string }, graceMs = 10_000): Promise<StopOutcome> {
  if (!isAlive(pid)) return 'gone';
  if (!pidMatches(pid, { cmdlineHas: who.script, campaignId: who.campaignId, resourceId: who.resourceId })) return 'not-ours';
  // detached => it leads its own group; signal the group only when that is still true.
  const target = processGroup(pid) === pid ? -pid : pid;
  try {
    process.kill(target, 'SIGTERM');
  } catch {
    return 'gone';
  }
  if (await waitGone(pid, graceMs)) return 'stopped';
  try {
    process.kill(target, 'SIGKILL');
  } catch {
    // went in between
  }
  await waitGone(pid, 5000);
  return 'stopped';
}

/**
 * Stop a service the ledger lists, by its recorded pid and by its marker. The ledger's pid is missing
 * when the attempt that started it died between the spawn and the ledger's write (a worker SIGKILLed
 * during provision): the process then lives on under a pid nobody wrote down, and only its marker
 * (campaign + resource id in its environment) finds it. Teardown and a retried provision's
 * replacement of the service both come here, so neither can orphan it. True when something was stopped.
 */
export async function stopLedgerService(
  r: { campaignId: string; id: string; detail: { pid?: number; script?: string } },
  onProgress: (line: string) => void,
): Promise<boolean> {
  const who = { campaignId: r.campaignId, resourceId: r.id, script: r.detail.script };
  let stopped = false;
  const pid = r.detail.pid;
  if (pid !== undefined) {
    const outcome = await stopService(pid, who);
    if (outcome === 'stopped') stopped = true;
    if (outcome === 'not-ours') onProgress(`pid ${pid} is no longer ${r.id} (recycled): not signalled`);
  }
  for (const p of scanMarkedProcesses().marked) {
    if (p.campaignId === r.campaignId && p.resourceId === r.id && p.pid !== pid) {
      onProgress(`stopping ${r.id} found by its marker: pid ${p.pid}`);
      if ((await stopService(p.pid, who)) === 'stopped') stopped = true;
    }
  }
  return stopped;
}

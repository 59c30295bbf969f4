// The reference service as a detached process: it outlives the orchestrator that started it (like the
// postmaster), writes stdout+stderr to a log file in the rig folder, and is marked with the rig's
// environment variables so that it can be found and identified later.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { HEALTH_PATH } from '../../protocol/hardcount-api';
import { projectRoot } from '../../tools/paths';
import type { ServiceParameters } from '../target';
import { isAlive, pidMatches, processGroup, sleep, waitGone } from './proc';
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

function serviceEnv(opts: StartServiceOptions): NodeJS.ProcessEnv {
  const s = opts.service;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HC_PORT: String(opts.listen?.port ?? 0),
    HC_HOST: opts.listen?.host ?? '127.0.0.1',
    HC_DATABASE_URL: opts.databaseUrl,
    [MARKER_CAMPAIGN]: opts.campaignId,
    [MARKER_RESOURCE]: opts.resourceId,
    [MARKER_RIG_DIR]: opts.rigDir,
  };
  if (s.poolSize !== undefined) env.HC_POOL_SIZE = String(s.poolSize);
  if (s.lastUsed) env.HC_LAST_USED = s.lastUsed;
  if (s.insert) env.HC_INSERT = s.insert;
  if (s.aggregate) env.HC_AGGREGATE = s.aggregate;
  // Test-runner variables would make a service started from a test behave like a test.
  delete env.NODE_TEST_CONTEXT;
  return env;
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
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const out = fs.openSync(opts.logFile, 'a', 0o600);
  let pid: number | undefined;
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(projectRoot, SERVICE_SCRIPT)], {
      cwd: projectRoot,
      env: serviceEnv(opts),
      detached: true, // its own process group and session: the orchestrator's death or Ctrl-C does not reach it
      stdio: ['ignore', out, out],
    });
    pid = child.pid;
    if (pid === undefined) throw new Error(`could not start the reference service: see ${opts.logFile}`);
    opts.onSpawned(pid);
    child.unref();
  } finally {
    fs.closeSync(out);
  }
  fs.writeFileSync(opts.pidFile, `${pid}\n`);
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    const line = listeningLine(fs.readFileSync(opts.logFile, 'utf8'));
    if (line) {
      const url = new URL(line.listening);
      const base = `${url.protocol}//${url.host}`;
      if (await healthy(base)) return { pid, port: Number(url.port), url: base };
    }
    if (!isAlive(pid)) {
      throw new Error(`the reference service exited during start-up; last lines of ${opts.logFile}:\n${tail(opts.logFile)}`);
    }
    await sleep(200);
  }
  throw new Error(
    `the reference service did not answer ${HEALTH_PATH} within ${opts.readyTimeoutMs ?? 60_000} ms; last lines of ${opts.logFile}:\n${tail(opts.logFile)}`,
  );
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
 * Stop the service the ledger recorded: only when /proc/<pid> is still that process (argv has the
 * script, marker names this campaign and resource). SIGTERM its group, then SIGKILL after graceMs.
 */
export async function stopService(pid: number, who: { campaignId: string; resourceId: string }, graceMs = 10_000): Promise<StopOutcome> {
  if (!isAlive(pid)) return 'gone';
  if (!pidMatches(pid, { cmdlineHas: SERVICE_SCRIPT, ...who })) return 'not-ours';
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

// Looking at processes through /proc (Linux). The local rig marks every process it starts with
// environment variables (rig-paths.ts MARKER_*); the postmaster and the service keep them in
// /proc/<pid>/environ for life. That is how a leftover is found even when its ledger or folder is gone,
// and how teardown makes sure a pid still belongs to what the ledger recorded before signalling it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { MARKER_CAMPAIGN, MARKER_RESOURCE, MARKER_RIG_DIR } from './rig-paths';

/** Every pid in /proc. Throws when /proc cannot be listed (then nobody can say what runs). */
export function listPids(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
}

/** argv of a process, or undefined when it is gone (or a kernel thread, whose cmdline is empty). */
export function readCmdline(pid: number): string[] | undefined {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (raw === '') return undefined;
    return raw.replace(/\0$/, '').split('\0');
  } catch {
    return undefined;
  }
}

/** The environment a process started with; 'denied' when we may not read it; undefined when gone. */
export function readEnviron(pid: number): Record<string, string> | 'denied' | undefined {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    const env: Record<string, string> = {};
    for (const kv of raw.split('\0')) {
      const eq = kv.indexOf('=');
      if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    return env;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EACCES' || code === 'EPERM' ? 'denied' : undefined;
  }
}

interface StatFields {
  state: string;
  ppid: number;
  pgid: number;
  startTicks: number;
}

function readStat(pid: number): StatFields | undefined {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may hold spaces and parentheses: the fields after it start after the last ')'.
    const rest = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0], ppid: Number(rest[1]), pgid: Number(rest[2]), startTicks: Number(rest[19]) };
  } catch {
    return undefined;
  }
}

/** True when the process exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const st = readStat(pid);
  return st !== undefined && st.state !== 'Z' && st.state !== 'X';
}

export function parentPid(pid: number): number | undefined {
  return readStat(pid)?.ppid;
}

export function processGroup(pid: number): number | undefined {
  return readStat(pid)?.pgid;
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100; // the value on every Linux the rig runs on
    }
  }
  return clockTicks;
}

function bootTimeMs(): number {
  const line = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('btime '));
  return Number(line?.split(/\s+/)[1]) * 1000;
}

/** When a process started, or undefined when it is gone. */
export function processStartedAt(pid: number): Date | undefined {
  const st = readStat(pid);
  if (!st) return undefined;
  return new Date(bootTimeMs() + (st.startTicks / ticksPerSecond()) * 1000);
}

export interface MarkedProcess {
  pid: number;
  campaignId: string;
  resourceId: string;
  rigDir: string;
  cmdline: string[];
  startedAt: Date | undefined;
}

export interface ProcessScan {
  marked: MarkedProcess[];
  /** Processes that look like a postmaster or a reference service but whose environment we may not read. */
  unreadable: Array<{ pid: number; cmdline: string[] }>;
}

/** A postmaster's argv: <bin>/postgres -D <dataDir> ... (backends rename themselves "postgres: ..."). */
export function postmasterDataDir(cmdline: string[]): string | undefined {
  if (!/(^|\/)postgres$/.test(cmdline[0] ?? '')) return undefined;
  const i = cmdline.indexOf('-D');
  return i >= 0 ? cmdline[i + 1] : undefined;
}

export function looksLikeService(cmdline: string[], script = 'reference/main.ts'): boolean {
  return cmdline.some((a) => a.endsWith(script));
}

/** Every live process that carries the local rig's marker (and those we could not look into). */
export function scanMarkedProcesses(): ProcessScan {
  const scan: ProcessScan = { marked: [], unreadable: [] };
  for (const pid of listPids()) {
    if (pid === process.pid) continue;
    const cmdline = readCmdline(pid);
    if (!cmdline || !isAlive(pid)) continue;
    const env = readEnviron(pid);
    if (env === undefined) continue;
    if (env === 'denied') {
      if (postmasterDataDir(cmdline) || looksLikeService(cmdline)) scan.unreadable.push({ pid, cmdline });
      continue;
    }
    const campaignId = env[MARKER_CAMPAIGN];
    if (!campaignId) continue;
    scan.marked.push({
      pid,
      campaignId,
      resourceId: env[MARKER_RESOURCE] ?? '?',
      rigDir: env[MARKER_RIG_DIR] ?? '?',
      cmdline,
      startedAt: processStartedAt(pid),
    });
  }
  return scan;
}

/** The live postmaster running on dataDir, found by its argv (whatever its pid file says). */
export function findPostmaster(dataDir: string): number | undefined {
  for (const pid of listPids()) {
    const cmdline = readCmdline(pid);
    if (cmdline && postmasterDataDir(cmdline) === dataDir && isAlive(pid)) return pid;
  }
  return undefined;
}

/**
 * True only when pid is alive AND is the process the ledger recorded: its argv matches (when the ledger
 * knows a script of ours it runs) and its marker names this campaign and resource. Without a script (a
 * user's command) the marker must be readable: it is the only proof. A recycled pid fails this, so it is
 * never killed.
 */
export function pidMatches(pid: number, expect: { cmdlineHas?: string; campaignId: string; resourceId: string }): boolean {
  if (!isAlive(pid)) return false;
  const cmdline = readCmdline(pid);
  if (!cmdline) return false;
  const has = expect.cmdlineHas;
  if (has !== undefined && !cmdline.some((a) => a === has || a.endsWith(has))) return false;
  const env = readEnviron(pid);
  if (env === undefined) return false;
  if (env === 'denied') return has !== undefined; // argv matched a script of ours; as root this does not happen
  return env[MARKER_CAMPAIGN] === expect.campaignId && env[MARKER_RESOURCE] === expect.resourceId;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Wait until pid is gone, up to timeoutMs; true when it went. */
export async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (!isAlive(pid)) return true;
    await sleep(100);
  }
  return !isAlive(pid);
}

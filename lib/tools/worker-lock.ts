// One rig worker per build, host, Temporal address and namespace on a machine. A second worker of the
// same build on the same queues would take half of the campaign's steps (and `rig rehearse` would
// start one beside a running `rig worker`). A small file under the state folder names the worker that
// serves them; a file whose process is gone (killed, crashed, a zombie, or its pid reused by another
// process) is stale and taken over.
//
// Per build: workers poll as a Worker Deployment version (lib/temporal/deployment.ts), and the server
// hands a pinned campaign's tasks only to its own build's workers, so during a deploy the old build's
// worker drains beside the new one on the same host: each holds the record of its own build.
import fs from 'node:fs';
import path from 'node:path';
import { stateDir } from './paths';

export interface WorkerRecord {
  pid: number;
  /** The build id it polls as (lib/tools/build-id.ts). */
  buildId: string;
  host: string;
  address: string;
  namespace: string;
  queues: string[];
  startedAt: string;
  /**
   * Which process `pid` was: its start time in clock ticks since boot (field 22 of /proc/<pid>/stat)
   * and the boot it started in (/proc/sys/kernel/random/boot_id). Absent off Linux and in records
   * written before they were kept; such a record is judged by its pid alone.
   */
  procStart?: string;
  bootId?: string;
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

/** The folder of one host, address and namespace: a record per build in it. */
function hostDir(host: string, address: string, namespace: string): string {
  return path.join(stateDir(), 'workers', `${safe(host)}@${safe(address)}@${safe(namespace)}`);
}

function lockPath(host: string, address: string, namespace: string, buildId: string): string {
  return path.join(hostDir(host, address, namespace), `${safe(buildId)}.json`);
}

/**
 * The state (field 3) and start time (field 22) of a /proc/<pid>/stat line. The command name
 * (field 2) is in parentheses and may itself hold spaces and parentheses, so the fields are counted
 * from the last ')'.
 */
export function parseProcStat(line: string): { state: string; startTime: string } | undefined {
  const close = line.lastIndexOf(')');
  if (close < 0) return undefined;
  const rest = line.slice(close + 1).trim().split(/\s+/);
  // rest[0] is field 3 (state), so field n is rest[n - 3].
  const state = rest[0];
  const startTime = rest[22 - 3];
  if (!state || !startTime || !/^\d+$/.test(startTime)) return undefined;
  return { state, startTime };
}

/** `pid`'s state and start time from /proc; undefined when there is no /proc to ask (not Linux) or no such process. */
function procStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    return parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** This boot's id (random per boot): undefined off Linux. */
export function bootId(): string | undefined {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process a record names still runs. */
function alive(rec: WorkerRecord): boolean {
  if (!Number.isInteger(rec.pid) || rec.pid <= 0 || !pidExists(rec.pid)) return false;
  const stat = procStat(rec.pid);
  // Off Linux there is no /proc: the pid is all there is to check (a reused pid holds the lock
  // until that process ends too).
  if (!stat) return process.platform !== 'linux';
  // A zombie has ended; only its parent has not reaped it yet.
  if (stat.state === 'Z' || stat.state === 'X') return false;
  // A record of the old format names no start time: its pid decides.
  if (rec.procStart === undefined) return true;
  if (rec.bootId !== undefined && rec.bootId !== bootId()) return false; // written before a reboot
  return rec.procStart === stat.startTime; // else the pid is another process's now
}

function liveRecord(file: string): WorkerRecord | undefined {
  try {
    const rec = JSON.parse(fs.readFileSync(file, 'utf8')) as WorkerRecord;
    return rec.pid !== process.pid && alive(rec) ? rec : undefined;
  } catch {
    return undefined;
  }
}

/** The live worker of this build that serves these queues on this machine, if any (a stale record is ignored). */
export function runningWorker(host: string, address: string, namespace: string, buildId: string): WorkerRecord | undefined {
  return liveRecord(lockPath(host, address, namespace, buildId));
}

/** Every live worker of this host, address and namespace, whatever its build (old ones draining, the new one). */
export function runningWorkers(host: string, address: string, namespace: string): WorkerRecord[] {
  const dir = hostDir(host, address, namespace);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  return names.map((n) => liveRecord(path.join(dir, n))).filter((r): r is WorkerRecord => r !== undefined);
}

/**
 * Records this process as the worker of `host` on address/namespace for its build. Returns the running
 * worker of that build instead when there is one (nothing is written), else a function that removes
 * the record.
 */
export function claimWorker(rec: Omit<WorkerRecord, 'pid' | 'startedAt' | 'procStart' | 'bootId'>): { running: WorkerRecord } | { release: () => void } {
  const file = lockPath(rec.host, rec.address, rec.namespace, rec.buildId);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const mine: WorkerRecord = { ...rec, pid: process.pid, startedAt: new Date().toISOString() };
  const stat = procStat(process.pid);
  if (stat) {
    mine.procStart = stat.startTime;
    const boot = bootId();
    if (boot) mine.bootId = boot;
  }
  // Created exclusively: of two workers starting at once, one writes the record and the other sees it.
  for (let tries = 0; ; tries++) {
    try {
      fs.writeFileSync(file, JSON.stringify(mine, null, 2) + '\n', { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || tries > 0) throw err;
      const running = runningWorker(rec.host, rec.address, rec.namespace, rec.buildId);
      if (running) return { running };
      fs.rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  return {
    release: () => {
      try {
        const now = JSON.parse(fs.readFileSync(file, 'utf8')) as WorkerRecord;
        if (now.pid === process.pid) fs.rmSync(file, { force: true });
      } catch {
        // already gone
      }
    },
  };
}

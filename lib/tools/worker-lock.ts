// One rig worker per host, Temporal address and namespace on a machine. A second worker on the same
// queues would take half of the campaign's steps (and `rig rehearse` would start one beside a running
// `rig worker`). A small file under the state folder names the worker that serves them; a file whose
// process is gone (killed, crashed) is stale and taken over.
import fs from 'node:fs';
import path from 'node:path';
import { stateDir } from './paths';

export interface WorkerRecord {
  pid: number;
  host: string;
  address: string;
  namespace: string;
  queues: string[];
  startedAt: string;
}

function lockPath(host: string, address: string, namespace: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');
  return path.join(stateDir(), 'workers', `${safe(host)}@${safe(address)}@${safe(namespace)}.json`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live worker that serves these queues on this machine, if any (a stale record is ignored). */
export function runningWorker(host: string, address: string, namespace: string): WorkerRecord | undefined {
  try {
    const rec = JSON.parse(fs.readFileSync(lockPath(host, address, namespace), 'utf8')) as WorkerRecord;
    return rec.pid !== process.pid && alive(rec.pid) ? rec : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Records this process as the worker of `host` on address/namespace. Returns the running worker
 * instead when there is one (nothing is written), else a function that removes the record.
 */
export function claimWorker(rec: Omit<WorkerRecord, 'pid' | 'startedAt'>): { running: WorkerRecord } | { release: () => void } {
  const file = lockPath(rec.host, rec.address, rec.namespace);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const mine: WorkerRecord = { ...rec, pid: process.pid, startedAt: new Date().toISOString() };
  // Created exclusively: of two workers starting at once, one writes the record and the other sees it.
  for (let tries = 0; ; tries++) {
    try {
      fs.writeFileSync(file, JSON.stringify(mine, null, 2) + '\n', { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || tries > 0) throw err;
      const running = runningWorker(rec.host, rec.address, rec.namespace);
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

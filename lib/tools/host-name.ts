// This worker's host identity: what its task queues are named by (lib/temporal/queues.ts). It must not
// change when the machine's name does: a container's host name changes with every restart, and a
// campaign in flight sends its machine-bound steps (and its watchdog its teardown) to the queue of the
// host it claimed, which a worker under a new name never serves. So: RIG_HOST when set; else the name
// persisted in the rig's state folder (`host-id`), written by the first `rig worker` that starts there.
// What it writes is the OS's host name of that moment, so the queues keep the names they had before
// the identity was persisted and campaigns started by an older worker are still served.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stateDir } from './paths';

/** The file that holds the persisted identity (one line). */
export function hostIdFile(): string {
  return path.join(stateDir(), 'host-id');
}

/** A queue name is `rig-host-<host>`: no spaces or control characters, at most 200 characters. */
const VALID = /^[A-Za-z0-9][A-Za-z0-9._@:-]{0,199}$/;

function checked(host: string, from: string): string {
  if (!VALID.test(host)) throw new Error(`the host identity ${JSON.stringify(host)} (from ${from}) is not usable in a task queue name: use letters, digits and . _ @ : - (set RIG_HOST, or edit ${hostIdFile()})`);
  return host;
}

function persisted(): string | undefined {
  try {
    return fs.readFileSync(hostIdFile(), 'utf8').trim() || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** RIG_HOST when set, else the persisted identity, else (no worker has started here yet) the OS's host name. Only reads. */
export function hostName(): string {
  if (process.env.RIG_HOST) return checked(process.env.RIG_HOST, 'RIG_HOST');
  const p = persisted();
  return p ? checked(p, hostIdFile()) : os.hostname();
}

export interface HostIdentity {
  host: string;
  /** Where it came from, for the worker's first line. */
  from: string;
}

/**
 * For a starting `rig worker`: RIG_HOST when set, else the persisted identity, written on first start
 * (exclusive create: two workers starting at once both end with the one that won).
 */
export function workerHostIdentity(): HostIdentity {
  if (process.env.RIG_HOST) return { host: checked(process.env.RIG_HOST, 'RIG_HOST'), from: 'RIG_HOST' };
  const file = hostIdFile();
  const p = persisted();
  if (p) return { host: checked(p, file), from: file };
  const host = checked(os.hostname(), 'the OS host name');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, `${host}\n`, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { host: checked(persisted() ?? host, file), from: file };
  }
  return { host, from: `${file} (written now, from the OS host name)` };
}

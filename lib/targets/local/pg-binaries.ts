// Finding PostgreSQL's server binaries and the OS user that runs them. initdb and postgres refuse to
// run as root, so when the rig runs as root (CI does) they run as an unprivileged user: RIG_PG_OS_USER,
// else `postgres` (made by Debian's package), else `rigpg` (made by `npm ci`'s set-up when it runs as root).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export function findPgBin(): string {
  const fromEnv = process.env.RIG_PG_BIN;
  if (fromEnv) {
    if (!fs.existsSync(path.join(fromEnv, 'initdb'))) throw new Error(`RIG_PG_BIN=${fromEnv} has no initdb`);
    return fromEnv;
  }
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (fs.existsSync(path.join(dir, 'initdb'))) return dir;
  } catch {
    // no pg_config on PATH: fall through to the Debian layout
  }
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base)
    ? fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')))
    : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length) return path.join(base, versions[0], 'bin');
  throw new Error('PostgreSQL server binaries not found: set RIG_PG_BIN to the folder with initdb, pg_ctl and pgbench');
}

export interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

function lookupUser(name: string): OsUser | undefined {
  try {
    const line = fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${name}:`));
    if (!line) return undefined;
    const [, , uid, gid] = line.split(':');
    return { name, uid: Number(uid), gid: Number(gid) };
  } catch {
    return undefined;
  }
}

/** The user to run initdb/postgres/pg_ctl as, or undefined to run as ourselves (not root). */
export function pgOsUser(): OsUser | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const wanted = process.env.RIG_PG_OS_USER;
  const candidates = wanted ? [wanted] : ['postgres', 'rigpg'];
  for (const name of candidates) {
    const user = lookupUser(name);
    if (user && user.uid !== 0) return user;
  }
  throw new Error(
    `running as root, and PostgreSQL refuses to run as root: no unprivileged user ${candidates.join(' or ')} found. ` +
      'Create one (useradd --system rigpg) or set RIG_PG_OS_USER to an existing unprivileged user.',
  );
}

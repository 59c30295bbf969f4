// pgbench as the worker's own user, over TCP with the URL's password: for a database the rig reaches
// from outside (an AWS rig from its load node, an existing deployment from this host). Only the
// server refuses root; pgbench does not. The local target runs its cluster's own pgbench as the
// cluster's OS user instead (local/pgbench-runner.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findPgBin } from './local/pg-binaries';
import { runProgram } from '../tools/run';
import type { PgbenchRunner } from './target';

export async function userPgbenchRunner(): Promise<PgbenchRunner> {
  const bin = pgbenchBinary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-pgbench-'));
  return {
    scriptDir: () => dir,
    run: (args, env) => runProgram(bin, args, { env: { ...process.env, LC_ALL: 'C', ...env } }),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** RIG_PGBENCH, else PostgreSQL's bin folder (RIG_PG_BIN, pg_config, the Debian layout), else pgbench on PATH (Amazon Linux's package). */
function pgbenchBinary(): string {
  if (process.env.RIG_PGBENCH) return process.env.RIG_PGBENCH;
  try {
    return path.join(findPgBin(), 'pgbench');
  } catch {
    return 'pgbench';
  }
}

// pgbench for a local rig: the cluster's own pgbench (its bin folder, its version), run as the cluster's
// OS user through PgCluster.exec, with the scripts in a throw-away folder that user can read. The
// denominator (lib/targets/denominator.ts) is target-agnostic and takes any PgbenchRunner.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PgbenchRunner } from '../target';
import { PgCluster } from './pg-cluster';

export function localPgbenchRunner(clusterDir: string): PgbenchRunner {
  const cluster = PgCluster.attach(clusterDir);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-pgbench-'));
  fs.chmodSync(dir, 0o755); // the cluster's OS user reads the scripts (they hold no secret)
  return {
    scriptDir: () => dir,
    run: (args, env) => cluster.exec('pgbench', args, { env: { ...process.env, HOME: os.tmpdir(), LC_ALL: 'C', ...env } }),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

// Throw-away PostgreSQL clusters for tests: made in a temporary folder on a free port and removed when
// the test file ends, also when a test failed, and (synchronously) if the process exits first.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { PgCluster, type PgClusterOptions } from '../../lib/targets/local/pg-cluster';

const live = new Set<PgCluster>();
process.on('exit', () => {
  for (const c of live) {
    c.stopSync();
    fs.rmSync(c.info.dir, { recursive: true, force: true });
  }
});

/** A fresh cluster, destroyed in the enclosing file's `after` hook. */
export async function throwAwayCluster(opts: Omit<PgClusterOptions, 'dir'> = {}): Promise<PgCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-pg-'));
  fs.chmodSync(dir, 0o755);
  const cluster = await PgCluster.create({ ...opts, dir });
  live.add(cluster);
  after(async () => {
    await cluster.destroy();
    live.delete(cluster);
  });
  return cluster;
}

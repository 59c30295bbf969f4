// What the database calibration needs of a local cluster beyond a superuser URL: pg_waldump over its
// own pg_wal (run as the cluster's OS user, who can read it), for when pg_walinspect cannot be had.
import path from 'node:path';
import type { PgCluster } from '../local/pg-cluster';
import type { WalDump } from './wal-case';

export function localWalDump(cluster: Pick<PgCluster, 'exec' | 'dataDir'>): WalDump {
  return async (start, end) => (await cluster.exec('pg_waldump', ['--stats', '-p', path.join(cluster.dataDir, 'pg_wal'), '-s', start, '-e', end])).stdout;
}

// What the database calibration needs of a local cluster beyond a superuser URL: pg_waldump over its
// own pg_wal (lib/evidence/wal-breakdown.ts, run as the cluster's OS user, who can read it), for when
// pg_walinspect cannot be had.
import { walBreakdown } from '../../evidence/wal-breakdown';
import type { WalDump } from './wal-case';

/** `clusterDir`: the cluster's folder (PgCluster's info.dir, a rig record's cluster.dir). */
export function localWalDump(clusterDir: string): WalDump {
  return async (start, end) => {
    const b = await walBreakdown(clusterDir, start, end);
    return { records: b.total.count, bytes: b.total.bytes };
  };
}

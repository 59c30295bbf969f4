// How to reach a provisioned local rig. `connectionLocal` is the secret-free description (safe to return
// from an activity, log or store); `rigDbUrls` adds the passwords, for use inside the process that
// connects (seeding, reconciliation, pgbench, the samplers) and nowhere else.
import { APP_ROLE, DATABASE, OWNER_ROLE } from '../../../reference/schema';
import { withVerifyFull } from '../../pg/connection';
import type { RigConnection, RigDbUrls as TargetDbUrls } from '../target';
import { readRigRecord, type RigRecord } from './rig-record';
import { readSecrets, type RigSecrets } from './secrets';
import { rigPaths } from './rig-paths';

/** A URL to the rig's cluster; in RDS-fidelity mode with sslmode=verify-full against the cluster's test CA. */
function pgUrl(cluster: RigRecord['cluster'], database: string, user: string, password?: string): string {
  const auth = password ? `${encodeURIComponent(user)}:${encodeURIComponent(password)}` : encodeURIComponent(user);
  const url = `postgres://${auth}@${cluster.host}:${cluster.port}/${encodeURIComponent(database)}`;
  return cluster.tls ? withVerifyFull(url, cluster.tls.caFile) : url;
}

export function completeRecord(campaignId: string): RigRecord {
  const rec = readRigRecord(campaignId);
  if (!rec || !rec.complete) {
    throw new Error(`no provisioned local rig for campaign ${campaignId} (${rigPaths(campaignId).rigFile}): run provision first`);
  }
  return rec;
}

export function connectionFromRecord(rec: RigRecord): RigConnection {
  const { host, port } = rec.cluster;
  const p = rigPaths(rec.campaignId);
  return {
    campaignId: rec.campaignId,
    target: 'local',
    serviceUrl: rec.service?.url ?? '',
    db: {
      host,
      port,
      database: rec.database,
      // The role the rig administers the cluster as: the non-superuser admin in RDS-fidelity mode.
      superuser: rec.cluster.admin ?? rec.cluster.superuser,
      ownerRole: rec.ownerRole,
      appRole: rec.appRole,
      ownerUrl: pgUrl(rec.cluster, rec.database, rec.ownerRole),
      appUrl: pgUrl(rec.cluster, rec.database, rec.appRole),
    },
    files: {
      rigDir: p.dir,
      postgresLog: rec.cluster.logFile,
      serviceLog: rec.service?.logFile ?? '',
      secrets: p.secretsFile,
      ledger: p.ledgerFile,
    },
  };
}

export async function connectionLocal(campaignId: string): Promise<RigConnection> {
  return connectionFromRecord(completeRecord(campaignId));
}

export interface RigDbUrls extends TargetDbUrls {
  /** The cluster folder, for PgCluster.attach (pgbench runs through it). */
  clusterDir: string;
  /**
   * The bootstrap superuser, for what on RDS is the parameter group's business (a variant's ALTER
   * SYSTEM). The same as superuserUrl on a plain cluster; in RDS-fidelity mode nothing else uses it.
   */
  bootstrapUrl: string;
}

/** Connection URLs WITH passwords. Keep them in this process: never return them from an activity. */
export function rigDbUrls(campaignId: string): RigDbUrls {
  return dbUrlsOf(completeRecord(campaignId), readSecrets(campaignId));
}

/** The same from a record that may still be provisioning (the service is started before the record is complete). */
export function dbUrlsOf(rec: RigRecord, s: RigSecrets): RigDbUrls {
  const campaignId = rec.campaignId;
  const c = rec.cluster;
  const bootstrapUrl = pgUrl(c, 'postgres', c.superuser, s.superuserPassword);
  if (c.admin && !s.adminPassword) throw new Error(`rig ${campaignId}: its secrets have no adminPassword for the RDS-fidelity admin ${c.admin}: tear the rig down and provision it again`);
  return {
    superuserUrl: c.admin ? pgUrl(c, 'postgres', c.admin, s.adminPassword) : bootstrapUrl,
    ownerUrl: pgUrl(c, rec.database, rec.ownerRole, s.ownerPassword),
    appUrl: pgUrl(c, rec.database, rec.appRole, s.appPassword),
    clusterDir: c.dir,
    bootstrapUrl,
  };
}

export const ROLE_NAMES = { owner: OWNER_ROLE, app: APP_ROLE, database: DATABASE };

// How to reach a provisioned local rig. `connectionLocal` is the secret-free description (safe to return
// from an activity, log or store); `rigDbUrls` adds the passwords, for use inside the process that
// connects (seeding, reconciliation, pgbench, the samplers) and nowhere else.
import { APP_ROLE, DATABASE, OWNER_ROLE } from '../../../reference/schema';
import type { RigConnection, RigDbUrls as TargetDbUrls } from '../target';
import { readRigRecord, type RigRecord } from './rig-record';
import { readSecrets } from './secrets';
import { rigPaths } from './rig-paths';

function pgUrl(host: string, port: number, database: string, user: string, password?: string): string {
  const auth = password ? `${encodeURIComponent(user)}:${encodeURIComponent(password)}` : encodeURIComponent(user);
  return `postgres://${auth}@${host}:${port}/${encodeURIComponent(database)}`;
}

export function completeRecord(campaignId: string): RigRecord {
  const rec = readRigRecord(campaignId);
  if (!rec || !rec.complete) {
    throw new Error(`no provisioned local rig for campaign ${campaignId} (${rigPaths(campaignId).rigFile}): run provision first`);
  }
  return rec;
}

export function connectionFromRecord(rec: RigRecord): RigConnection {
  const { host, port, superuser } = rec.cluster;
  const p = rigPaths(rec.campaignId);
  return {
    campaignId: rec.campaignId,
    target: 'local',
    serviceUrl: rec.service?.url ?? '',
    db: {
      host,
      port,
      database: rec.database,
      superuser,
      ownerRole: rec.ownerRole,
      appRole: rec.appRole,
      ownerUrl: pgUrl(host, port, rec.database, rec.ownerRole),
      appUrl: pgUrl(host, port, rec.database, rec.appRole),
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
}

/** Connection URLs WITH passwords. Keep them in this process: never return them from an activity. */
export function rigDbUrls(campaignId: string): RigDbUrls {
  const rec = completeRecord(campaignId);
  const s = readSecrets(campaignId);
  const { host, port, superuser } = rec.cluster;
  return {
    superuserUrl: pgUrl(host, port, 'postgres', superuser, s.superuserPassword),
    ownerUrl: pgUrl(host, port, rec.database, rec.ownerRole, s.ownerPassword),
    appUrl: pgUrl(host, port, rec.database, rec.appRole, s.appPassword),
    clusterDir: rec.cluster.dir,
  };
}

export const ROLE_NAMES = { owner: OWNER_ROLE, app: APP_ROLE, database: DATABASE };

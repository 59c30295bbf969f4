// How to reach a connected existing deployment, without any secret: from its record alone.
import type { RigConnection } from '../target';
import { existingPaths } from './paths';
import { connectedRecord, type ExistingRecord } from './record';

export function connectionFromRecord(rec: ExistingRecord): RigConnection {
  const { host, port, name, ownerRole, appRole } = rec.database;
  const url = (role: string) => `postgres://${encodeURIComponent(role)}@${host}:${port}/${encodeURIComponent(name)}`;
  const p = existingPaths(rec.campaignId);
  return {
    campaignId: rec.campaignId,
    target: 'existing',
    serviceUrl: rec.serviceUrl,
    // The rig has no superuser on a deployment it did not make: the owner is the most it holds.
    db: { host, port, database: name, superuser: ownerRole, ownerRole, appRole, ownerUrl: url(ownerRole), appUrl: url(appRole) },
    files: { record: p.recordFile, secrets: p.secretsFile },
  };
}

export async function connectionExisting(campaignId: string): Promise<RigConnection> {
  return connectionFromRecord(connectedRecord(campaignId));
}

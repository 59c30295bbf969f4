// How the rest of the rig reaches an AWS rig: the service on the app node's address, the database at
// RDS's endpoint with the master user and the reference schema's roles. One place, used by the
// provision's answer and by a later `connection()` from the record, so the two cannot disagree.
import type { RigConnection } from '../target';
import { APP_ROLE, DB_NAME, OWNER_ROLE } from './data-plane';

/** RDS's master user (the stand-in cluster of the emulated campaign has it as its superuser). */
export const DB_MASTER_USER = 'rig_admin';
/** The service's port on the app node (its security group opens it to the nodes only). */
export const SERVICE_PORT = 8080;

export function awsConnection(campaignId: string, appAddress: string, dbHost: string, dbPort: number): RigConnection {
  return {
    campaignId,
    target: 'aws',
    serviceUrl: `http://${appAddress}:${SERVICE_PORT}`,
    db: {
      host: dbHost,
      port: dbPort,
      database: DB_NAME,
      superuser: DB_MASTER_USER,
      ownerRole: OWNER_ROLE,
      appRole: APP_ROLE,
      ownerUrl: `postgres://${OWNER_ROLE}@${dbHost}:${dbPort}/${DB_NAME}`,
      appUrl: `postgres://${APP_ROLE}@${dbHost}:${dbPort}/${DB_NAME}`,
    },
    files: {},
  };
}

// What the AWS rig's data-plane steps ask of it, answered on the load node (the only host that
// reaches the database: it is not publicly accessible). Everything here is derived from the campaign
// id (the RDS identifier, the rig's secret's name) and AWS's own answers, never from the control
// host's record, which the load node does not have: the region is the worker's (AWS_REGION, set by
// the node's user data), the endpoint and zones come from DescribeDBInstances/DescribeInstances.
import fs from 'node:fs';
import path from 'node:path';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { DescribeDBInstancesCommand } from '@aws-sdk/client-rds';
import { roleUrl } from '../../../reference/roles';
import { withVerifyFull } from '../../pg/connection';
import { APP_ROLE, DATABASE, OWNER_ROLE } from '../../../reference/schema';
import { userPgbenchRunner } from '../pgbench-user-runner';
import { openFileLogWindow } from '../../evidence/file-log-window';
import { stateDir } from '../../tools/paths';
import type { PostgresLogWindow, RigDbUrls } from '../target';
import { awsClients, defaultRegion, type AwsClients } from './clients';
import { emulatorMap } from './emulator-map';
import { CAMPAIGN_TAG, RESOURCE_TAG, rigNames } from './names';
import { readAwsRecord } from './record';
import { rdsCaBundle } from './rds-ca';
import { masterCredentials, readRigSecret, storeRigApiKey } from './secrets';

// The reference service's own names: the database and its two roles (reference/schema.ts).
export { APP_ROLE, DATABASE as DB_NAME, OWNER_ROLE };

/** The region of a campaign's rig: the control host's record, else this worker's AWS_REGION. */
export function rigRegion(campaignId: string): string {
  const region = readAwsRecord(campaignId)?.region ?? defaultRegion();
  if (!region) throw new Error(`aws target: no region for ${campaignId}: set AWS_REGION on this worker (the node's user data does)`);
  return region;
}

export async function withClients<T>(campaignId: string, fn: (c: AwsClients) => Promise<T>): Promise<T> {
  const c = awsClients(rigRegion(campaignId));
  try {
    return await fn(c);
  } finally {
    c.destroy();
  }
}

/** host:port of the database: RDS's endpoint (or, under the emulator, the cluster mapped onto it). */
export async function dbEndpoint(c: AwsClients, campaignId: string): Promise<string> {
  const mapped = emulatorMap()?.db;
  const id = rigNames(campaignId).dbInstance;
  const inst = (await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances?.[0];
  if (inst?.DBInstanceStatus !== 'available') throw new Error(`RDS instance ${id} is ${inst?.DBInstanceStatus ?? 'not there'}, not available`);
  if (mapped) return mapped;
  if (!inst.Endpoint?.Address) throw new Error(`RDS instance ${id} has no endpoint address`);
  return `${inst.Endpoint.Address}:${inst.Endpoint.Port ?? 5432}`;
}

/** The three URLs with their passwords: the master's from RDS's own secret, the roles' from the rig's. */
export async function awsDbUrls(campaignId: string): Promise<RigDbUrls> {
  return withClients(campaignId, async (c) => {
    const endpoint = await dbEndpoint(c, campaignId);
    const master = await masterCredentials(c, rigNames(campaignId).dbInstance);
    const secret = await readRigSecret(c, campaignId);
    // verify-full against RDS's CA bundle: RDS 15+ refuses plaintext, and the name check is what keeps
    // a password from whoever answers at the endpoint's address.
    const base = withVerifyFull(`postgres://${endpoint}/${DATABASE}`, rdsCaBundle());
    return {
      // The maintenance database, which RDS always has: the rig's own is made (or re-owned) from there.
      superuserUrl: roleUrl(base, master.user, master.password, 'postgres'),
      ownerUrl: roleUrl(base, OWNER_ROLE, secret.ownerPassword, DATABASE),
      appUrl: roleUrl(base, APP_ROLE, secret.appPassword, DATABASE),
    };
  });
}

export const awsApiKeys = {
  store: (campaignId: string, apiKey: string) => withClients(campaignId, (c) => storeRigApiKey(c, campaignId, apiKey)),
  read: (campaignId: string) => withClients(campaignId, async (c) => (await readRigSecret(c, campaignId)).apiKey),
};

/** A folder on this (load) node for the rig's plain working files. */
export function awsWorkDir(campaignId: string): string {
  const dir = path.join(stateDir(), 'aws-nodes', campaignId);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** pgbench on the load node, as the worker's own user (only the server refuses root), over TLS (verify-full) with the URL's password. */
export const awsPgbenchRunner = userPgbenchRunner;

/**
 * The Postgres log of a repeat's window. On RDS: DownloadDBLogFilePortion (lib/targets/aws/evidence);
 * under the emulator, which has no backend for it, the mapped cluster's own file by offset.
 */
export async function openAwsPostgresLog(campaignId: string, fromRds: (campaignId: string) => Promise<PostgresLogWindow>): Promise<PostgresLogWindow> {
  const map = emulatorMap();
  if (map) return map.postgresLog ? openFileLogWindow(map.postgresLog) : { read: async () => '' };
  return fromRds(campaignId);
}

/** Where the app node and the database actually are (AWS's answer, not what the spec asked). */
export async function awsAvailabilityZones(campaignId: string): Promise<{ app: string; database: string }> {
  return withClients(campaignId, async (c) => {
    const names = rigNames(campaignId);
    const db = (await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: names.dbInstance }))).DBInstances?.[0]?.AvailabilityZone;
    const r = await c.ec2.send(
      new DescribeInstancesCommand({
        Filters: [
          { Name: `tag:${CAMPAIGN_TAG}`, Values: [campaignId] },
          { Name: `tag:${RESOURCE_TAG}`, Values: ['app-node'] },
          { Name: 'instance-state-name', Values: ['pending', 'running'] },
        ],
      }),
    );
    const app = (r.Reservations ?? []).flatMap((x) => x.Instances ?? [])[0]?.Placement?.AvailabilityZone;
    if (!db || !app) throw new Error(`cannot tell the zones of ${campaignId}'s rig: database ${db ?? 'not found'}, app node ${app ?? 'not found (running, tagged rig:resource=app-node)'}`);
    return { app, database: db };
  });
}

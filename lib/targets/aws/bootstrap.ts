// What the app and load nodes boot with, made before they are launched: the Enhanced Monitoring role
// (before the database, which names it), then the nodes' role, the artifacts bucket with the package,
// the Temporal secret, the role's policy (which names the package keys, the Temporal secret and the
// database's RDS-managed master secret) and the instance profile. Each step finds what an earlier
// attempt made (by its derived name) and makes only what is missing; the package is content-keyed,
// so a retry uploads nothing. The user data each node gets is rendered from the result (user-data.ts).
import { DescribeDBInstancesCommand } from '@aws-sdk/client-rds';
import { awsAppQueue, awsDataQueue, awsLoadNodeQueue } from '../../temporal/queues';
import type { ProgressFn } from '../target';
import { ensureBucket } from './bucket';
import type { AwsClients } from './clients';
import { evidencePrefix, loadNodeShipName } from './evidence-sync';
import { accountOf, ensureInstanceProfile, ensureMonitoringRole, ensureNodeRole, putNodePolicy } from './iam';
import { rigNames, type RigResourceKind } from './names';
import { buildPackage, uploadPackage, type RigPackage } from './package';
import { rigTags } from './tags';
import { ensureTemporalSecret, isLoopbackAddress, temporalSecretValue } from './temporal-secret';
import type { UserDataInput } from './user-data';
import { waitFor } from './wait';

/** What the nodes were given: kept in the rig's record (no secret in it: names, keys and ARNs). */
export interface NodeBootstrap {
  bucket: string;
  tarballKey: string;
  lockKey: string;
  packageSha256: string;
  temporalSecretArn: string;
  instanceProfileArn: string;
  dataQueue: string;
  appQueue: string;
}

interface Ctx {
  c: AwsClients;
  campaignId: string;
  expiresAt: string;
  now: Date;
  onProgress: ProgressFn;
}

const tagsFor = (x: Ctx, kind: RigResourceKind, name: string) => rigTags(x.campaignId, kind, name, x.expiresAt, x.now);

/** The role RDS's Enhanced Monitoring publishes through; gives its ARN for CreateDBInstance. */
export async function ensureMonitoring(x: Ctx): Promise<string> {
  const name = rigNames(x.campaignId).monitoringRole;
  return ensureMonitoringRole(x.c, name, tagsFor(x, 'monitoring-role', name), x.onProgress);
}

/** The ARN of the secret RDS made for the master password (ManageMasterUserPassword), once it has one. */
export async function masterSecretArn(c: AwsClients, dbInstance: string, onProgress: ProgressFn): Promise<string> {
  return waitFor(
    `the master user secret of RDS instance ${dbInstance}`,
    async () => (await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: dbInstance }))).DBInstances?.[0]?.MasterUserSecret?.SecretArn,
    { timeoutMs: 15 * 60_000, onProgress },
  );
}

/** Everything the nodes need before RunInstances. `pkg` is for tests; by default the project is packed here. */
export async function ensureNodeBootstrap(x: Ctx, opts: { dbMasterSecretArn: string; rigSecretArn?: string; pkg?: RigPackage; loadNodes?: number }): Promise<NodeBootstrap> {
  const n = rigNames(x.campaignId);
  const roleArn = await ensureNodeRole(x.c, n.nodeRole, tagsFor(x, 'node-role', n.nodeRole), x.onProgress);
  const bucket = n.artifactsBucket(accountOf(roleArn));
  await ensureBucket(x.c, bucket, tagsFor(x, 'artifacts-bucket', bucket), x.onProgress);
  const pkg = opts.pkg ?? (x.onProgress('packing the project (npm pack)'), await buildPackage());
  const keys = await uploadPackage(x.c, bucket, pkg, x.onProgress);

  const value = temporalSecretValue();
  if (isLoopbackAddress(value.address)) x.onProgress(`warning: TEMPORAL_ADDRESS is ${value.address}, this machine's own: the nodes' workers cannot reach it (set TEMPORAL_ADDRESS to an address the nodes can reach)`);
  const temporalSecretArn = await ensureTemporalSecret(x.c, n.temporalSecret, value, tagsFor(x, 'temporal-secret', n.temporalSecret), x.onProgress);

  await putNodePolicy(x.c, n.nodeRole, { bucket, objectKeys: [keys.tarball, keys.lock], secretArns: [temporalSecretArn, opts.dbMasterSecretArn],
    rigSecretArn: opts.rigSecretArn,
    rig: { region: x.c.region, account: accountOf(roleArn), dbInstance: n.dbInstance, evidencePrefix: evidencePrefix(x.campaignId), ...((opts.loadNodes ?? 1) > 1 ? { loadNodes: opts.loadNodes } : {}) },
  });
  const instanceProfileArn = await ensureInstanceProfile(x.c, n.nodeInstanceProfile, n.nodeRole, tagsFor(x, 'node-instance-profile', n.nodeInstanceProfile), x.onProgress);
  return {
    bucket,
    tarballKey: keys.tarball,
    lockKey: keys.lock,
    packageSha256: pkg.sha256,
    temporalSecretArn,
    instanceProfileArn,
    dataQueue: awsDataQueue(x.campaignId),
    appQueue: awsAppQueue(x.campaignId),
  };
}

/**
 * The user data input of one node: the load node serves the data plane, the app node the service.
 * `loadNode` (1..N-1, issue 37): a load node beyond the rig's own, booted as it is, whose worker serves
 * its own queue (awsLoadNodeQueue) and ships its evidence under its own name.
 */
export function nodeUserDataInput(campaignId: string, region: string, node: 'app' | 'load', b: NodeBootstrap, opts: { docker?: boolean; lifetimeMinutes: number; buildId?: string; loadNode?: number }): UserDataInput {
  const n = rigNames(campaignId);
  const extra = node === 'load' && opts.loadNode !== undefined && opts.loadNode > 0 ? opts.loadNode : undefined;
  return {
    node,
    ...(extra !== undefined ? { nodeName: loadNodeShipName(extra) } : {}),
    campaignId,
    hostName: extra !== undefined ? n.extraLoadNode(extra).name : node === 'load' ? n.loadNode : n.appNode,
    queue: extra !== undefined ? awsLoadNodeQueue(campaignId, extra) : node === 'load' ? b.dataQueue : b.appQueue,
    region,
    bucket: b.bucket,
    tarballKey: b.tarballKey,
    lockKey: b.lockKey,
    packageSha256: b.packageSha256,
    temporalSecretId: b.temporalSecretArn,
    lifetimeMinutes: opts.lifetimeMinutes,
    ...(node === 'app' && opts.docker ? { docker: true } : {}),
    ...(opts.buildId ? { buildId: opts.buildId } : {}),
  };
}

// Provisioning an AWS rig, safe to run again at any point: each resource is looked up by its campaign
// tag (find.ts) before it is made, names are derived from the campaign id (names.ts), the RDS instance
// identifier is its key (a second create's DBInstanceAlreadyExists is "found"), and RunInstances
// carries a ClientToken, which real EC2 honours and moto 5.2.5 ignores (two calls, two instances:
// the tag lookup is what keeps a retry from making a second node there). Every resource is tagged
// with the campaign, its kind, its creation time and its expiry. The master password is managed by
// RDS in Secrets Manager (ManageMasterUserPassword): the rig never sees it.
// The database has Enhanced Monitoring every second (through the monitoring role) and Performance
// Insights (7 days, the free retention); the nodes launch with the instance profile and the user data
// that install the project and start their workers (bootstrap.ts, user-data.ts).
import { CreateSecurityGroupCommand, DescribeVpcsCommand } from '@aws-sdk/client-ec2';
import { CreateDBInstanceCommand, CreateDBParameterGroupCommand, ModifyDBParameterGroupCommand } from '@aws-sdk/client-rds';
import type { AwsSpec } from '../../protocol/aws-spec';
import type { DatabaseWaitBound, ProgressFn, ProvisionResult, RigParameters } from '../target';
import { awsClients, type AwsClients } from './clients';
import { campaignCost } from './campaign-cost';
import { formatPerHour, rigCost } from './cost';
import { ensureMonitoring, ensureNodeBootstrap, masterSecretArn, type NodeBootstrap } from './bootstrap';
import { isNamed } from './errors';
import { stampExpiry } from './expiry-stamp';
import { findRigResources, type FoundResource } from './find';
import { whileIamPropagates } from './iam';
import { CREATED_TAG, EXPIRES_TAG, rigNames, type RigResourceKind } from './names';
import type { RigPackage } from './package';
import { rdsParameters } from './parameters';
import { engineLifecycleSupport } from '../../protocol/rds-lifecycle';
import { caBundleInUse } from './rds-ca-coverage';
import { authorizeIngress } from './security-group';
import { runNode } from './launch-node';
import { preflightAws } from './preflight';
import { rdsWindows } from './rds-windows';
import { MONITORING_INTERVAL_S, POSTGRES_PORT } from './plan';
import { campaignImages } from '../../protocol/service-spec';
import { architectureOf } from './instance-architecture';
import type { RegistryOptions } from './image-platforms';
import { nodeRootVolumeGb } from './node-volume';
import { nodeImages, nodeImagesLine } from './node-image';

export { MONITORING_INTERVAL_S };
import { DB_NAME } from './data-plane';
import { awsConnection, DB_MASTER_USER, SERVICE_PORT } from './connection';
import { waitForRdsAvailable } from './rds-available';
import { readAwsRecord, writeAwsRecord } from './record';
import { ensureRigSecret } from './secrets';
import { rigTags as tags } from './tags';
import { resolveBuildId } from '../../tools/build-id';


/** Performance Insights retention, days: 7 is the free tier. */
export const PERFORMANCE_INSIGHTS_RETENTION_DAYS = 7;



/** What the page shows of how the database was set up for measuring, from what RDS reports of it. */
export function rdsSettingsLine(db: { BackupRetentionPeriod?: number; AutoMinorVersionUpgrade?: boolean; DeletionProtection?: boolean; PreferredBackupWindow?: string; PreferredMaintenanceWindow?: string }): string {
  const onOff = (v: boolean | undefined) => (v === undefined ? 'not reported' : v ? 'on' : 'off');
  return [
    `backups ${db.BackupRetentionPeriod === 0 ? 'off (retention 0)' : `retention ${db.BackupRetentionPeriod ?? 'not reported'}`}`,
    `auto minor version upgrade ${onOff(db.AutoMinorVersionUpgrade)}`,
    `deletion protection ${onOff(db.DeletionProtection)}`,
    `backup window ${db.PreferredBackupWindow ?? 'not reported'} and maintenance window ${db.PreferredMaintenanceWindow ?? 'not reported'} UTC (placed after the plan)`,
    'deleted with no final snapshot and its automated backups',
  ].join(', ');
}

/** `pkg`: the package the nodes run, for tests that give one; by default the project is packed (package.ts). */
export async function provisionAws(campaignId: string, params: RigParameters, onProgress: ProgressFn = () => {}, opts: ProvisionOptions = {}): Promise<ProvisionResult> {
  if (!params.aws) throw new Error('the aws target needs the spec\'s aws block (RigParameters.aws)');
  const c = awsClients(params.aws.spec.region);
  try {
    return await provisionWith(c, campaignId, { ...params, aws: params.aws }, onProgress, opts);
  } finally {
    c.destroy();
  }
}

interface ProvisionOptions {
  pkg?: RigPackage;
  /** How the preflight reads the images' registries (tests: a dispatcher trusting their registry's CA). */
  registry?: RegistryOptions;
}

async function provisionWith(c: AwsClients, campaignId: string, params: RigParameters & { aws: NonNullable<RigParameters['aws']> }, onProgress: ProgressFn, opts: ProvisionOptions): Promise<ProvisionResult> {
  const { spec: aws, expiresAt, planMinutes, expectedMinutes } = params.aws;
  const db = params.db ?? {};
  // The nodes' own deadline until they read their rig:expires tag: the spec's watchdog minutes (the
  // same in every attempt, as RunInstances' ClientToken needs); a caller without it, the minutes to expiresAt.
  const lifetimeMinutes = params.aws.lifetimeMinutes ?? Math.max(1, Math.ceil((Date.parse(expiresAt) - Date.now()) / 60_000));
  // waitForDatabase false: the campaign waits for RDS in its own activity (awaitRigDatabase).
  const waitForDatabase = params.aws.waitForDatabase ?? true;
  const rootVolumeGb = nodeRootVolumeGb(params.aws.evidenceBytes);
  // A container image (service.run.image, or a variant's) needs Docker on the app node: its user data
  // installs it; the preflight reads each image's platforms from its registry first.
  const images = campaignImages(params.service ?? {}, params.variantRuns ?? []);
  const docker = images.length > 0;
  const pkg = opts.pkg;
  const n = rigNames(campaignId);
  const now = new Date();
  // load.nodes (issue 37): the rig's own load node and loadNodes - 1 more of its type, launched last.
  const loadNodes = params.aws.loadNodes ?? 1;
  const many = loadNodes > 1 ? { loadNodes } : {};
  // Before the first create: everything AWS (or an image's registry) could refuse later, once the database is billing.
  const pre = await preflightAws(c, aws, onProgress, { makeServiceLinkedRole: true, images, ...(opts.registry ? { registry: opts.registry } : {}), ...many });
  const existing = await findRigResources(c, campaignId);
  // The rig's own of each kind: a load node beyond it (tagged with its node number) is looked up apart.
  const have = (kind: RigResourceKind): FoundResource | undefined => existing.find((r) => r.kind === kind && r.loadNode === undefined);
  let reused = existing.length > 0;

  const vpc = (await c.ec2.send(new DescribeVpcsCommand({ Filters: [{ Name: 'is-default', Values: ['true'] }] }))).Vpcs?.[0]?.VpcId;
  if (!vpc) throw new Error(`no default VPC in ${c.region}: the first slice of the AWS target places the rig in it`);

  const sg = async (kind: 'nodes-security-group' | 'db-security-group', name: string, description: string): Promise<string> => {
    const found = have(kind);
    if (found) return found.id;
    onProgress(`creating security group ${name}`);
    const r = await c.ec2.send(
      new CreateSecurityGroupCommand({ GroupName: name, Description: description, VpcId: vpc, TagSpecifications: [{ ResourceType: 'security-group', Tags: tags(campaignId, kind, name, expiresAt, now) }] }),
    );
    return r.GroupId!;
  };
  const nodesSg = await sg('nodes-security-group', n.nodesSecurityGroup, `rig ${campaignId}: app and load nodes`);
  const dbSg = await sg('db-security-group', n.dbSecurityGroup, `rig ${campaignId}: PostgreSQL from the nodes only`);
  // Both groups were just made: EC2 may not know them yet (security-group.ts).
  await authorizeIngress(c.ec2, dbSg, { IpProtocol: 'tcp', FromPort: POSTGRES_PORT, ToPort: POSTGRES_PORT, UserIdGroupPairs: [{ GroupId: nodesSg }] }, onProgress);
  // The nodes reach each other's service port (the load node sends to the app node's service).
  await authorizeIngress(c.ec2, nodesSg, { IpProtocol: 'tcp', FromPort: SERVICE_PORT, ToPort: SERVICE_PORT, UserIdGroupPairs: [{ GroupId: nodesSg }] }, onProgress);

  if (!have('rig-secret')) onProgress('creating the rig\'s secret (role passwords) in Secrets Manager');
  const rigSecretArn = await ensureRigSecret(c, campaignId, tags(campaignId, 'rig-secret', `rig ${campaignId} database`, expiresAt, now));

  const parameters = rdsParameters(db);
  if (!have('db-parameter-group')) {
    onProgress(`creating DB parameter group ${n.dbParameterGroup}`);
    try {
      await c.rds.send(
        new CreateDBParameterGroupCommand({
          DBParameterGroupName: n.dbParameterGroup,
          DBParameterGroupFamily: pre.engine.family,
          Description: `rig ${campaignId}: the spec's database block`,
          Tags: tags(campaignId, 'db-parameter-group', n.dbParameterGroup, expiresAt, now),
        }),
      );
    } catch (err) {
      if (!isNamed(err, 'DBParameterGroupAlreadyExists')) throw err;
    }
  }
  await c.rds.send(
    new ModifyDBParameterGroupCommand({
      DBParameterGroupName: n.dbParameterGroup,
      Parameters: parameters.map((p) => ({ ParameterName: p.name, ParameterValue: p.value, ApplyMethod: p.applyMethod })),
    }),
  );

  const ctx = { c, campaignId, expiresAt, now, onProgress };
  const monitoringRoleArn = await ensureMonitoring(ctx);
  if (!have('db-instance')) {
    onProgress(`creating RDS instance ${n.dbInstance} (${aws.database.instanceClass})`);
    const s = aws.database.storage;
    const windows = rdsWindows(now, new Date(expiresAt));
    try {
      await whileIamPropagates(`creating RDS instance ${n.dbInstance}`, () => c.rds.send(
        new CreateDBInstanceCommand({
          DBInstanceIdentifier: n.dbInstance,
          DBInstanceClass: aws.database.instanceClass,
          Engine: 'postgres',
          EngineVersion: pre.engine.version,
          // Explicit: AWS's default enrols a past-support major in paid Extended Support (rds-lifecycle.ts).
          EngineLifecycleSupport: engineLifecycleSupport(aws.database.extendedSupport),
          DBName: DB_NAME,
          MasterUsername: DB_MASTER_USER,
          ManageMasterUserPassword: true,
          AllocatedStorage: s.sizeGb,
          StorageType: 'gp3',
          // Below 400 GB RDS gp3 has a fixed baseline and refuses an explicit Iops/StorageThroughput.
          ...(s.sizeGb >= 400 ? { Iops: s.iops, StorageThroughput: s.throughputMiBps } : {}),
          AvailabilityZone: aws.zone,
          MultiAZ: false,
          PubliclyAccessible: false,
          VpcSecurityGroupIds: [dbSg],
          DBParameterGroupName: n.dbParameterGroup,
          MonitoringInterval: MONITORING_INTERVAL_S,
          MonitoringRoleArn: monitoringRoleArn,
          EnablePerformanceInsights: true,
          PerformanceInsightsRetentionPeriod: PERFORMANCE_INSIGHTS_RETENTION_DAYS,
          // Set up for measuring: no backup and no minor upgrade can land inside a repeat, and nothing
          // keeps teardown from deleting it (rds-windows.ts places both windows after the plan).
          BackupRetentionPeriod: 0,
          AutoMinorVersionUpgrade: false,
          DeletionProtection: false,
          PreferredBackupWindow: windows.backup,
          PreferredMaintenanceWindow: windows.maintenance,
          Tags: tags(campaignId, 'db-instance', n.dbInstance, expiresAt, now),
        }),
      ), onProgress);
    } catch (err) {
      // The identifier is the campaign's: an instance by that name is this campaign's, made by an attempt that died.
      if (!isNamed(err, 'DBInstanceAlreadyExists')) throw err;
      reused = true;
    }
  }

  // The nodes read the master password's secret through their role: its ARN is known once RDS made it.
  const boot: NodeBootstrap = await ensureNodeBootstrap(ctx, { dbMasterSecretArn: await masterSecretArn(c, n.dbInstance, onProgress), rigSecretArn, pkg, ...many });

  // RunInstances' ClientToken makes a retried launch return the same instance on real AWS, but only
  // when every parameter is the same: so the tags it carries are the ones every attempt gives alike
  // (Name, campaign, kind), and rig:created / rig:expires, which differ per attempt, follow by CreateTags
  // (a retry after a kill between the two applies them). The token also carries the rig secret's ARN
  // suffix, random per provisioning and kept across its retries: a campaign id used again after a
  // teardown (tokens live 24 hours after termination) does not get the old, terminated instance back.
  const tokenSuffix = rigSecretArn.slice(-6);
  const launchTags = (kind: RigResourceKind, name: string) => tags(campaignId, kind, name, expiresAt, now).filter((t) => t.Key !== CREATED_TAG && t.Key !== EXPIRES_TAG);
  // Retried while EC2 does not know the new instance yet (expiry-stamp.ts).
  const stamp = (id: string, created: boolean) => stampExpiry(c.ec2, id, { expiresAt, ...(created ? { createdAt: now.toISOString() } : {}) }, onProgress);
  // The nodes' workers poll as this worker's build: the campaign is pinned to it (lib/temporal/deployment.ts).
  const { buildId } = await resolveBuildId();
  // The nodes' AMI: the recorded one when an earlier attempt resolved it, so every launch attempt sends
  // the same ImageId (node-image.ts); else the SSM public parameter's, now, kept by the record below
  // before the first launch.
  const before = readAwsRecord(campaignId);
  const { images: amis } = await nodeImages(c, [architectureOf(aws.app.instanceType), architectureOf(aws.load.instanceType)], before?.nodeImages);
  // Written before the launches (it holds the AMI they use): everything but what only an available
  // instance tells (its endpoint, its version, its set-up), which databaseReady() adds, here or in its
  // own activity (awaitRigDatabase).
  const cost = rigCost(aws);
  // Everything billed per hour (the IPv4 addresses, root volumes and Enhanced Monitoring too), and over the plan and the watchdog's deadline.
  const billed = campaignCost({ aws, planMinutes: planMinutes ?? lifetimeMinutes, ...(expectedMinutes !== undefined ? { expectedMinutes } : {}), watchdogMinutes: lifetimeMinutes, monitoringIntervalS: MONITORING_INTERVAL_S, rootVolumeGb, ...many });
  writeAwsRecord({
    campaignId,
    region: aws.region,
    zone: aws.zone,
    createdAt: now.toISOString(),
    resources: {},
    dbEndpoint: '',
    appAddress: '',
    loadAddress: '',
    hardwareLine: `${hardwareLineOf(aws, pre.engine.version, loadNodes)}; ${nodeImagesLine(amis)}; ${caBundleLine()}`,
    costPerHour: billed.perHour,
    priceSource: cost.source,
    costLines: billed.lines,
    parameters: Object.fromEntries(parameters.map((p) => [p.name, p.value])),
    bootstrap: boot,
    nodeImages: amis,
    // What the load-nodes step needs to launch a lost load node again as this provisioning launched it (relaunch.ts).
    loadLaunch: { instanceType: aws.load.instanceType, rootVolumeGb, tokenSuffix },
    ...(before?.relaunches ? { relaunches: before.relaunches } : {}),
    ...many,
  });
  // `found`: this node as an earlier attempt launched it (by its tags); `loadNode`: a load node beyond the rig's own (1..N-1).
  const node = async (kind: 'app-node' | 'load-node', name: string, instanceType: string, clientToken: string, found: FoundResource | undefined, loadNode?: number): Promise<string> => {
    if (found) {
      // Launched by an attempt that died before it stamped it.
      if (!found.expiresAt) await stamp(found.id, !found.createdAt);
      return found.id;
    }
    const { id } = await runNode(c, {
      campaignId, region: aws.region, zone: aws.zone, kind, name, instanceType, clientToken: `${clientToken}-${tokenSuffix}`,
      ...(loadNode ? { loadNode } : {}), tags: launchTags(kind, name), boot, docker, lifetimeMinutes, buildId,
      image: amis[architectureOf(instanceType)]!, rootVolumeGb, securityGroupId: nodesSg,
    }, onProgress);
    await stamp(id, true);
    return id;
  };
  await node('app-node', n.appNode, aws.app.instanceType, n.appClientToken, have('app-node'));
  await node('load-node', n.loadNode, aws.load.instanceType, n.loadClientToken, have('load-node'));
  // The other load nodes (issue 37), each its own Name, ClientToken and node tag; they boot while RDS is made.
  for (let i = 1; i < loadNodes; i++) {
    const x = n.extraLoadNode(i);
    await node('load-node', x.name, aws.load.instanceType, x.clientToken, existing.find((r) => r.kind === 'load-node' && r.loadNode === i), i);
  }

  if (!waitForDatabase) {
    onProgress(`launched; RDS instance ${n.dbInstance} is waited for apart (awaitRigDatabase), the nodes boot meanwhile`);
    return { ...awsConnection(campaignId, '', '', POSTGRES_PORT), reused };
  }
  return { ...(await databaseReady(c, campaignId, DEFAULT_DATABASE_WAIT_MINUTES, onProgress)), reused };
}

/** The CA bundle the rig and the nodes verify RDS with, for the page: where it came from and its sha256. */
export function caBundleLine(env: NodeJS.ProcessEnv = process.env): string {
  const b = caBundleInUse(env);
  return `RDS CA bundle ${b.from === 'vendored' ? 'vendored (lib/targets/aws/rds-global-bundle.pem)' : b.from === 'emulator' ? `the emulator's ${b.file}` : `from RIG_RDS_CA_BUNDLE`} sha256 ${b.sha256}`;
}

/** How long provisioning waits for RDS when the spec does not say (aws.database.availableWaitMinutes). */
export const DEFAULT_DATABASE_WAIT_MINUTES = 60;

function hardwareLineOf(aws: AwsSpec, engineVersion: string, loadNodes = 1): string {
  const s = aws.database.storage;
  return `RDS ${aws.database.instanceClass} PostgreSQL ${engineVersion} (gp3 ${s.sizeGb} GB, ${s.iops} IOPS, ${s.throughputMiBps} MiB/s), app ${aws.app.instanceType}, load ${loadNodes > 1 ? `${loadNodes} x ` : ''}${aws.load.instanceType}, ${aws.zone}`;
}

/**
 * Waits (at most `waitMinutes` from `sinceMs`, a progress line every poll: heartbeats; rds-available.ts)
 * for the rig's RDS instance to be available, then completes the record provisioning wrote with what
 * only an available instance tells: its endpoint, its engine version, its measuring set-up, and the
 * nodes' addresses. Read-only towards AWS, so a second attempt changes nothing but the record, with
 * the same values. Throws DatabaseNotAvailable past the bound or at a status RDS will not leave by itself.
 */
export async function databaseReady(c: AwsClients, campaignId: string, waitMinutes: number, onProgress: ProgressFn = () => {}, bound: DatabaseWaitBound = {}): Promise<ProvisionResult> {
  const rec = readAwsRecord(campaignId);
  if (!rec) throw new Error(`no provisioned aws rig recorded for ${campaignId} (state/aws-rigs/${campaignId}.json): provision it first`);
  const n = rigNames(campaignId);
  const dbReady = await waitForRdsAvailable(c.rds, n.dbInstance, {
    waitMinutes,
    sinceMs: bound.sinceMs ?? Date.now(),
    onProgress,
    ...(bound.signal ? { signal: bound.signal } : {}),
  });
  // The rig's own resources: the load nodes beyond its own (issue 37) are found by their tags when asked for.
  const everything = await findRigResources(c, campaignId);
  const all = everything.filter((r) => r.loadNode === undefined);
  const find = (kind: RigResourceKind) => all.find((r) => r.kind === kind);
  const appAddress = find('app-node')?.address ?? '';
  const host = dbReady.Endpoint?.Address ?? '';
  const port = dbReady.Endpoint?.Port ?? POSTGRES_PORT;
  writeAwsRecord({
    ...rec,
    resources: Object.fromEntries(all.map((r) => [r.kind, r.id])),
    dbEndpoint: `${dbReady.Endpoint?.Address ?? '?'}:${port}`,
    appAddress,
    loadAddress: find('load-node')?.address ?? '',
    hardwareLine: dbReady.EngineVersion ? rec.hardwareLine.replace(/PostgreSQL \S+ \(/, `PostgreSQL ${dbReady.EngineVersion} (`) : rec.hardwareLine,
    rdsSettings: rdsSettingsLine(dbReady),
  });
  onProgress(`provisioned: ${everything.length} resources, ${formatPerHour(rec.costPerHour)}`);
  return { ...awsConnection(campaignId, appAddress, host, port), reused: true };
}

/** The aws target's awaitDatabase: its own activity, so that provisioning's timeout need not cover RDS's creation. */
export async function awaitAwsDatabase(campaignId: string, waitMinutes: number, onProgress: ProgressFn = () => {}, bound: DatabaseWaitBound = {}): Promise<ProvisionResult> {
  const rec = readAwsRecord(campaignId);
  if (!rec) throw new Error(`no provisioned aws rig recorded for ${campaignId} (state/aws-rigs/${campaignId}.json): provision it first`);
  const c = awsClients(rec.region);
  try {
    return await databaseReady(c, campaignId, waitMinutes, onProgress, bound);
  } finally {
    c.destroy();
  }
}

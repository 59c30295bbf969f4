// The IAM of an AWS rig, per campaign: the nodes' role and instance profile, and the role through
// which RDS publishes Enhanced Monitoring. IAM is global and its listings have no tag filter, so every
// role and profile made here lives under the path /rig/ (IAM_PATH) with the campaign's tags, and
// find-bootstrap.ts lists that path and reads each one's tags.
//
// The nodes' role may read the campaign's package (s3:GetObject on its two keys) and three secrets
// (the campaign's Temporal connection, the database's master password, which RDS keeps in Secrets
// Manager under ManageMasterUserPassword, and the rig's own: the roles' passwords, where the load
// node also keeps the API key); read their own database instance, its log files and the cloud
// evidence of its repeats (CloudWatch, Enhanced Monitoring, Performance Insights: collected on the
// load node, after each repeat); find the app node's zone; and ship their evidence under
// evidence/<campaign>/ in the bucket; with several load nodes (issue 37), also read what was shipped
// there (the data plane merges the other load nodes' streams). Nothing else (nodePolicyDocument).
//
// IAM is eventually consistent: on real AWS a role or profile made a moment ago can be refused by EC2
// and RDS for some seconds ("Invalid IAM Instance Profile", "IAM role ARN value is invalid");
// whileIamPropagates retries those refusals, and only those, for two minutes.
import {
  AddRoleToInstanceProfileCommand,
  AttachRolePolicyCommand,
  CreateInstanceProfileCommand,
  CreateRoleCommand,
  DeleteInstanceProfileCommand,
  DeleteRoleCommand,
  DeleteRolePolicyCommand,
  DetachRolePolicyCommand,
  GetInstanceProfileCommand,
  GetRoleCommand,
  ListAttachedRolePoliciesCommand,
  ListInstanceProfilesForRoleCommand,
  ListRolePoliciesCommand,
  PutRolePolicyCommand,
  RemoveRoleFromInstanceProfileCommand,
} from '@aws-sdk/client-iam';
import type { ProgressFn } from '../target';
import type { AwsClients } from './clients';
import { isNamed } from './errors';
import { IAM_PATH } from './names';
import type { RigTag } from './tags';
import { waitFor } from './wait';

export const ENHANCED_MONITORING_POLICY_ARN = 'arn:aws:iam::aws:policy/service-role/AmazonRDSEnhancedMonitoringRole';
/** The inline policy on the nodes' role. */
export const NODE_POLICY_NAME = 'rig-node';

function trust(service: string): string {
  return JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: service }, Action: 'sts:AssumeRole' }] });
}

export interface NodePolicyInput {
  /** The artifacts bucket and the keys the nodes fetch (package.ts). */
  bucket: string;
  objectKeys: string[];
  /** The campaign's Temporal secret and the database's RDS-managed master secret (full ARNs). */
  secretArns: string[];
  /**
   * The rig's own secret (role passwords and the fixtures' API key, secrets.ts): read by both nodes,
   * and written by the load node, whose bring-up keeps a new API key on every attempt.
   */
  rigSecretArn?: string;
  /**
   * What the load node's steps read and write besides (data-plane.ts, evidence/, evidence-sync.ts):
   * the database instance (its endpoint, zone and master secret; its log files), the app node's zone,
   * the cloud evidence of each repeat, and the evidence prefix it ships to.
   */
  rig?: { region: string; account: string; dbInstance: string; evidencePrefix: string; /** Above 1 (issue 37): the load nodes read each other's shipped evidence (the data plane merges their streams). */ loadNodes?: number };
}

/** The nodes' inline policy: least privilege, only the named objects and secrets. Pure. */
export function nodePolicyDocument(p: NodePolicyInput): string {
  if (!p.objectKeys.length || !p.secretArns.length) throw new Error('the nodes\' policy needs the package keys and the secret ARNs: refusing to write a policy without a resource');
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      { Sid: 'ReadThePackage', Effect: 'Allow', Action: 's3:GetObject', Resource: p.objectKeys.map((k) => `arn:aws:s3:::${p.bucket}/${k}`) },
      { Sid: 'ReadTheSecrets', Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: [...p.secretArns, ...(p.rigSecretArn ? [p.rigSecretArn] : [])] },
      ...(p.rigSecretArn ? [{ Sid: 'KeepTheApiKey', Effect: 'Allow', Action: 'secretsmanager:PutSecretValue', Resource: p.rigSecretArn }] : []),
      ...(p.rig ? rigStatements(p.bucket, p.rig) : []),
    ],
  });
}

/** The nodes' reads of their own rig and the evidence they ship (NodePolicyInput.rig). */
function rigStatements(bucket: string, r: NonNullable<NodePolicyInput['rig']>): object[] {
  const db = `arn:aws:rds:${r.region}:${r.account}:db:${r.dbInstance}`;
  return [
    { Sid: 'ShipTheEvidence', Effect: 'Allow', Action: 's3:PutObject', Resource: `arn:aws:s3:::${bucket}/${r.evidencePrefix}*` },
    // Several load nodes: the data plane's reads the streams the others shipped, before it merges them
    // (lib/targets/aws/load-nodes.ts). Only the campaign's own evidence prefix, only then. The listing
    // of that prefix is what makes S3 answer a stream never shipped with NoSuchKey (a node lost: the
    // merge refuses it) rather than AccessDenied.
    ...((r.loadNodes ?? 1) > 1
      ? [
          { Sid: 'ReadTheLoadNodesEvidence', Effect: 'Allow', Action: 's3:GetObject', Resource: `arn:aws:s3:::${bucket}/${r.evidencePrefix}*` },
          { Sid: 'KnowWhatTheLoadNodesShipped', Effect: 'Allow', Action: 's3:ListBucket', Resource: `arn:aws:s3:::${bucket}`, Condition: { StringLike: { 's3:prefix': `${r.evidencePrefix}*` } } },
        ]
      : []),
    { Sid: 'ReadTheDatabase', Effect: 'Allow', Action: ['rds:DescribeDBInstances', 'rds:DescribeDBLogFiles', 'rds:DownloadDBLogFilePortion'], Resource: db },
    // No resource-level permissions for these (DescribeInstances, GetMetricData) or the resource is
    // known only once the instance exists (Performance Insights keys it by DbiResourceId).
    { Sid: 'ReadTheRigAndItsMetrics', Effect: 'Allow', Action: ['ec2:DescribeInstances', 'cloudwatch:GetMetricData'], Resource: '*' },
    { Sid: 'ReadEnhancedMonitoring', Effect: 'Allow', Action: 'logs:FilterLogEvents', Resource: `arn:aws:logs:${r.region}:${r.account}:log-group:RDSOSMetrics:*` },
    { Sid: 'ReadDbLoad', Effect: 'Allow', Action: 'pi:GetResourceMetrics', Resource: `arn:aws:pi:${r.region}:${r.account}:metrics/rds/*` },
  ];
}

/** The account id, from an ARN IAM gave back (arn:aws:iam::123456789012:role/...). */
export function accountOf(arn: string): string {
  const account = arn.split(':')[4];
  if (!account || !/^\d{12}$/.test(account)) throw new Error(`cannot read an account id from ARN ${arn}`);
  return account;
}

async function ensureRole(c: AwsClients, name: string, service: string, description: string, tags: RigTag[], onProgress: ProgressFn): Promise<string> {
  try {
    onProgress(`creating IAM role ${name}`);
    return (await c.iam.send(new CreateRoleCommand({ RoleName: name, Path: IAM_PATH, AssumeRolePolicyDocument: trust(service), Description: description, Tags: tags }))).Role!.Arn!;
  } catch (err) {
    // The name is the campaign's: a role by that name was made by an attempt that died.
    if (!isNamed(err, 'EntityAlreadyExists', 'EntityAlreadyExistsException')) throw err;
    return (await c.iam.send(new GetRoleCommand({ RoleName: name }))).Role!.Arn!;
  }
}

/** The role RDS publishes Enhanced Monitoring through; gives its ARN (CreateDBInstance's MonitoringRoleArn). */
export async function ensureMonitoringRole(c: AwsClients, name: string, tags: RigTag[], onProgress: ProgressFn = () => {}): Promise<string> {
  const arn = await ensureRole(c, name, 'monitoring.rds.amazonaws.com', 'rig: RDS Enhanced Monitoring of one campaign', tags, onProgress);
  await c.iam.send(new AttachRolePolicyCommand({ RoleName: name, PolicyArn: ENHANCED_MONITORING_POLICY_ARN }));
  return arn;
}

/** The nodes' role (assumed by EC2); its policy is put once the package and secrets are known. */
export async function ensureNodeRole(c: AwsClients, name: string, tags: RigTag[], onProgress: ProgressFn = () => {}): Promise<string> {
  return ensureRole(c, name, 'ec2.amazonaws.com', 'rig: the app and load nodes of one campaign', tags, onProgress);
}

export async function putNodePolicy(c: AwsClients, roleName: string, policy: NodePolicyInput): Promise<void> {
  await c.iam.send(new PutRolePolicyCommand({ RoleName: roleName, PolicyName: NODE_POLICY_NAME, PolicyDocument: nodePolicyDocument(policy) }));
}

/** The instance profile that carries the nodes' role; gives its ARN. */
export async function ensureInstanceProfile(c: AwsClients, name: string, roleName: string, tags: RigTag[], onProgress: ProgressFn = () => {}): Promise<string> {
  try {
    onProgress(`creating IAM instance profile ${name}`);
    await c.iam.send(new CreateInstanceProfileCommand({ InstanceProfileName: name, Path: IAM_PATH, Tags: tags }));
  } catch (err) {
    if (!isNamed(err, 'EntityAlreadyExists', 'EntityAlreadyExistsException')) throw err;
  }
  const profile = (await c.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: name }))).InstanceProfile!;
  if (!(profile.Roles ?? []).some((r) => r.RoleName === roleName)) {
    await c.iam.send(new AddRoleToInstanceProfileCommand({ InstanceProfileName: name, RoleName: roleName }));
  }
  return profile.Arn!;
}

/**
 * A refusal that only says IAM has not spread a role or profile yet: an InvalidParameter* error about
 * an IAM role or instance profile being invalid, unknown or lacking permissions (EC2's "Invalid IAM
 * Instance Profile ARN", RDS's "IAM role ARN value is invalid or does not include the required
 * permissions"). Any other invalid parameter is the caller's and is not waited out.
 */
function iamNotYetConsistent(err: unknown): boolean {
  return err instanceof Error && /InvalidParameter/.test(err.name) && /iam|instance profile|role/i.test(err.message) && /invalid|not found|does not exist|permissions/i.test(err.message);
}

/**
 * Runs `call` again, every `delayMs` (5 s) for at most `timeoutMs` (2 minutes), while IAM has not yet
 * spread a role or profile made a moment ago; any other error, or the last one, is thrown as it is.
 */
export async function whileIamPropagates<T>(what: string, call: () => Promise<T>, onProgress: ProgressFn = () => {}, opts: { timeoutMs?: number; delayMs?: number } = {}): Promise<T> {
  const delay = opts.delayMs ?? 5000;
  const deadline = Date.now() + (opts.timeoutMs ?? 2 * 60_000);
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (!iamNotYetConsistent(err) || Date.now() + delay > deadline) throw err;
      onProgress(`${what}: IAM not yet consistent (${(err as Error).message}); trying again`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

const gone = (err: unknown) => isNamed(err, 'NoSuchEntity', 'NoSuchEntityException');

/** Takes the role out of its instance profiles, detaches and deletes its policies, deletes it, waits until IAM says it is gone. */
export async function removeRole(c: AwsClients, name: string, onProgress: ProgressFn = () => {}): Promise<void> {
  try {
    for (const p of (await c.iam.send(new ListInstanceProfilesForRoleCommand({ RoleName: name }))).InstanceProfiles ?? []) {
      await c.iam.send(new RemoveRoleFromInstanceProfileCommand({ InstanceProfileName: p.InstanceProfileName!, RoleName: name }));
    }
    for (const p of (await c.iam.send(new ListAttachedRolePoliciesCommand({ RoleName: name }))).AttachedPolicies ?? []) {
      await c.iam.send(new DetachRolePolicyCommand({ RoleName: name, PolicyArn: p.PolicyArn! }));
    }
    for (const p of (await c.iam.send(new ListRolePoliciesCommand({ RoleName: name }))).PolicyNames ?? []) {
      await c.iam.send(new DeleteRolePolicyCommand({ RoleName: name, PolicyName: p }));
    }
    onProgress(`deleting IAM role ${name}`);
    await c.iam.send(new DeleteRoleCommand({ RoleName: name }));
  } catch (err) {
    if (!gone(err)) throw err;
  }
  await waitFor(
    `IAM role ${name} deleted`,
    async () => {
      try {
        await c.iam.send(new GetRoleCommand({ RoleName: name }));
        return undefined;
      } catch (err) {
        if (gone(err)) return true;
        throw err;
      }
    },
    { timeoutMs: 5 * 60_000, onProgress },
  );
}

/** Removes its role from it, deletes it, waits until IAM says it is gone (the role itself stays). */
export async function removeInstanceProfile(c: AwsClients, name: string, onProgress: ProgressFn = () => {}): Promise<void> {
  try {
    const profile = (await c.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: name }))).InstanceProfile!;
    for (const r of profile.Roles ?? []) await c.iam.send(new RemoveRoleFromInstanceProfileCommand({ InstanceProfileName: name, RoleName: r.RoleName! }));
    onProgress(`deleting IAM instance profile ${name}`);
    await c.iam.send(new DeleteInstanceProfileCommand({ InstanceProfileName: name }));
  } catch (err) {
    if (!gone(err)) throw err;
  }
  await waitFor(
    `IAM instance profile ${name} deleted`,
    async () => {
      try {
        await c.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: name }));
        return undefined;
      } catch (err) {
        if (gone(err)) return true;
        throw err;
      }
    },
    { timeoutMs: 5 * 60_000, onProgress },
  );
}

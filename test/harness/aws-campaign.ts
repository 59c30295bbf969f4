// A whole AWS campaign under moto's IAM enforcement (test/campaign/aws-campaign*.test.ts): the three
// identities it runs as, and the emulated nodes' workers (the app node's, the load node's, and with
// load.nodes > 1 the other load nodes', each named as its user data names it: load-n<i>).
//
// - The control host (the worker in the test's own process, process.env's AWS keys): an IAM user
//   holding the documented policies (docs/aws-iam-policy-*.json), or a variant with one action taken out.
// - The nodes (`rig worker --task-queue Q` child processes, the keys in their environment and nowhere
//   else): an IAM user holding what the nodes' instance profile grants, read back from the role the
//   campaign's provisioning made (its inline policy, lib/targets/aws/iam.ts nodePolicyDocument), so
//   the test proves what a node really gets. A node boots only after RunInstances, and so after that
//   policy exists: the test starts the nodes' workers once it is on the user (their queues hold the
//   campaign's tasks until then, as a booting node's do).
// - The test itself (preparing the account, looking at what the rig left, granting an action back):
//   an admin user, through clients that carry its keys explicitly (awsClientsAs), never through
//   process.env, which the control host's worker reads concurrently.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateUserCommand, CreateAccessKeyCommand, GetRolePolicyCommand, PutUserPolicyCommand } from '@aws-sdk/client-iam';
import { awsClients, type AwsClients } from '../../lib/targets/aws/clients';
import { findRigResources } from '../../lib/targets/aws/find';
import { NODE_POLICY_NAME } from '../../lib/targets/aws/iam';
import { rigNames } from '../../lib/targets/aws/names';
import type { WorkflowHandle } from '@temporalio/client';
import { waitOnCampaign } from './campaign';
import { adminUser, documentedPolicies, enforce, motoView, userWithPolicies, type Keys, type PolicyDocument } from './iam-enforced';
import { spawnRigWorker } from './worker-process';

/** moto's account: the artifacts bucket's name carries it. */
export const MOTO_ACCOUNT = '123456789012';

export interface CampaignIdentities {
  /** The control host's: the documented policies (or `controlPolicies`). */
  control: Keys;
  /** The nodes': nothing until grantNodePolicy puts the instance profile's policy on it. */
  node: Keys;
  admin: Keys;
}

export const NODE_USER = 'rig-node';
export const CONTROL_USER = 'rig-control-host';

/** The three users (made before enforcement is on, with clients of moto's default credentials), then enforcement on. */
export async function campaignIdentities(c: AwsClients, endpoint: string, controlPolicies: Map<string, PolicyDocument> = documentedPolicies()): Promise<CampaignIdentities> {
  const control = await userWithPolicies(c, CONTROL_USER, controlPolicies);
  await c.iam.send(new CreateUserCommand({ UserName: NODE_USER }));
  const k = (await c.iam.send(new CreateAccessKeyCommand({ UserName: NODE_USER }))).AccessKey!;
  const node = { AWS_ACCESS_KEY_ID: k.AccessKeyId!, AWS_SECRET_ACCESS_KEY: k.SecretAccessKey! };
  const admin = await adminUser(c);
  await enforce(endpoint);
  return { control, node, admin };
}

/** The rig's AWS clients with `keys` given explicitly (not read from process.env). */
export function awsClientsAs(keys: Keys, region: string, endpoint: string): AwsClients {
  // Only the endpoint from the environment: no replay, no other settings of the process's.
  return awsClients(region, { RIG_AWS_ENDPOINT: endpoint }, { accessKeyId: keys.AWS_ACCESS_KEY_ID, secretAccessKey: keys.AWS_SECRET_ACCESS_KEY });
}

/** Runs fn with clients of `keys`, destroyed after. */
export async function withClientsAs<T>(keys: Keys, region: string, endpoint: string, fn: (c: AwsClients) => Promise<T>): Promise<T> {
  const c = awsClientsAs(keys, region, endpoint);
  try {
    return await fn(c);
  } finally {
    c.destroy();
  }
}

/** `kind id` of every resource of the campaign that moto still holds, as the admin sees it. */
export const rigResourcesAs = (admin: Keys, region: string, endpoint: string, campaignId: string): Promise<string[]> =>
  withClientsAs(admin, region, endpoint, async (c) => (await findRigResources(c, campaignId)).map((r) => `${r.kind} ${r.id}`));

/**
 * Waits for the inline policy the campaign's provisioning put on its node role (the campaign's id is
 * the workflow's), failing at once if the campaign ends first, and puts it (as moto can
 * evaluate it: motoView) on the nodes' user. Returns the document as the rig wrote it.
 */
export async function grantNodePolicy(admin: Keys, region: string, endpoint: string, handle: WorkflowHandle): Promise<PolicyDocument> {
  const role = rigNames(handle.workflowId).nodeRole;
  return withClientsAs(admin, region, endpoint, async (c) => {
    const text = await waitOnCampaign(handle, `the node role ${role}'s policy ${NODE_POLICY_NAME}`, async () => {
      try {
        return (await c.iam.send(new GetRolePolicyCommand({ RoleName: role, PolicyName: NODE_POLICY_NAME }))).PolicyDocument;
      } catch {
        return undefined; // not made yet (NoSuchEntity)
      }
    }, 300_000, 200);
    // IAM answers a policy document URL-encoded (RFC 3986); moto 5.2.5 as written. Both decode to the JSON.
    const doc = JSON.parse(text.trimStart().startsWith('{') ? text : decodeURIComponent(text)) as PolicyDocument;
    await c.iam.send(new PutUserPolicyCommand({ UserName: NODE_USER, PolicyName: NODE_POLICY_NAME, PolicyDocument: JSON.stringify(motoView(doc)) }));
    return doc;
  });
}

/** A node's own state and results folders (`load-n<i>`: a load node beyond the rig's own, issue 37). */
export function nodeFolders(node: string): { stateDir: string; resultsDir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rig-aws-${node}-node-`));
  return { stateDir: path.join(dir, 'state'), resultsDir: path.join(dir, 'state', 'results') };
}

/** A node's worker: `rig worker --task-queue Q` in a child process, with the node's own folders and the settings its user data gives it. */
export async function nodeWorker(node: string, queue: string, env: NodeJS.ProcessEnv, children: Set<ChildProcess>, folders = nodeFolders(node)): Promise<{ stateDir: string; resultsDir: string }> {
  await spawnRigWorker({
    env: { ...env, RIG_STATE_DIR: folders.stateDir, RIG_RESULTS: folders.resultsDir, RIG_AWS_NODE: node },
    args: ['--task-queue', queue],
    children,
    name: `the ${node} node's worker`,
  });
  return folders;
}

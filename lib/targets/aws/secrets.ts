// The AWS rig's secrets, all in Secrets Manager, none on disk and none in workflow history:
// - the master user's password, which RDS itself makes and keeps (ManageMasterUserPassword: the
//   instance's MasterUserSecret), read by the load node's worker when it makes the roles;
// - the rig's own secret, rig/<campaign>/database, made at provisioning by the control host: the
//   passwords of hardcount_owner and hardcount_app, and the fixtures' API key once bring-up made one.
// The rig's secret is tagged like every other resource, found by tag, and deleted without recovery at
// teardown (a rig's passwords have no use after it). Reading a secret that is not there is an error
// that names it: a step never runs on a guessed password.
import { DescribeDBInstancesCommand } from '@aws-sdk/client-rds';
import { CreateSecretCommand, DescribeSecretCommand, GetSecretValueCommand, PutSecretValueCommand, type Tag } from '@aws-sdk/client-secrets-manager';
import { generatePassword as password } from '../local/secrets';
import type { AwsClients } from './clients';
import { isNamed } from './errors';

export interface RigSecret {
  ownerPassword: string;
  appPassword: string;
  /** The fixtures' raw API key: absent until bring-up made one. */
  apiKey?: string;
}

export function rigSecretName(campaignId: string): string {
  return `rig/${campaignId}/database`;
}


/** Makes the rig's secret with fresh passwords, or finds it (a retried provision keeps the first passwords). Returns its ARN. */
export async function ensureRigSecret(c: AwsClients, campaignId: string, tags: Tag[]): Promise<string> {
  const name = rigSecretName(campaignId);
  try {
    return (await c.secrets.send(new DescribeSecretCommand({ SecretId: name }))).ARN!;
  } catch (err) {
    if (!isNamed(err, 'ResourceNotFoundException')) throw err;
  }
  const value: RigSecret = { ownerPassword: password(), appPassword: password() };
  try {
    const r = await c.secrets.send(
      new CreateSecretCommand({ Name: name, Description: `rig ${campaignId}: database role passwords and the fixtures' API key`, SecretString: JSON.stringify(value), Tags: tags }),
    );
    return r.ARN!;
  } catch (err) {
    // Two attempts racing: the other one made it first, with its passwords; use those.
    if (!isNamed(err, 'ResourceExistsException')) throw err;
    return (await c.secrets.send(new DescribeSecretCommand({ SecretId: name }))).ARN!;
  }
}

export async function readRigSecret(c: AwsClients, campaignId: string): Promise<RigSecret> {
  const name = rigSecretName(campaignId);
  let raw: string | undefined;
  try {
    raw = (await c.secrets.send(new GetSecretValueCommand({ SecretId: name }))).SecretString;
  } catch (err) {
    if (isNamed(err, 'ResourceNotFoundException')) throw new Error(`the rig's secret ${name} is not in Secrets Manager (${c.region}): provision the rig first`);
    throw err;
  }
  const v = JSON.parse(raw ?? '{}') as Partial<RigSecret>;
  if (!v.ownerPassword || !v.appPassword) throw new Error(`the rig's secret ${name} lacks ownerPassword or appPassword`);
  return v as RigSecret;
}

/** Keeps (or replaces) the API key beside the passwords: bring-up makes a new one on every attempt. */
export async function storeRigApiKey(c: AwsClients, campaignId: string, apiKey: string): Promise<void> {
  const current = await readRigSecret(c, campaignId);
  await c.secrets.send(new PutSecretValueCommand({ SecretId: rigSecretName(campaignId), SecretString: JSON.stringify({ ...current, apiKey }) }));
}

/** The master user and the password RDS keeps for it in Secrets Manager (the instance's MasterUserSecret). */
export async function masterCredentials(c: AwsClients, dbInstanceIdentifier: string): Promise<{ user: string; password: string }> {
  const inst = (await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: dbInstanceIdentifier }))).DBInstances?.[0];
  const arn = inst?.MasterUserSecret?.SecretArn;
  if (!inst?.MasterUsername || !arn) {
    throw new Error(`RDS instance ${dbInstanceIdentifier} has no master user secret (MasterUserSecret): it must be made with ManageMasterUserPassword, as the rig's provision does`);
  }
  const raw = (await c.secrets.send(new GetSecretValueCommand({ SecretId: arn }))).SecretString;
  const password = (JSON.parse(raw ?? '{}') as { password?: string }).password;
  if (!password) throw new Error(`the master user secret of ${dbInstanceIdentifier} holds no password`);
  // The instance's MasterUsername, not the secret's username field: they are the same on RDS, and the
  // instance is the authority (moto 5.2.5's secret says "admin" whatever the master user is).
  return { user: inst.MasterUsername, password };
}

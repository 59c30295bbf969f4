// moto with IAM enforcement on, for a test that runs the rig with nothing but the documented policy
// (docs/aws-iam-policy-*.json): an IAM user holding exactly those policies, another holding
// everything (the test's own looks), then enforcement switched on.
//
// How moto 5.2.5 enforces (moto/core/authorization.py, moto/iam/access_control.py, read at 5.2.5):
// - INITIAL_NO_AUTH_ACTION_COUNT is how many requests pass unchecked before every later one is
//   authenticated and authorized; server mode also takes POST /moto-api/reset-auth with the count as
//   its body (and starts counting again). enforce() posts 0 once the users exist, so the set-up
//   itself (users, policies, keys, RDS's service-linked role) is never counted or refused.
// - Every service whose responses go through BaseResponse.call_action (EC2, RDS, IAM, Secrets
//   Manager, STS, the tagging API, CloudWatch, Logs, ...) and S3 (its own S3IAMRequest) check the
//   caller's identity policies. The action is `<signing name>:<operation>`: the signing name, not
//   IAM's prefix, so CloudWatch is `monitoring:` and the tagging API `tagging:`; S3's are moto's own
//   names (HeadBucket, not s3:ListBucket; HEAD of a key is s3:GetObject, as on AWS).
// - The resource is the request's ARN only for S3 (bucket, bucket/key) and IAM (an existing role);
//   every other service is checked against "*", and a statement whose Resource is an ARN never
//   matches "*". Conditions are evaluated only for trust policies: an identity policy's Condition
//   is ignored.
// - S3's DeleteObjects (POST ?delete) is authorized as s3:DeleteObject on the bucket's ARN, where AWS
//   authorizes it on each key's (`bucket/key`).
// So motoView() keeps every action the policy names, S3's resources as written (plus the bucket's
// ARN beside `bucket/*` for s3:DeleteObject), and widens every other resource to "*", adding the
// alias moto checks for an action IAM names otherwise. What the test then
// proves is the action set (and S3's resource patterns); IAM's resource ARNs, conditions and tag keys are
// still only checked against the documentation (docs/aws-iam-policy.md says so).
import fs from 'node:fs';
import path from 'node:path';
import { AttachUserPolicyCommand, CreateAccessKeyCommand, CreatePolicyCommand, CreateUserCommand, PutUserPolicyCommand } from '@aws-sdk/client-iam';
import type { AwsClients } from '../../lib/targets/aws/clients';

const root = path.resolve(__dirname, '..', '..');
const DOCS = path.join(root, 'docs');

export interface PolicyStatement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource?: string | string[];
  Condition?: unknown;
}
export interface PolicyDocument {
  Version: string;
  Statement: PolicyStatement[];
}

/** docs/aws-iam-policy-*.json, by file name: what a first real run attaches. */
export function documentedPolicies(): Map<string, PolicyDocument> {
  const files = fs.readdirSync(DOCS).filter((f) => /^aws-iam-policy-.+\.json$/.test(f)).sort();
  return new Map(files.map((f) => [f, JSON.parse(fs.readFileSync(path.join(DOCS, f), 'utf8')) as PolicyDocument]));
}

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The same policies with `action` taken out of every statement (a statement left with none is dropped). */
export function withoutAction(policies: Map<string, PolicyDocument>, action: string): Map<string, PolicyDocument> {
  let found = false;
  const out = new Map<string, PolicyDocument>();
  for (const [name, doc] of policies) {
    const Statement = doc.Statement.flatMap((s) => {
      const actions = list(s.Action);
      const kept = actions.filter((a) => a.toLowerCase() !== action.toLowerCase());
      if (kept.length !== actions.length) found = true;
      return kept.length ? [{ ...s, Action: kept }] : [];
    });
    out.set(name, { ...doc, Statement });
  }
  if (!found) throw new Error(`withoutAction: no documented policy names ${action}`);
  return out;
}

/** IAM's action -> the names moto 5.2.5 checks for the same call (the signing name, S3's own names). */
const MOTO_ALIASES: Array<[RegExp, (m: RegExpMatchArray) => string[]]> = [
  [/^cloudwatch:(.+)$/i, (m) => [`monitoring:${m[1]}`]],
  [/^tag:(.+)$/i, (m) => [`tagging:${m[1]}`]],
  [/^s3:ListBucket$/i, () => ['s3:HeadBucket']],
  [/^s3:ListAllMyBuckets$/i, () => ['s3:ListBuckets']],
];

/** The policy as moto can evaluate it (see the head of this file): actions kept (plus moto's aliases), non-S3 resources widened. */
export function motoView(doc: PolicyDocument): PolicyDocument {
  return {
    Version: doc.Version,
    Statement: doc.Statement.map((s) => {
      const actions = list(s.Action);
      const aliases = actions.flatMap((a) => MOTO_ALIASES.flatMap(([re, f]) => {
        const m = a.match(re);
        return m ? f(m) : [];
      }));
      const s3Only = actions.every((a) => /^s3:/i.test(a));
      const deletesKeys = actions.some((a) => /^s3:DeleteObject$/i.test(a));
      const s3Resources = list(s.Resource ?? '*').flatMap((r) => (deletesKeys && r.endsWith('/*') ? [r, r.slice(0, -2)] : [r]));
      const { Condition: _ignoredByMoto, ...rest } = s;
      return { ...rest, Action: [...actions, ...aliases], Resource: s3Only ? s3Resources : '*' };
    }),
  };
}

export interface Keys {
  AWS_ACCESS_KEY_ID: string;
  AWS_SECRET_ACCESS_KEY: string;
}

/** An IAM user holding exactly `policies` (as customer managed policies, seen through motoView), and its access key. */
export async function userWithPolicies(c: AwsClients, name: string, policies: Map<string, PolicyDocument>): Promise<Keys> {
  await c.iam.send(new CreateUserCommand({ UserName: name }));
  for (const [file, doc] of policies) {
    const arn = (await c.iam.send(new CreatePolicyCommand({ PolicyName: `${name}-${file.replace(/\.json$/, '')}`, PolicyDocument: JSON.stringify(motoView(doc)) }))).Policy!.Arn!;
    await c.iam.send(new AttachUserPolicyCommand({ UserName: name, PolicyArn: arn }));
  }
  return accessKey(c, name);
}

/** An IAM user allowed everything: the test's own looks and set-up once enforcement is on. */
export async function adminUser(c: AwsClients, name = 'rig-test-admin'): Promise<Keys> {
  await c.iam.send(new CreateUserCommand({ UserName: name }));
  await c.iam.send(new PutUserPolicyCommand({ UserName: name, PolicyName: 'all', PolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] }) }));
  return accessKey(c, name);
}

async function accessKey(c: AwsClients, name: string): Promise<Keys> {
  const k = (await c.iam.send(new CreateAccessKeyCommand({ UserName: name }))).AccessKey!;
  return { AWS_ACCESS_KEY_ID: k.AccessKeyId!, AWS_SECRET_ACCESS_KEY: k.SecretAccessKey! };
}

/** Runs fn with `keys` as the process's AWS credentials (the rig's clients read them from process.env), then puts the old ones back. */
export async function asUser<T>(keys: Keys, fn: () => Promise<T>): Promise<T> {
  const saved = { AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY };
  Object.assign(process.env, keys);
  try {
    return await fn();
  } finally {
    Object.assign(process.env, saved);
  }
}

/** From now on moto authenticates and authorizes every request (POST /moto-api/reset-auth 0). */
export async function enforce(endpoint: string): Promise<void> {
  const r = await fetch(`${endpoint}/moto-api/reset-auth`, { method: 'POST', body: '0' });
  if (!r.ok) throw new Error(`moto reset-auth answered ${r.status}: ${await r.text()}`);
}

// test-mode: unit
// The policies docs/aws-iam-policy-*.json together grant every AWS action the rig calls: each
// `new <Name>Command(` in lib/targets/aws/**/*.ts whose <Name>Command is imported from
// '@aws-sdk/client-<service>' is the action <prefix>:<Name> (or, where IAM names the operation's
// permission otherwise, the actions in IAM_ACTIONS), and an Allow statement must name it (or a
// wildcard that covers it). A new call, or a new client package, that the policies do not cover fails
// here naming it: the policies are what a first real AWS run is given, and AccessDenied mid-teardown
// is the failure they prevent. Each must also fit IAM's managed-policy size limit.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const DOCS = path.join(root, 'docs');
/** Every policy a user attaches: docs/aws-iam-policy-*.json (split to stay under IAM's size limit). */
const POLICIES = fs.readdirSync(DOCS).filter((f) => /^aws-iam-policy-.+\.json$/.test(f)).sort().map((f) => path.join(DOCS, f));
/** IAM's limit on a customer managed policy, in characters, whitespace not counted. */
const MANAGED_POLICY_MAX_CHARS = 6144;

/** SDK client package -> IAM action prefix. A package not here fails the test: add it with its prefix. */
const IAM_PREFIX: Record<string, string> = {
  'client-ec2': 'ec2',
  'client-rds': 'rds',
  'client-resource-groups-tagging-api': 'tag',
  'client-s3': 's3',
  'client-secrets-manager': 'secretsmanager',
  'client-iam': 'iam',
  'client-cloudwatch': 'cloudwatch',
  'client-cloudwatch-logs': 'logs',
  'client-pi': 'pi',
  'client-sts': 'sts',
  'client-ssm': 'ssm',
  'client-service-quotas': 'servicequotas',
};

/**
 * SDK operations whose IAM permission is not <prefix>:<Operation> (the service authorization
 * reference's "API operations" table): each needs every action listed.
 */
const IAM_ACTIONS: Record<string, string[]> = {
  's3:ListBuckets': ['s3:ListAllMyBuckets'],
  's3:HeadBucket': ['s3:ListBucket'],
  's3:ListObjectsV2': ['s3:ListBucket'],
  's3:HeadObject': ['s3:GetObject'],
  's3:ListObjectVersions': ['s3:ListBucketVersions'],
  // With a VersionId (removeBucket passes each version's) a delete is s3:DeleteObjectVersion.
  's3:DeleteObjects': ['s3:DeleteObject', 's3:DeleteObjectVersion'],
};

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Every action called, with the files that call it; unknown client packages by name. */
function actionsCalled(files: string[]): { actions: Map<string, string[]>; unknownPackages: string[] } {
  const actions = new Map<string, string[]>();
  const unknown = new Set<string>();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const importedFrom = new Map<string, string>();
    for (const m of text.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'@aws-sdk\/(client-[a-z0-9-]+)'/g)) {
      for (const spec of m[1].split(',')) {
        const name = spec.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop()!.trim();
        if (name) importedFrom.set(name, m[2]);
      }
    }
    for (const m of text.matchAll(/new\s+([A-Za-z0-9]+)Command\s*\(/g)) {
      const pkg = importedFrom.get(`${m[1]}Command`);
      if (!pkg) continue; // not an SDK command of this file's imports
      const prefix = IAM_PREFIX[pkg];
      if (!prefix) {
        unknown.add(`@aws-sdk/${pkg} (${path.relative(root, file)})`);
        continue;
      }
      for (const action of IAM_ACTIONS[`${prefix}:${m[1]}`] ?? [`${prefix}:${m[1]}`]) {
        actions.set(action, [...new Set([...(actions.get(action) ?? []), path.relative(root, file)])]);
      }
    }
  }
  return { actions, unknownPackages: [...unknown].sort() };
}

interface Statement {
  Effect: string;
  Action: string | string[];
}

function granted(policy: { Statement: Statement[] }): RegExp[] {
  return policy.Statement.filter((s) => s.Effect === 'Allow')
    .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]))
    .map((a) => new RegExp(`^${a.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'i'));
}

interface Policy {
  Version: string;
  Statement: Statement[];
}

function readPolicies(): Policy[] {
  return POLICIES.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as Policy);
}

function grantedByAll(policies: Policy[]): RegExp[] {
  return policies.flatMap((p) => granted(p));
}

test('each IAM policy is valid JSON, version 2012-10-17, and under the managed-policy size limit', () => {
  assert.ok(POLICIES.length >= 1, 'docs/aws-iam-policy-*.json: no policy found');
  for (const file of POLICIES) {
    const policy = JSON.parse(fs.readFileSync(file, 'utf8')) as Policy;
    assert.equal(policy.Version, '2012-10-17', path.relative(root, file));
    assert.ok(policy.Statement.length > 0, `${path.relative(root, file)} has no statement`);
    // IAM counts the policy without whitespace: JSON.stringify without indentation is that (no value holds a space).
    const size = JSON.stringify(policy).length;
    assert.ok(size <= MANAGED_POLICY_MAX_CHARS, `${path.relative(root, file)} is ${size} characters without whitespace; IAM refuses a managed policy over ${MANAGED_POLICY_MAX_CHARS}: split it`);
  }
  const sids = readPolicies().flatMap((p) => p.Statement.map((s) => (s as Statement & { Sid?: string }).Sid));
  assert.deepEqual(sids.filter((s, i) => sids.indexOf(s) !== i), [], 'Sids repeat across the policies (docs/aws-iam-policy.md explains each by its Sid)');
});

test('the IAM policies grant every action lib/targets/aws calls, and every client package is known', () => {
  const { actions, unknownPackages } = actionsCalled(sources(path.join(root, 'lib', 'targets', 'aws')));
  assert.deepEqual(unknownPackages, [], 'SDK client packages with no IAM prefix in this test\'s map: add each with its prefix (and its actions to docs/aws-iam-policy-*.json)');
  assert.ok(actions.has('ec2:RunInstances') && actions.has('rds:CreateDBInstance') && actions.has('tag:GetResources'), `the scan finds the rig's calls: ${[...actions.keys()].join(', ')}`);
  const allow = grantedByAll(readPolicies());
  const missing = [...actions].filter(([a]) => !allow.some((g) => g.test(a))).map(([a, files]) => `${a} (${files.join(', ')})`);
  assert.deepEqual(missing, [], 'actions the rig calls that no docs/aws-iam-policy-*.json grants: add each (see docs/aws-iam-policy.md)');
});

test('the scan names an action the policy lacks, and a client package it does not know', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-iam-scan-'));
  try {
    const file = path.join(dir, 'x.ts');
    fs.writeFileSync(
      file,
      [
        "import { PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';\nimport { HeadBucketCommand } from '@aws-sdk/client-s3';",
        "import { FooCommand as Bar } from '@aws-sdk/client-unheard-of';",
        'await c.send(new PutMetricDataCommand({}));',
        'await c.send(new HeadBucketCommand({}));',
        'await c.send(new Bar({}));',
        'await c.send(new FooCommand({}));',
      ].join('\n'),
    );
    const { actions, unknownPackages } = actionsCalled([file]);
    // HeadBucket is authorized as s3:ListBucket, not as an action named after the operation.
    assert.deepEqual([...actions.keys()], ['cloudwatch:PutMetricData', 's3:ListBucket']);
    assert.ok(!grantedByAll(readPolicies()).some((g) => g.test('cloudwatch:PutMetricData')), 'not granted: the coverage test would name it');
    // `new Bar(` is not matched by `new <Name>Command(`: an aliased import is not counted; FooCommand is not imported.
    assert.deepEqual(unknownPackages, []);
    fs.writeFileSync(file, "import { FooCommand } from '@aws-sdk/client-unheard-of';\nnew FooCommand({});\n");
    assert.deepEqual(actionsCalled([file]).unknownPackages, [`@aws-sdk/client-unheard-of (${path.relative(root, file)})`]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the calls the scan cannot see are granted: Service Quotas (service-quotas.ts loads its client on first use) and the preflight\'s GetRole on RDS\'s service-linked role', () => {
  const allow = grantedByAll(readPolicies());
  for (const action of ['servicequotas:GetServiceQuota', 'servicequotas:GetAWSDefaultServiceQuota']) assert.ok(allow.some((g) => g.test(action)), `${action} is not granted`);
  const text = fs.readFileSync(path.join(DOCS, 'aws-iam-policy-bootstrap.json'), 'utf8');
  assert.match(text, /"iam:GetRole",\s*"Resource": "arn:aws:iam::\*:role\/aws-service-role\/rds\.amazonaws\.com\/AWSServiceRoleForRDS"/);
});

// docs/aws-iam-policy.json grants every AWS action the rig calls: each `new <Name>Command(` in
// lib/targets/aws/**/*.ts whose <Name>Command is imported from '@aws-sdk/client-<service>' is the
// action <prefix>:<Name>, and an Allow statement must name it (or a wildcard that covers it). A new
// call, or a new client package, that the policy does not cover fails here naming it: the policy is
// what a first real AWS run is given, and AccessDenied mid-teardown is the failure it prevents.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const POLICY = path.join(root, 'docs', 'aws-iam-policy.json');

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
      const action = `${prefix}:${m[1]}`;
      actions.set(action, [...new Set([...(actions.get(action) ?? []), path.relative(root, file)])]);
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

test('the IAM policy grants every action lib/targets/aws calls, and every client package is known', () => {
  const policy = JSON.parse(fs.readFileSync(POLICY, 'utf8')) as { Version: string; Statement: Statement[] };
  assert.equal(policy.Version, '2012-10-17');
  const { actions, unknownPackages } = actionsCalled(sources(path.join(root, 'lib', 'targets', 'aws')));
  assert.deepEqual(unknownPackages, [], 'SDK client packages with no IAM prefix in this test\'s map: add each with its prefix (and its actions to docs/aws-iam-policy.json)');
  assert.ok(actions.has('ec2:RunInstances') && actions.has('rds:CreateDBInstance') && actions.has('tag:GetResources'), `the scan finds the rig's calls: ${[...actions.keys()].join(', ')}`);
  const allow = granted(policy);
  const missing = [...actions].filter(([a]) => !allow.some((g) => g.test(a))).map(([a, files]) => `${a} (${files.join(', ')})`);
  assert.deepEqual(missing, [], 'actions the rig calls that docs/aws-iam-policy.json does not grant: add each (see docs/aws-iam-policy.md)');
});

test('the scan names an action the policy lacks, and a client package it does not know', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-iam-scan-'));
  try {
    const file = path.join(dir, 'x.ts');
    fs.writeFileSync(
      file,
      [
        "import { GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';",
        "import { FooCommand as Bar } from '@aws-sdk/client-unheard-of';",
        'await c.send(new GetMetricDataCommand({}));',
        'await c.send(new Bar({}));',
        'await c.send(new FooCommand({}));',
      ].join('\n'),
    );
    const { actions, unknownPackages } = actionsCalled([file]);
    assert.deepEqual([...actions.keys()], ['cloudwatch:GetMetricData']);
    assert.ok(!granted(JSON.parse(fs.readFileSync(POLICY, 'utf8')) as { Statement: Statement[] }).some((g) => g.test('cloudwatch:GetMetricData')), 'not granted today: the first test would name it');
    // `new Bar(` is not matched by `new <Name>Command(`: an aliased import is not counted; FooCommand is not imported.
    assert.deepEqual(unknownPackages, []);
    fs.writeFileSync(file, "import { FooCommand } from '@aws-sdk/client-unheard-of';\nnew FooCommand({});\n");
    assert.deepEqual(actionsCalled([file]).unknownPackages, [`@aws-sdk/client-unheard-of (${path.relative(root, file)})`]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

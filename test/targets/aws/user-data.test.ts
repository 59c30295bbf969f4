// The nodes' user data (lib/targets/aws/user-data.ts) and the script it pipes the Temporal secret
// through (scripts/node-temporal-env.cjs), without AWS: the rendered bash parses (`bash -n`), names
// the node's queue, installs pgbench only on the load node, and holds no secret: a sentinel API key,
// certificate and address in this process's TEMPORAL_* settings never reach the text. The script
// writes the worker's environment file and certificate files 0600, and refuses a value that is not
// the secret's JSON.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { containerName, dockerPlatform, dockerRunArgs, envFileText, platformRefusal } from '../../../lib/targets/aws/app-container';
import { nodeUserDataInput } from '../../../lib/targets/aws/bootstrap';
import { temporalSecretValue } from '../../../lib/targets/aws/temporal-secret';
import { renderUserData, shq, USER_DATA_MAX_BYTES } from '../../../lib/targets/aws/user-data';
import { awsAppQueue, awsDataQueue, hostOfQueue } from '../../../lib/temporal/queues';
import { sampleBootstrap } from '../../harness/node-bootstrap';

const root = path.resolve(__dirname, '..', '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-user-data-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const SENTINEL = 'SENTINEL-SECRET-7f3a9c';
const CAMPAIGN = "ud-1 it's $(not run)";
const boot = sampleBootstrap(CAMPAIGN, 'ud-1', 'a');

test('the campaign queues are derived from the campaign alone and never read as a host\'s', () => {
  assert.equal(awsDataQueue(CAMPAIGN), awsDataQueue(CAMPAIGN));
  assert.match(awsDataQueue(CAMPAIGN), /^rig-aws-data-ud-1-it-s-not-run-[0-9a-f]{8}$/);
  assert.match(awsAppQueue(CAMPAIGN), /^rig-aws-app-ud-1-it-s-not-run-[0-9a-f]{8}$/);
  assert.notEqual(awsDataQueue('ud-1'), awsDataQueue('ud 1'), 'two ids with one slug get two queues');
  assert.equal(hostOfQueue(awsDataQueue(CAMPAIGN)), undefined);
  assert.equal(hostOfQueue(awsAppQueue(CAMPAIGN)), undefined);
  assert.equal(hostOfQueue('rig-data-aws-box'), 'aws-box', 'a host named aws-box keeps its own data queue');
});

test('renders for both nodes: bash -n passes, the queue is in it, pgbench only on the load node, no secret from the environment', () => {
  const certFile = path.join(tmp, 'client.crt');
  const keyFile = path.join(tmp, 'client.key');
  fs.writeFileSync(certFile, `-----BEGIN CERTIFICATE-----\n${SENTINEL}-cert\n-----END CERTIFICATE-----\n`);
  fs.writeFileSync(keyFile, `-----BEGIN PRIVATE KEY-----\n${SENTINEL}-key\n-----END PRIVATE KEY-----\n`);
  const env = {
    TEMPORAL_ADDRESS: `${SENTINEL}.tmprl.cloud:7233`,
    TEMPORAL_NAMESPACE: `${SENTINEL}-ns`,
    TEMPORAL_API_KEY: SENTINEL,
    TEMPORAL_TLS_CLIENT_CERT_PATH: certFile,
    TEMPORAL_TLS_CLIENT_KEY_PATH: keyFile,
  };
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    // What provisioning stores in the secret does hold them (so the test's sentinel is a real one)...
    assert.match(JSON.stringify(temporalSecretValue()), new RegExp(`${SENTINEL}-key`));
    for (const node of ['load', 'app'] as const) {
      const text = renderUserData(nodeUserDataInput(CAMPAIGN, 'us-east-1', node, boot, { lifetimeMinutes: 120 }));
      // ...and the user data holds none of them.
      assert.doesNotMatch(text, new RegExp(SENTINEL), `${node}: no TEMPORAL_* value of this process`);
      assert.doesNotMatch(text, /BEGIN (CERTIFICATE|PRIVATE KEY)/);
      const file = path.join(tmp, `${node}.sh`);
      fs.writeFileSync(file, text);
      const syntax = spawnSync('bash', ['-n', file], { encoding: 'utf8' });
      assert.equal(syntax.status, 0, `bash -n ${node}: ${syntax.stderr}`);
      assert.ok(text.startsWith('#!/bin/bash\n'));
      assert.match(text, /^set -euo pipefail$/m);
      assert.match(text, /^exec > >\(tee -a \/var\/log\/rig-bootstrap\.log \/dev\/console >\/dev\/null\) 2>&1$/m);
      const queue = node === 'load' ? boot.dataQueue : boot.appQueue;
      assert.match(text, new RegExp(`^ExecStart=/usr/bin/node-22 /opt/rig/app/bin/rig\\.cjs worker --task-queue ${queue}$`, 'm'));
      assert.match(text, /^Restart=on-failure$/m);
      // Which node it is and where its evidence goes (lib/targets/aws/evidence-sync.ts).
      assert.match(text, new RegExp(`^Environment=RIG_AWS_NODE=${node}$`, 'm'));
      assert.match(text, new RegExp(`^Environment=RIG_AWS_ARTIFACTS_BUCKET=${boot.bucket}$`, 'm'));
      assert.match(text, /^retry "dnf install" dnf install -y nodejs22 nodejs22-npm/m);
      assert.doesNotMatch(text, /nodejs20|node-20|npm-20/, 'Node 20 reached end of life in April 2026: the nodes run Node 22');
      assert.match(text, /npm-22 ci --omit=dev --ignore-scripts/);
      assert.match(text, new RegExp(`^SECRET_ID=${shq(boot.temporalSecretArn).replace(/[/.]/g, '\\$&')}$`, 'm'));
      assert.match(text, /^secret=\$\(retry "reading secret \$SECRET_ID" aws secretsmanager get-secret-value .*\)\nprintf '%s' "\$secret" \\\n\s+\| node-22 "\$APP\/scripts\/node-temporal-env\.cjs"/m);
      if (node === 'load') assert.match(text, /postgresql16-contrib/);
      else assert.doesNotMatch(text, /pgbench|postgresql16/);
      assert.ok(Buffer.byteLength(text) < USER_DATA_MAX_BYTES);
    }
  } finally {
    for (const k of Object.keys(env)) delete process.env[k];
    Object.assign(process.env, saved);
  }
});

test('a value a systemd unit line cannot carry is refused, naming the field', () => {
  assert.throws(() => renderUserData({ ...nodeUserDataInput('c', 'us-east-1', 'load', boot, { lifetimeMinutes: 120 }), queue: 'rig aws\nExecStart=/bin/sh' }), /user data: queue .* has characters/);
  assert.throws(() => renderUserData({ ...nodeUserDataInput('c', 'us-east-1', 'load', boot, { lifetimeMinutes: 120 }), packageSha256: 'x' }), /packageSha256 must be 64 hex/);
});

test('node-temporal-env.cjs writes the worker env file and the key files 0600, and refuses what is not the secret', () => {
  const dir = path.join(tmp, 'etc-rig');
  const value = { address: 'temporal.example:7233', namespace: 'ns "q"', apiKey: SENTINEL, tls: true, clientCert: 'CERT', clientKey: 'KEY' };
  const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'node-temporal-env.cjs'), dir], { input: JSON.stringify(value), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout + r.stderr, new RegExp(SENTINEL), 'prints file names only');
  const env = fs.readFileSync(path.join(dir, 'worker.env'), 'utf8');
  assert.equal(
    env,
    [
      'TEMPORAL_ADDRESS="temporal.example:7233"',
      'TEMPORAL_NAMESPACE="ns \\"q\\""',
      `TEMPORAL_API_KEY="${SENTINEL}"`,
      'TEMPORAL_TLS="true"',
      `TEMPORAL_TLS_CLIENT_CERT_PATH="${dir}/temporal-client.crt"`,
      `TEMPORAL_TLS_CLIENT_KEY_PATH="${dir}/temporal-client.key"`,
      '',
    ].join('\n'),
  );
  for (const f of ['worker.env', 'temporal-client.crt', 'temporal-client.key']) assert.equal(fs.statSync(path.join(dir, f)).mode & 0o777, 0o600, f);
  assert.equal(fs.readFileSync(path.join(dir, 'temporal-client.key'), 'utf8'), 'KEY');
  const bad = spawnSync(process.execPath, [path.join(root, 'scripts', 'node-temporal-env.cjs'), dir], { input: 'not json', encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /standard input is not the secret's JSON/);
});

test('an image to measure (issue 14): Docker on the app node only, and the container\'s run line carries no secret', () => {
  const withDocker = renderUserData(nodeUserDataInput(CAMPAIGN, 'us-east-1', 'app', boot, { docker: true, lifetimeMinutes: 120 }));
  assert.match(withDocker, /retry "dnf install docker" dnf install -y docker\nsystemctl enable --now docker\nusermod -aG docker rig\n/);
  assert.equal(spawnSync('bash', ['-n'], { input: withDocker }).status, 0, 'parses');
  assert.doesNotMatch(renderUserData(nodeUserDataInput(CAMPAIGN, 'us-east-1', 'app', boot, { lifetimeMinutes: 120 })), /docker/, 'the reference service needs none');
  assert.doesNotMatch(renderUserData(nodeUserDataInput(CAMPAIGN, 'us-east-1', 'load', boot, { docker: true, lifetimeMinutes: 120 })), /docker/, 'never on the load node');
  assert.deepEqual(dockerRunArgs({ name: 'rig-service-c1', image: 'ghcr.io/me/hc:1', envFile: '/x/service.env', servicePort: 8080 }), ['run', '--detach', '--name', 'rig-service-c1', '--restart', 'no', '--env-file', '/x/service.env', '--network', 'host', 'ghcr.io/me/hc:1']);
  assert.deepEqual(dockerRunArgs({ name: 'n', image: 'i', envFile: 'f', servicePort: 8080, imagePort: 3000 }).slice(-3), ['--publish', '8080:3000', 'i'], 'a fixed port of the image is published on the service port');
  assert.equal(envFileText({ DATABASE_URL: 'postgres://a:b@h/d', PORT: '8080' }), 'DATABASE_URL=postgres://a:b@h/d\nPORT=8080\n');
  assert.throws(() => envFileText({ A: 'x\ny' }), /service\.env\.A: a value with a line break/);
  assert.equal(containerName('nightly/1'), 'rig-service-nightly-1');
});

test('an image without a build for the app node\'s platform is refused naming the platform, before it runs', () => {
  assert.equal(dockerPlatform('arm64'), 'linux/arm64');
  assert.equal(dockerPlatform('x64'), 'linux/amd64');
  // What Docker says when the image's index has no arm64 entry, and when a single-platform image is another.
  const noManifest = platformRefusal('ghcr.io/me/hc:1', 'linux/arm64', { pullError: 'docker pull: no matching manifest for linux/arm64/v8 in the manifest list entries' });
  assert.match(noManifest?.message ?? '', /^service\.run\.image: ghcr\.io\/me\/hc:1 has no linux\/arm64 build, and the app node is linux\/arm64: build and push it for linux\/arm64 .*or set aws\.app\.instanceType/);
  assert.equal(noManifest?.name, 'ServiceRefusal');
  assert.match(platformRefusal('i', 'linux/arm64', { pulled: 'linux/amd64' })?.message ?? '', /has no linux\/arm64 build \(it is linux\/amd64\)/);
  assert.equal(platformRefusal('i', 'linux/arm64', { pulled: 'linux/arm64' }), undefined);
  assert.equal(platformRefusal('i', 'linux/arm64', { pullError: 'unauthorized: authentication required' }), undefined, 'another pull failure stays as it is');
});

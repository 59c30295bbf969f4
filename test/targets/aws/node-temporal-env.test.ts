// test-mode: unit
// The nodes' workers send the control host's gRPC headers (issue 24): a header in the control host's
// connection (TEMPORAL_GRPC_META_*, or a profile's grpc_meta) goes into the campaign's Temporal secret,
// and scripts/node-temporal-env.cjs writes it on the node as a temporal.toml profile, which the node's
// worker reads back through envconfig with each header's exact name (an environment variable would
// not do: envconfig turns only the first underscore of a TEMPORAL_GRPC_META_ name into a hyphen).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { temporalSecretValue } from '../../../lib/targets/aws/temporal-secret';
import { temporalEnv } from '../../../lib/temporal/connection-env';
import { projectRoot } from '../../../lib/tools/paths';

/** A systemd EnvironmentFile as systemd reads the lines node-temporal-env.cjs writes (KEY="v", \ escapes). */
function readEnvFile(file: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const l of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const m = /^([A-Z_]+)="((?:[^"\\]|\\.)*)"$/.exec(l);
    assert.ok(m, `a line systemd reads: ${l}`);
    env[m[1]] = m[2].replace(/\\(.)/g, '$1');
  }
  return env;
}

test('gRPC headers reach the node\'s worker by their exact names, through the secret and a temporal.toml profile', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-node-env-'));
  try {
    // The control host's profile names the headers; the secret carries them as they are.
    const profile = path.join(dir, 'control.toml');
    fs.writeFileSync(profile, '[profile.default]\naddress = "temporal.example:7233"\nnamespace = "perf"\n[profile.default.grpc_meta]\n"x-tenant-id" = "acme"\n"x-quote" = "a\\"b\\\\c"\n');
    const value = temporalSecretValue({ TEMPORAL_CONFIG_FILE: profile });
    assert.deepEqual(value.grpcMeta, { 'x-tenant-id': 'acme', 'x-quote': 'a"b\\c' });

    const nodeDir = path.join(dir, 'etc-rig');
    const r = spawnSync(process.execPath, [path.join(projectRoot, 'scripts', 'node-temporal-env.cjs'), nodeDir], { input: JSON.stringify(value), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /acme/, 'prints file names only');
    assert.equal(fs.statSync(path.join(nodeDir, 'temporal.toml')).mode & 0o777, 0o600);

    const nodeEnv = readEnvFile(path.join(nodeDir, 'worker.env'));
    assert.equal(nodeEnv.TEMPORAL_CONFIG_FILE, path.join(nodeDir, 'temporal.toml'));
    const onNode = temporalEnv(nodeEnv);
    assert.equal(onNode.address, 'temporal.example:7233');
    assert.equal(onNode.namespace, 'perf');
    assert.deepEqual(onNode.metadata, { 'x-tenant-id': 'acme', 'x-quote': 'a"b\\c' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('no headers, no profile file; a header with a line break is refused', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-node-env-'));
  try {
    const run = (value: object) => spawnSync(process.execPath, [path.join(projectRoot, 'scripts', 'node-temporal-env.cjs'), dir], { input: JSON.stringify(value), encoding: 'utf8' });
    assert.equal(run({ address: 'a:7233', namespace: 'n', tls: false }).status, 0);
    assert.ok(!fs.existsSync(path.join(dir, 'temporal.toml')));
    const bad = run({ address: 'a:7233', namespace: 'n', tls: false, grpcMeta: { 'x-a': 'one\nExecStart=/bin/sh' } });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /control character/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

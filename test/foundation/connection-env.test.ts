// test-mode: unit
// The connection settings, read the way the `temporal` CLI reads them (lib/temporal/connection-env.ts
// over @temporalio/envconfig), without a server: variables over the profile over the rig's defaults;
// TEMPORAL_TLS=1, the _DATA variables, gRPC headers, an API key implying TLS; and what the rig refuses
// on top (a config file or profile that names nothing, a certificate without its key, host
// verification turned off). `rig doctor`'s description never holds a secret.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DEFAULT_TEMPORAL_ADDRESS, loadConnection, temporalEnv } from '../../lib/temporal/connection-env';
import { describeConnection } from '../../lib/temporal/connection-sources';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-connenv-'));
const toml = path.join(dir, 'temporal.toml');
fs.writeFileSync(
  toml,
  `[profile.default]
address = "file-default:7233"
namespace = "file-ns"

[profile.cloud]
address = "ns.acct.tmprl.cloud:7233"
namespace = "ns.acct"
api_key = "file-api-key-secret"
[profile.cloud.grpc_meta]
x-team = "bench"

[profile.nohost]
address = "x:7233"
[profile.nohost.tls]
disable_host_verification = true
`,
);
const KEY_DATA = '-----BEGIN PRIVATE KEY-----\nsecret-key-material\n-----END PRIVATE KEY-----\n';

test('nothing set: the rig\'s defaults, plain (no file at the default location)', () => {
  const env = temporalEnv({ HOME: dir });
  assert.deepEqual(env, { address: DEFAULT_TEMPORAL_ADDRESS, namespace: 'default' });
});

test('the default location is $XDG_CONFIG_HOME/temporalio/temporal.toml, as the CLI\'s', () => {
  const xdg = path.join(dir, 'xdg');
  fs.mkdirSync(path.join(xdg, 'temporalio'), { recursive: true });
  fs.copyFileSync(toml, path.join(xdg, 'temporalio', 'temporal.toml'));
  const c = loadConnection({ HOME: dir, XDG_CONFIG_HOME: xdg });
  assert.equal(c.env.address, 'file-default:7233');
  assert.deepEqual(c.configFile, { path: path.join(xdg, 'temporalio', 'temporal.toml'), from: 'default location', found: true });
});

test('a variable wins over the profile, field by field; an empty variable counts as unset', () => {
  const env = temporalEnv({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_NAMESPACE: 'from-env', TEMPORAL_ADDRESS: '' });
  assert.equal(env.address, 'file-default:7233');
  assert.equal(env.namespace, 'from-env');
});

test('TEMPORAL_PROFILE picks a profile; its API key implies TLS with the system store; grpc_meta and TEMPORAL_GRPC_META_* are headers', () => {
  const env = temporalEnv({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'cloud', TEMPORAL_GRPC_META_X_RUN: 'r1' });
  assert.equal(env.address, 'ns.acct.tmprl.cloud:7233');
  assert.equal(env.apiKey, 'file-api-key-secret');
  assert.equal(env.tls, true);
  assert.deepEqual(env.metadata, { 'x-team': 'bench', 'x-run': 'r1' });
  assert.equal(temporalEnv({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'cloud', TEMPORAL_TLS: 'false' }).tls, false, 'TEMPORAL_TLS=false turns it off');
});

test('TEMPORAL_TLS=1 alone is TLS; the _DATA variables carry certificates inline', () => {
  assert.deepEqual(temporalEnv({ HOME: dir, TEMPORAL_TLS: '1' }).tls, { serverNameOverride: undefined, serverRootCACertificate: undefined, clientCertPair: undefined });
  const env = temporalEnv({ HOME: dir, TEMPORAL_TLS_CLIENT_CERT_DATA: 'CERT', TEMPORAL_TLS_CLIENT_KEY_DATA: KEY_DATA, TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'CA', TEMPORAL_TLS_SERVER_NAME: 'sni' });
  assert.ok(typeof env.tls === 'object');
  assert.equal(Buffer.from(env.tls.clientCertPair!.key).toString(), KEY_DATA);
  assert.equal(Buffer.from(env.tls.serverRootCACertificate!).toString(), 'CA');
  assert.equal(env.tls.serverNameOverride, 'sni');
});

test('refused, each naming the fix: a missing config file, an unknown profile, a certificate without its key, host verification off', () => {
  assert.throws(() => temporalEnv({ HOME: dir, TEMPORAL_CONFIG_FILE: path.join(dir, 'nope.toml') }), /TEMPORAL_CONFIG_FILE=.*nope\.toml: no such file \(point it at your temporal\.toml, or unset it/);
  assert.throws(() => temporalEnv({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'prod' }), /TEMPORAL_PROFILE=prod: .* has no \[profile\.prod\] \(it has: default, cloud, nohost\)/);
  assert.throws(() => temporalEnv({ HOME: dir, TEMPORAL_PROFILE: 'prod' }), /TEMPORAL_PROFILE=prod: there is no config file at /);
  assert.throws(() => temporalEnv({ HOME: dir, TEMPORAL_TLS_CLIENT_CERT_DATA: 'CERT' }), /mTLS needs both a client certificate and its key, and only the certificate is set: set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH/);
  assert.throws(() => temporalEnv({ HOME: dir, TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' }), /TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: the Temporal TypeScript SDK cannot turn host verification off.*TEMPORAL_TLS_SERVER_NAME/);
  assert.throws(() => temporalEnv({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'nohost' }), /tls\.disable_host_verification in profile 'nohost' of .*temporal\.toml: the Temporal TypeScript SDK cannot/);
  assert.throws(() => temporalEnv({ HOME: dir, TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'missing-ca.pem') }), /a TLS file of the connection cannot be read: .*missing-ca\.pem/);
});

test('doctor\'s description names the sources and never holds a secret', () => {
  const c = loadConnection({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'cloud', TEMPORAL_TLS_CLIENT_CERT_DATA: 'not a pem', TEMPORAL_TLS_CLIENT_KEY_DATA: KEY_DATA });
  const lines = describeConnection(c);
  const byName = Object.fromEntries(lines.map((l) => [l.setting, l]));
  assert.equal(byName.address.from, `profile 'cloud' in ${toml}`);
  assert.equal(byName.profile.from, 'env TEMPORAL_PROFILE');
  assert.equal(byName['API key'].value, 'set (****, 19 characters)');
  assert.equal(byName['API key'].from, `profile 'cloud' in ${toml}`);
  assert.equal(byName['client key'].value, 'inline data (client_key_data) ****');
  assert.equal(byName['client key'].from, 'env TEMPORAL_TLS_CLIENT_KEY_DATA');
  assert.match(byName['client cert'].value, /^inline data \(client_cert_data\) \(not a readable certificate/);
  assert.equal(byName['server CA'].value, "the system's trust store");
  assert.equal(byName['gRPC header x-team'].value, 'set (****, 5 characters)');
  const text = JSON.stringify(lines);
  assert.doesNotMatch(text, /file-api-key-secret|secret-key-material|bench/);
});

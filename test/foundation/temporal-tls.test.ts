// The rig's connection through a real TLS endpoint (issue 24, part 1): a dev server behind Debian's
// nginx terminating TLS and requiring a client certificate (test/harness/tls-proxy.ts), reached the
// way the `temporal` CLI would reach it, from a temporal.toml profile:
// - the client and the worker's native connection connect through the profile's mTLS settings and
//   describe the namespace; `rig doctor` says so, naming each setting's source, secrets masked;
// - TEMPORAL_PROFILE picks the profile (the default one is the plain dev server);
// - a wrong CA, a missing client certificate and a server name the certificate does not hold are
//   refused by client and worker alike, each with an error that says what is wrong and which
//   setting fixes it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectClient } from '../../client/connect';
import { loadConnection, temporalEnv } from '../../lib/temporal/connection-env';
import { connectNative } from '../../worker/run-worker';
import { rig } from '../harness/rig-cli';
import { localDevEnv } from '../harness/temporal';
import { nginxPath, startTlsProxy, type TlsProxy } from '../harness/tls-proxy';
import { skipUnless } from '../harness/needs-tool';

let dev: TestWorkflowEnvironment;
let proxy: TlsProxy;
let toml: string;
const API_KEY = 'rig-test-api-key-never-printed';
const HEADER = 'rig-test-header-never-printed';

// Without nginx the tests are skipped, naming the command (CI, with RIG_REQUIRE_TOOLS=1, fails instead).
const skip = skipUnless(nginxPath(), "Debian's nginx (or RIG_NGINX)", 'npm run setup:tls-proxy');

before(async () => {
  if (skip) return;
  dev = await localDevEnv();
  proxy = await startTlsProxy(dev.address);
  toml = path.join(proxy.dir, 'temporal.toml');
  fs.writeFileSync(
    toml,
    `[profile.default]
address = "${dev.address}"

[profile.mtls]
address = "${proxy.address}"
namespace = "default"
[profile.mtls.tls]
server_ca_cert_path = "${proxy.ca}"
client_cert_path = "${proxy.clientCert}"
client_key_path = "${proxy.clientKey}"

[profile.wrong-ca]
address = "${proxy.address}"
[profile.wrong-ca.tls]
server_ca_cert_path = "${proxy.wrongCa}"
client_cert_path = "${proxy.clientCert}"
client_key_path = "${proxy.clientKey}"

[profile.no-cert]
address = "${proxy.address}"
[profile.no-cert.tls]
server_ca_cert_path = "${proxy.ca}"
`,
  );
});
after(async () => {
  await proxy?.stop();
  await dev?.teardown();
});

/** The environment of a shell that has only the config file and a profile (nothing inherited from this one). */
const shell = (profile?: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  HOME: proxy.dir,
  TEMPORAL_CONFIG_FILE: toml,
  ...(profile ? { TEMPORAL_PROFILE: profile } : {}),
  ...extra,
});

test('client and worker connect through the profile\'s mTLS and describe the namespace', { skip, timeout: 120_000 }, async () => {
  const env = temporalEnv(shell('mtls'));
  assert.equal(env.address, proxy.address);
  const rc = await connectClient(env);
  try {
    const ns = await rc.client.connection.workflowService.describeNamespace({ namespace: 'default' });
    assert.equal(ns.namespaceInfo?.name, 'default');
    const list = rc.client.workflow.list({ pageSize: 1 });
    for await (const _ of list) break; // a visibility call through the proxy answers
  } finally {
    await rc.close();
  }
  const native = await connectNative(env);
  try {
    const ns = await native.workflowService.describeNamespace({ namespace: 'default' });
    assert.equal(ns.namespaceInfo?.name, 'default');
  } finally {
    await native.close();
  }
});

test('TEMPORAL_PROFILE picks the profile: without it the default profile (the plain dev server) is used', { skip, timeout: 120_000 }, async () => {
  const plain = loadConnection(shell());
  assert.equal(plain.profileName, 'default');
  assert.equal(plain.env.address, dev.address);
  assert.equal(plain.env.tls, undefined, 'the default profile has no TLS');
  const picked = loadConnection(shell('mtls'));
  assert.equal(picked.env.address, proxy.address);
  assert.ok(typeof picked.env.tls === 'object' && picked.env.tls.clientCertPair, 'mTLS from the profile');
  // Both work, each where its profile says.
  for (const env of [plain.env, picked.env]) {
    const rc = await connectClient(env);
    await rc.client.connection.workflowService.getSystemInfo({});
    await rc.close();
  }
  assert.throws(() => loadConnection(shell('staging')), /^ConnectionSettingsError: TEMPORAL_PROFILE=staging: .*temporal\.toml has no \[profile\.staging\] \(it has: default, mtls, wrong-ca, no-cert\); set TEMPORAL_PROFILE/);
});

test('a wrong CA is refused by client and worker, naming the CA and the setting', { skip, timeout: 120_000 }, async () => {
  const env = temporalEnv(shell('wrong-ca', { RIG_TEMPORAL_CONNECT_TIMEOUT_MS: '8000' }));
  const wrongCa = /cannot reach Temporal at 127\.0\.0\.1:\d+ over TLS: the server's certificate \(CN=localhost, issued by CN=rig-test-ca\) is not signed by the CA the rig was given \(CN=rig-wrong-ca\): set TEMPORAL_TLS_SERVER_CA_CERT_PATH/;
  await assert.rejects(connectClient(env), wrongCa);
  await assert.rejects(connectNative(env), wrongCa);
});

test('a missing client certificate is refused by client and worker, naming the settings', { skip, timeout: 120_000 }, async () => {
  const env = temporalEnv(shell('no-cert'));
  const noCert = /cannot reach Temporal at 127\.0\.0\.1:\d+ over TLS: the server asks for a client certificate \(mTLS\) and the rig sent none: set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH/;
  await assert.rejects(connectClient(env), noCert);
  await assert.rejects(connectNative(env), noCert);
});

test('a server name the certificate does not hold is refused, naming the names it holds and the setting', { skip, timeout: 120_000 }, async () => {
  const env = temporalEnv(shell('mtls', { TEMPORAL_TLS_SERVER_NAME: 'temporal.example' }));
  const badName = /over TLS: the server's certificate does not hold the name the rig checks \(temporal\.example; it holds DNS:localhost, IP Address:127\.0\.0\.1\): set TEMPORAL_TLS_SERVER_NAME/;
  await assert.rejects(connectClient(env), badName);
  await assert.rejects(connectNative(env), badName);
});

test('rig doctor names each setting\'s source, masks the secrets, and reaches the namespace', { skip, timeout: 120_000 }, async () => {
  const res = await rig(['doctor'], { ...shell('mtls'), TEMPORAL_API_KEY: API_KEY, TEMPORAL_GRPC_META_X_RIG_TEAM: HEADER, TEMPORAL_TLS_SERVER_NAME: 'localhost' });
  assert.equal(res.code, 0, res.stderr);
  const out = res.stdout;
  const profile = `from profile 'mtls' in ${toml}`;
  assert.match(out, new RegExp(`config file +${esc(toml)} +from env TEMPORAL_CONFIG_FILE`));
  assert.match(out, /profile +mtls +from env TEMPORAL_PROFILE/);
  assert.match(out, new RegExp(`address +${esc(proxy.address)} +${esc(profile)}`));
  assert.match(out, new RegExp(`TLS +on, mTLS .* +from env TEMPORAL_TLS_SERVER_NAME`), 'a TLS variable given counts as where TLS came from');
  assert.match(out, new RegExp(`server CA +file ${esc(proxy.ca)}: CN=rig-test-ca, valid to \\S+ +${esc(profile)}`));
  assert.match(out, new RegExp(`client key +file ${esc(proxy.clientKey)} +${esc(profile)}`));
  assert.match(out, /server name +localhost +from env TEMPORAL_TLS_SERVER_NAME/);
  assert.match(out, /API key +set \(\*\*\*\*, 30 characters\) +from env TEMPORAL_API_KEY/);
  assert.match(out, /gRPC header x-rig-team +set \(\*\*\*\*, 29 characters\) +from env TEMPORAL_GRPC_META_X_RIG_TEAM/);
  assert.match(out, /reachable: yes, 127\.0\.0\.1:\d+ \(server [\d.]+\), namespace default \(registered\)/);
  assert.match(out, /^worker version: rig \/ \S+ +from (git|git \(uncommitted changes\)|RIG_BUILD_ID)$/m);
  assert.match(out, /^deployment rig: no current build \(the first rig worker makes its own current\)$/m);
  assert.doesNotMatch(out + res.stderr, new RegExp(`${API_KEY}|${HEADER}|PRIVATE KEY`), 'no secret printed');

  const refused = await rig(['doctor'], shell('no-cert'));
  assert.equal(refused.code, 69, 'TLS refused: could not reach Temporal');
  assert.match(refused.stderr, /reachable: no: .*the rig sent none/);
});

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// test-mode: unit
// What the `temporal` CLI does beyond envconfig (its cliext/client.go), as the rig now does it too
// (lib/temporal/connection-env.ts), without a server (test/foundation/cli-parity.test.ts checks the
// same against the CLI itself): the legacy TEMPORAL_TLS_CERT/KEY/CA (+ _DATA) forced over the
// profile and the TEMPORAL_TLS_* ones; the `${namespace}` address template; gRPC header names with
// every underscore a hyphen; TEMPORAL_TLS read case-blind. And what the rig refuses, saying why: a
// path together with data, a certificate and key of different kinds, TEMPORAL_TLS=yes, an authority.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadConnection, temporalEnv, type TemporalEnv } from '../../lib/temporal/connection-env';
import { describeConnection } from '../../lib/temporal/connection-sources';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-cli-rules-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};
const CERT = file('c.crt', 'cert');
const KEY = file('c.key', 'key');
const CA = file('ca.crt', 'ca');
const HOME = dir;
const tlsOf = (env: TemporalEnv) => env.tls as { clientCertPair?: { crt: Uint8Array; key: Uint8Array }; serverRootCACertificate?: Uint8Array; serverNameOverride?: string };
const text = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString() : undefined);

test('the legacy TLS variables turn TLS on, and win over the TEMPORAL_TLS_* ones and the profile', () => {
  const env = temporalEnv({ HOME, TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_TLS_CERT: CERT, TEMPORAL_TLS_KEY: KEY, TEMPORAL_TLS_CA: CA });
  const tls = tlsOf(env);
  assert.deepEqual([text(tls.clientCertPair?.crt), text(tls.clientCertPair?.key), text(tls.serverRootCACertificate)], ['cert', 'key', 'ca']);
  const over = tlsOf(temporalEnv({ HOME, TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent.crt', TEMPORAL_TLS_CERT: CERT, TEMPORAL_TLS_KEY: KEY }));
  assert.equal(text(over.clientCertPair?.crt), 'cert');
  const data = tlsOf(temporalEnv({ HOME, TEMPORAL_TLS_CERT_DATA: 'cert-data', TEMPORAL_TLS_KEY_DATA: 'key-data', TEMPORAL_TLS_CA_DATA: 'ca-data' }));
  assert.deepEqual([text(data.clientCertPair?.crt), text(data.serverRootCACertificate)], ['cert-data', 'ca-data']);
  // TEMPORAL_TLS=false still turns it off, as in the CLI (the legacy variables only set the files).
  assert.equal(temporalEnv({ HOME, TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA: CA }).tls, false);
  // rig doctor names the legacy variable as the source.
  const lines = describeConnection(loadConnection({ HOME, TEMPORAL_TLS_CERT: CERT, TEMPORAL_TLS_KEY: KEY }));
  assert.equal(lines.find((l) => l.setting === 'client cert')?.from, 'env TEMPORAL_TLS_CERT');
});

test('a TLS file as a path and as data at once, or a certificate and key of different kinds: refused, as the CLI refuses them', () => {
  assert.throws(() => temporalEnv({ HOME, TEMPORAL_TLS_CLIENT_CERT_DATA: 'x', TEMPORAL_TLS_CERT: CERT, TEMPORAL_TLS_KEY: KEY }), /TEMPORAL_TLS_CERT gives the client certificate as a path, and .* gives it as data: the temporal CLI refuses/);
  assert.throws(() => temporalEnv({ HOME, TEMPORAL_TLS_CERT: CERT, TEMPORAL_TLS_KEY_DATA: 'k' }), /client certificate is given as a path and its key as data: the temporal CLI refuses that mix/);
});

test('the address template, gRPC header names, TEMPORAL_TLS in any case', () => {
  assert.equal(temporalEnv({ HOME, TEMPORAL_ADDRESS: '${namespace}.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct' }).address, 'ns.acct.tmprl.cloud:7233');
  assert.equal(temporalEnv({ HOME, TEMPORAL_ADDRESS: '${namespace}.tmprl.cloud:7233' }).address, 'default.tmprl.cloud:7233');
  const toml = file('t.toml', '[profile.default]\naddress = "x:1"\n[profile.default.grpc_meta]\nx_team_id = "bench"\n');
  assert.deepEqual(temporalEnv({ HOME, TEMPORAL_CONFIG_FILE: toml, TEMPORAL_GRPC_META_X_RIG_AUTH_TOKEN: 't' }).metadata, { 'x-team-id': 'bench', 'x-rig-auth-token': 't' });
  // An empty variable removes the profile's header, whatever its underscores.
  assert.equal(temporalEnv({ HOME, TEMPORAL_CONFIG_FILE: toml, TEMPORAL_GRPC_META_X_TEAM_ID: '' }).metadata, undefined);
  assert.equal(temporalEnv({ HOME, TEMPORAL_TLS: 'TRUE' }).tls !== undefined && temporalEnv({ HOME, TEMPORAL_TLS: 'TRUE' }).tls !== false, true);
  assert.throws(() => temporalEnv({ HOME, TEMPORAL_TLS: 'yes' }), /TEMPORAL_TLS=yes: give true or false/);
});

test('an authority (variable or profile) is refused: the workers could not send it', () => {
  assert.throws(() => temporalEnv({ HOME, TEMPORAL_CLIENT_AUTHORITY: 'a.example' }), /TEMPORAL_CLIENT_AUTHORITY: the rig's workers .* cannot set the :authority/);
  const toml = file('a.toml', '[profile.default]\naddress = "x:1"\nauthority = "a.example"\n');
  assert.throws(() => temporalEnv({ HOME, TEMPORAL_CONFIG_FILE: toml }), /authority in profile 'default' of .*a\.toml: the rig's workers/);
});

#!/usr/bin/env node
// Runs on an AWS node at boot (lib/targets/aws/user-data.ts): reads the campaign's Temporal secret
// (JSON, lib/targets/aws/temporal-secret.ts's TemporalSecretValue) on standard input and writes what
// `rig worker` reads (lib/temporal/connection-env.ts): DIR/worker.env, a systemd EnvironmentFile
// (0600, read by systemd as root), and the certificate and key files it names (0600, owned by the
// worker's user). The value comes through a pipe so it is never in argv or the bootstrap log; this
// prints only file names.
//   usage: aws secretsmanager get-secret-value ... | node node-temporal-env.cjs DIR [UID GID]
'use strict';
const fs = require('node:fs');
const path = require('node:path');

function fail(msg) {
  process.stderr.write(`node-temporal-env: ${msg}\n`);
  process.exit(1);
}

const [dir, uidArg, gidArg] = process.argv.slice(2);
if (!dir) fail('usage: node-temporal-env.cjs DIR [UID GID] < secret.json');
const uid = uidArg === undefined ? undefined : Number(uidArg);
const gid = gidArg === undefined ? undefined : Number(gidArg);

let value;
try {
  value = JSON.parse(fs.readFileSync(0, 'utf8'));
} catch (err) {
  fail(`standard input is not the secret's JSON: ${err.message}`);
}
if (!value || typeof value.address !== 'string' || !value.address) fail('the secret has no "address"');
if (typeof value.namespace !== 'string' || !value.namespace) fail('the secret has no "namespace"');

function write(file, text, owned) {
  fs.writeFileSync(file, text, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  if (owned && uid !== undefined && gid !== undefined) fs.chownSync(file, uid, gid);
}

/** One systemd EnvironmentFile line: double-quoted, with \ and " escaped; no newline may hide in it. */
function line(key, v) {
  if (/[\r\n]/.test(v)) fail(`${key} holds a line break`);
  return `${key}="${v.replace(/[\\"]/g, (c) => `\\${c}`)}"\n`;
}

fs.mkdirSync(dir, { recursive: true });
let env = line('TEMPORAL_ADDRESS', value.address) + line('TEMPORAL_NAMESPACE', value.namespace);
if (value.apiKey) env += line('TEMPORAL_API_KEY', value.apiKey);
if (value.tls) env += line('TEMPORAL_TLS', 'true');
const files = [
  ['clientCert', 'temporal-client.crt', 'TEMPORAL_TLS_CLIENT_CERT_PATH'],
  ['clientKey', 'temporal-client.key', 'TEMPORAL_TLS_CLIENT_KEY_PATH'],
  ['serverCa', 'temporal-server-ca.crt', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'],
];
const written = [];
for (const [field, name, key] of files) {
  if (!value[field]) continue;
  const file = path.join(dir, name);
  write(file, value[field], true);
  env += line(key, file);
  written.push(file);
}
if (value.serverName) env += line('TEMPORAL_TLS_SERVER_NAME', value.serverName);
// gRPC headers: a temporal.toml profile keeps each header's exact name (envconfig turns only the
// first underscore of TEMPORAL_GRPC_META_X_TENANT_ID into a hyphen: "x-tenant_id").
if (value.grpcMeta && typeof value.grpcMeta === 'object' && Object.keys(value.grpcMeta).length > 0) {
  const toml = (s) => {
    if (/[\u0000-\u001f\u007f]/.test(s)) fail('a gRPC header name or value holds a control character');
    return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  };
  let profile = '[profile.default.grpc_meta]\n';
  for (const [k, v] of Object.entries(value.grpcMeta)) {
    if (typeof v !== 'string') fail(`gRPC header ${k} is not a string`);
    profile += `${toml(k)} = ${toml(v)}\n`;
  }
  const file = path.join(dir, 'temporal.toml');
  write(file, profile, true);
  env += line('TEMPORAL_CONFIG_FILE', file);
  written.push(file);
}
const envFile = path.join(dir, 'worker.env');
write(envFile, env, false);
process.stdout.write(`node-temporal-env: wrote ${[envFile, ...written].join(', ')}\n`);

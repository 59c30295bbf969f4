// test-mode: unit
// The spec of a campaign on an existing deployment (issue 14 part 2): the example parses, a secret
// written inline is refused naming the field and the fix (a URL with a password anywhere, a field
// named like a secret), and the sources of the URLs are checked on the worker before anything runs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { parseCampaignSpec, SpecError } from '../../lib/protocol/spec';
import { readSecret, secretSourceProblem } from '../../lib/targets/secret-source';

const root = path.resolve(__dirname, '..', '..');
const example = () => JSON.parse(fs.readFileSync(path.join(root, 'examples', 'existing.json'), 'utf8')) as Record<string, unknown> & { existing: Record<string, unknown>; seed: Record<string, unknown> };

function errorsOf(input: unknown): string[] {
  try {
    parseCampaignSpec(input);
  } catch (err) {
    assert.ok(err instanceof SpecError, String(err));
    return err.issues;
  }
  assert.fail('expected a SpecError');
}

test('examples/existing.json parses with target "existing" and holds no secret', () => {
  const spec = parseCampaignSpec(example());
  assert.equal(spec.target, 'existing');
  assert.deepEqual(spec.existing?.databaseUrlFrom, { env: 'RIG_EXISTING_DATABASE_URL' });
  assert.doesNotMatch(JSON.stringify(spec), /password|api_?key|secret|:\/\/[^/@]*:[^/@]*@/i);
});

test('a database URL with an inline password is refused, naming the field and the fix', () => {
  const ex = example();
  const inline = errorsOf({ ...ex, existing: { ...ex.existing, databaseUrl: 'postgres://hardcount_owner:s3cret@10.0.1.5:5432/hardcount' } });
  assert.equal(inline.length, 1, inline.join('\n'));
  assert.match(inline[0], /^existing\.databaseUrl: "databaseUrl" would carry a secret inline: .*"databaseUrlFrom": \{ "env": "NAME" \}.*"databaseUrlFrom": \{ "file": "\/path" \}/);
  assert.doesNotMatch(inline.join('\n'), /s3cret/, 'the refusal never repeats the password');
  // The URL put where a source's name goes.
  const inEnv = errorsOf({ ...ex, existing: { ...ex.existing, databaseUrlFrom: { env: 'postgres://o:pw@h/db' } } });
  assert.match(inEnv[0], /^existing\.databaseUrlFrom\.env: holds a URL with an inline password: .*"databaseUrlFrom": \{ "env": "NAME" \}/);
  // Any URL with a password anywhere, on any target: here the service's.
  assert.match(errorsOf({ ...ex, existing: { ...ex.existing, serviceUrl: 'http://admin:pw@10.0.1.12:8080' } })[0], /^existing\.serviceUrl: holds a URL with an inline password/);
});

test('any inline secret is refused: a password, an API key, a token', () => {
  const ex = example();
  // Each refusal says what the rig does instead, and names only fields that exist (issue 26).
  const apiKey = errorsOf({ ...ex, existing: { ...ex.existing, apiKey: 'hc_live_abc' } })[0];
  assert.match(apiKey, /^existing\.apiKey: "apiKey" would carry a secret inline: .*none is needed: bring-up makes the campaign's own API key/);
  const password = errorsOf({ ...ex, existing: { ...ex.existing, password: 'pw' } })[0];
  assert.match(password, /^existing\.password: "password" would carry a secret inline: .*name that URL with existing\.databaseUrlFrom/);
  assert.match(errorsOf({ ...ex, hardware: { description: 'x', token: 't' } })[0], /^hardware\.token: "token" would carry a secret inline: .*none is needed/);
  const service = errorsOf({ ...ex, existing: { ...ex.existing, serviceUrl: 'http://admin:pw@10.0.1.12:8080' } })[0];
  assert.match(service, /remove "user:password@" from this URL/);
  for (const message of [apiKey, password, service]) {
    for (const named of message.matchAll(/"(\w+From)"|existing\.(\w+From)/g)) assert.ok(['databaseUrlFrom', 'appDatabaseUrlFrom'].includes(named[1] ?? named[2]), `names a field that exists: ${message}`);
  }
});

test('the existing block: what it needs, and seeding only when meant', () => {
  const ex = example();
  const { existing: _e, ...noBlock } = ex;
  assert.deepEqual(errorsOf(noBlock), ['existing: target "existing" needs an "existing" block (serviceUrl, databaseUrlFrom): see examples/existing.json']);
  assert.deepEqual(errorsOf({ ...ex, target: 'local' }), ['existing: an "existing" block is only read with target "existing": remove it, or set target to "existing"']);
  assert.deepEqual(errorsOf({ ...ex, seed: { ...ex.seed, historyRows: 1000 } }), [
    'seed.intoExisting: seeding 1000 history rows writes into a database the rig did not make: set seed.intoExisting to true to mean it, or seed.historyRows to 0',
  ]);
  assert.equal(parseCampaignSpec({ ...ex, seed: { ...ex.seed, historyRows: 1000, intoExisting: true } }).seed.intoExisting, true);
  const { appDatabaseUrlFrom: _a, ...noApp } = ex.existing;
  assert.match(errorsOf({ ...ex, existing: noApp })[0], /^existing\.appDatabaseUrlFrom: the denominator's row-level-security leg connects as the service's app role/);
  assert.match(errorsOf({ ...ex, existing: { ...ex.existing, databaseUrlFrom: { file: 'relative/path' } } })[0], /^existing\.databaseUrlFrom\.file: file must be an absolute path/);
});

test('the URL sources: a missing variable or file is named with the fix; a file must be 0600', () => {
  assert.match(secretSourceProblem('existing.databaseUrlFrom', { env: 'RIG_TEST_NOT_SET_ANYWHERE' }, {}) ?? '', /^existing\.databaseUrlFrom: the environment variable RIG_TEST_NOT_SET_ANYWHERE is not set in the worker's environment/);
  assert.equal(secretSourceProblem('f', { env: 'X' }, { X: 'postgres://o:p@h/d' }), null);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-secret-'));
  const file = path.join(dir, 'url');
  assert.match(secretSourceProblem('existing.databaseUrlFrom', { file }) ?? '', /cannot be read on this host \(ENOENT\)/);
  fs.writeFileSync(file, 'postgres://o:p@h/d\n', { mode: 0o644 });
  fs.chmodSync(file, 0o644);
  assert.match(secretSourceProblem('existing.databaseUrlFrom', { file }) ?? '', /has mode 644: a file holding a password must be 0600/);
  fs.chmodSync(file, 0o600);
  assert.equal(readSecret('existing.databaseUrlFrom', { file }), 'postgres://o:p@h/d');
  fs.rmSync(dir, { recursive: true, force: true });
});

// test-mode: unit
// The JSON Schema (schema/campaign.schema.json, `npm run schema`) as good as the CLI where a schema
// can be: every field described, every example valid under a standard validator (ajv, draft
// 2020-12), and every refused spec of the refusal table (test/foundation/spec-refusal-cases.ts)
// refused by it too, except those a JSON Schema cannot express, which are listed with why (and shown
// to pass the schema, so the list stays true).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Ajv2020 from 'ajv/dist/2020';
import { docKey, FIELD_DOCS } from '../../lib/protocol/spec-docs';
import { campaignJsonSchemaObject, eachField, undocumentedFields } from '../../lib/protocol/spec-schema';
import { rehearsal, REFUSED_SPECS } from '../foundation/spec-refusal-cases';

const root = path.resolve(__dirname, '..', '..');
const onDisk = JSON.parse(fs.readFileSync(path.join(root, 'schema', 'campaign.schema.json'), 'utf8')) as Record<string, unknown>;
// "uri" is zod's format for serviceUrl; ajv-formats is not installed, and the CLI checks the URL itself.
const validate = new Ajv2020({ allErrors: true, strict: false, formats: { uri: true } }).compile(onDisk);
const errorsOf = () => (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');

test('the checked-in schema is the generated one, and every field has a description; no description is left without its field', () => {
  assert.deepEqual(onDisk, campaignJsonSchemaObject(), 'schema/campaign.schema.json is stale: run `npm run schema`');
  assert.deepEqual(undocumentedFields(), [], 'fields without a description: add them to lib/protocol/spec-docs.ts');
  const used = new Set<string>();
  eachField(campaignJsonSchemaObject(), (p) => used.add(docKey(p)));
  assert.deepEqual(Object.keys(FIELD_DOCS).filter((k) => !used.has(k)), [], 'descriptions of fields that no longer exist');
});

test('every example validates', () => {
  const examples = fs.readdirSync(path.join(root, 'examples')).filter((f) => f.endsWith('.json'));
  assert.ok(examples.length >= 5);
  for (const f of examples) {
    const spec = JSON.parse(fs.readFileSync(path.join(root, 'examples', f), 'utf8')) as unknown;
    assert.ok(validate(spec), `examples/${f}: ${errorsOf()}`);
  }
});

test('every refused spec the schema can express is refused by it; the rest are listed with why', () => {
  const cannot: string[] = [];
  for (const c of REFUSED_SPECS) {
    if (c.spec === undefined) {
      // not JSON, no file: nothing to validate
      assert.ok(c.schemaCannot, `${c.what} has no spec and says why`);
      cannot.push(`${c.class} (${c.what}): ${c.schemaCannot}`);
      continue;
    }
    const ok = validate(c.spec);
    if (c.schemaCannot) {
      assert.equal(ok, true, `${c.what} is listed as beyond the schema, but the schema refuses it (${errorsOf()}): drop its schemaCannot`);
      cannot.push(`${c.class} (${c.what}): ${c.schemaCannot}`);
    } else {
      assert.equal(ok, false, `${c.what}: the schema accepts what the CLI refuses`);
    }
  }
  // Said where a reader of the test output sees it: the refusals only the CLI makes.
  console.log(`refusals the JSON Schema cannot express (the CLI makes them):\n${cannot.map((l) => `  - ${l}`).join('\n')}`);
  assert.ok(cannot.length > 0);
});

test('the cross-field rules: one of sustained/ladder, each target its block, a service run of one kind, fresh variants in blocks', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['neither sustained nor ladder', rehearsal((s) => delete (s as Record<string, unknown>).sustained), false],
    ['target existing without its block', rehearsal((s) => (s.target = 'existing')), false],
    ['an existing block on a local campaign', rehearsal((s) => (s.existing = { serviceUrl: 'http://10.0.0.1:8080', databaseUrlFrom: { env: 'X' } })), false],
    ['variants on target aws', { ...(JSON.parse(fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8')) as object), variants: { control: { name: 'a' }, treatments: [{ name: 'b' }] } }, false],
    ['a local block on target aws', { ...(JSON.parse(fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8')) as object), local: { rdsFidelity: true } }, false],
    ['a run with both command and image', rehearsal((s) => (s.service = { run: { command: ['/bin/true'], image: 'x:1' } })), false],
    ['a run with neither', rehearsal((s) => (s.service = { run: { port: 8080 } })), false],
    ['fresh with interleaved variants', rehearsal((s) => (s.variants = { fresh: true, control: { name: 'a' }, treatments: [{ name: 'b' }] })), false],
    ['fresh with blocks', rehearsal((s) => (s.variants = { fresh: true, order: 'blocks', control: { name: 'a' }, treatments: [{ name: 'b' }] })), true],
    ['variants on local', rehearsal((s) => (s.variants = { control: { name: 'a' }, treatments: [{ name: 'b', database: { shared_buffers: '512MB' } }] })), true],
  ];
  for (const [what, spec, valid] of cases) assert.equal(validate(spec), valid, `${what}: ${errorsOf()}`);
});

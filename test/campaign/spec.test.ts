// The campaign spec: defaults, errors that name the field, the checked-in JSON Schema and examples.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseCampaignSpec, PROFILES, SpecError } from '../../lib/protocol/spec';
import { campaignJsonSchema } from '../../lib/protocol/spec-schema';

const root = path.resolve(__dirname, '..', '..');

function errorsOf(input: unknown): string[] {
  try {
    parseCampaignSpec(input);
  } catch (err) {
    assert.ok(err instanceof SpecError);
    return err.issues;
  }
  assert.fail('expected a SpecError');
}

test('the profiles parse, with defaults filled in and no secret anywhere', () => {
  const r = parseCampaignSpec(PROFILES.rehearsal);
  assert.equal(r.end, 'destroy');
  assert.equal(r.sustained?.driftLimit, 1.5);
  assert.equal(r.service.lastUsed, 'per-minute');
  const full = parseCampaignSpec(PROFILES.full);
  assert.equal(full.sustained?.repeats, 5);
  assert.equal(full.sustained?.repeatSeconds, 600);
  assert.equal(full.seed.historyRows, 20_000_000);
  assert.doesNotMatch(JSON.stringify(full), /password|api_?key|secret/i);
});

test('errors name each bad field and what is allowed', () => {
  const base = PROFILES.rehearsal;
  assert.deepEqual(errorsOf({ ...base, seed: undefined }), ['seed: required']);
  assert.match(errorsOf({ ...base, target: 'aws2' })[0], /^target: .*allowed: "local"/);
  assert.match(errorsOf({ ...base, end: 'maybe' })[0], /^end: .*allowed: "destroy", "keep", "keep-on-failure"/);
  const neg = errorsOf({ ...base, sustained: { ...base.sustained!, configurations: [{ name: 'a', eventsPerSecond: -1, batch: 1, p99LimitMs: 1 }] } });
  assert.deepEqual(neg, ['sustained.configurations[0].eventsPerSecond: eventsPerSecond must be > 0']);
  assert.match(errorsOf({ ...base, sustained: { ...base.sustained!, configurations: [{ name: 'a', eventsPerSecond: 1, batch: 5000, p99LimitMs: 1 }] } })[0], /batch must be <= 1000/);
  assert.match(errorsOf({ ...base, colour: 'red' })[0], /unknown field\(s\) "colour"/);
  assert.match(errorsOf({ ...base, ladder: { rates: [100], batch: 10 } })[0], /exactly one of "sustained" .* or "ladder"/);
});

test('the checked-in JSON Schema is the one the zod spec generates (npm run schema)', () => {
  const onDisk = fs.readFileSync(path.join(root, 'schema', 'campaign.schema.json'), 'utf8');
  assert.equal(onDisk, campaignJsonSchema(), 'schema/campaign.schema.json is stale: run `npm run schema`');
});

test('examples/*.json are the built-in profiles and parse', () => {
  for (const name of ['rehearsal', 'full'] as const) {
    const ex = JSON.parse(fs.readFileSync(path.join(root, 'examples', `${name}.json`), 'utf8')) as Record<string, unknown>;
    const { $schema, ...rest } = ex;
    assert.equal($schema, '../schema/campaign.schema.json');
    assert.deepEqual(rest, PROFILES[name]);
    parseCampaignSpec(ex);
  }
});

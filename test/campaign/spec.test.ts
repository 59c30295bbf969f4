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
  assert.match(errorsOf({ ...base, target: 'aws2' })[0], /^target: .*allowed: "local", "aws"/);
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

/** examples/aws.json as parsed input: the protocol's rig (db.m7g.2xlarge, gp3 100 GB at 3,000 IOPS, one zone). */
function awsExample(): Record<string, unknown> & { aws: Record<string, unknown> & { database: { storage: Record<string, unknown> } } } {
  return JSON.parse(fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8')) as ReturnType<typeof awsExample>;
}

test('examples/aws.json is the protocol\'s rig and parses with target "aws"', () => {
  const spec = parseCampaignSpec(awsExample());
  assert.equal(spec.target, 'aws');
  assert.equal(spec.aws?.database.instanceClass, 'db.m7g.2xlarge');
  assert.deepEqual(spec.aws?.database.storage, { type: 'gp3', sizeGb: 100, iops: 3000, throughputMiBps: 125 });
  assert.ok(spec.aws?.zone.startsWith(spec.aws.region), 'the zone is in the region');
  assert.doesNotMatch(JSON.stringify(spec), /password|api_?key|secret/i);
});

test('the aws block: errors name the field and the fix', () => {
  const ex = awsExample();
  const { aws: _aws, ...noBlock } = ex;
  assert.deepEqual(errorsOf(noBlock), ['aws: target "aws" needs an "aws" block (region, zone, database, app, load): see examples/aws.json']);
  assert.deepEqual(errorsOf({ ...PROFILES.rehearsal, aws: ex.aws }), ['aws: an "aws" block is only read with target "aws": remove it, or set target to "aws"']);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, zone: 'us-west-2a' } })[0], /^aws\.zone: zone us-west-2a is not in region us-east-1: give a zone of us-east-1 \(e\.g\. us-east-1a\)/);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, region: 'Mumbai' } })[0], /^aws\.region: region must be an AWS region name such as "us-east-1"/);
  const db = ex.aws.database;
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, database: { ...db, instanceClass: 'm7g.2xlarge' } } })[0], /^aws\.database\.instanceClass: .*starts with "db\."/);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, database: { ...db, engineVersion: '9.6' } } })[0], /^aws\.database\.engineVersion: .*12 or later/);
  assert.deepEqual(errorsOf({ ...ex, aws: { ...ex.aws, database: { ...db, storage: { ...db.storage, iops: 6000 } } } }), [
    'aws.database.storage.iops: iops must be 3000: RDS gp3 below 400 GB has a fixed 3000 IOPS and 125 MiB/s (set iops to 3000, or sizeGb to 400 or more to provision it)',
  ]);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, database: { ...db, storage: { sizeGb: 500, iops: 3000, throughputMiBps: 500 } } } })[0], /^aws\.database\.storage\.iops: iops must be 12000-64000 for RDS gp3 of 400 GB or more/);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, database: { ...db, storage: { ...db.storage, type: 'io2' } } } })[0], /^aws\.database\.storage\.type: .*"gp3"/);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, app: { instanceType: 'db.m7g.large' } } })[0], /^aws\.app\.instanceType: .*no "db\." prefix/);
  assert.deepEqual(errorsOf({ ...ex, aws: { ...ex.aws, load: {} } }), ['aws.load.instanceType: instanceType is required, e.g. "c7g.2xlarge"']);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, prices: { databasePerHour: -1 } } })[0], /^aws\.prices\.databasePerHour: databasePerHour must be >= 0/);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, colour: 'red' } })[0], /^aws: unknown field\(s\) "colour"/);
});

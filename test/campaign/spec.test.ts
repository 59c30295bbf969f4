// test-mode: unit
// The campaign spec: defaults, errors that name the field, the checked-in JSON Schema and examples.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseCampaignSpec, PROFILES, SpecError } from '../../lib/protocol/spec';
import { campaignJsonSchema } from '../../lib/protocol/spec-schema';
import { serviceLaunch, settingsEnv, usesRollup } from '../../lib/protocol/service-spec';
import { variantSettings } from '../../lib/protocol/variants';
import { withServiceCommand } from '../../client/service-flag';

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
  assert.deepEqual(neg, ['sustained.configurations[0].eventsPerSecond: eventsPerSecond must be > 0 (got -1)']);
  assert.match(errorsOf({ ...base, sustained: { ...base.sustained!, configurations: [{ name: 'a', eventsPerSecond: 1, batch: 5000, p99LimitMs: 1 }] } })[0], /batch must be <= 1000/);
  assert.match(errorsOf({ ...base, colour: 'red' })[0], /^colour: unknown field: .*allowed at the top level: "\$schema", "name"/);
  assert.match(errorsOf({ ...base, ladder: { rates: [100], batch: 10 } })[0], /exactly one of "sustained" .* or "ladder"/);
  // how often the watchdog looks: absent keeps the 2-min default (and old specs' inputs unchanged)
  assert.equal(parseCampaignSpec(base).watchdogCheckSeconds, undefined);
  assert.equal(parseCampaignSpec({ ...base, watchdogCheckSeconds: 30 }).watchdogCheckSeconds, 30);
  assert.match(errorsOf({ ...base, watchdogCheckSeconds: 2 })[0], /^watchdogCheckSeconds: .*5/);
  assert.match(errorsOf({ ...base, watchdogCheckSeconds: 3600 })[0], /^watchdogCheckSeconds: .*600/);
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
  // A major alone is RDS's default minor of it (the preflight resolves it); a major.minor pins one; anything else is refused.
  for (const v of ['16', '16.9', '17']) assert.equal((parseCampaignSpec({ ...ex, aws: { ...ex.aws, database: { ...db, engineVersion: v } } }).aws as { database: { engineVersion: string } }).database.engineVersion, v);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, database: { ...db, engineVersion: '16.9.1' } } })[0], /^aws\.database\.engineVersion: engineVersion must be a PostgreSQL major of 12 or later \("16": its default minor\) or a major\.minor such as "16\.9"/);
  assert.deepEqual(errorsOf({ ...ex, aws: { ...ex.aws, database: { ...db, storage: { ...db.storage, iops: 6000 } } } }), [
    'aws.database.storage.iops: iops must be 3000: RDS gp3 below 400 GB has a fixed 3000 IOPS and 125 MiB/s (set iops to 3000, or sizeGb to 400 or more to provision it)',
  ]);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, database: { ...db, storage: { sizeGb: 500, iops: 3000, throughputMiBps: 500 } } } })[0], /^aws\.database\.storage\.iops: iops must be 12000-64000 for RDS gp3 of 400 GB or more/);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, database: { ...db, storage: { ...db.storage, type: 'io2' } } } })[0], /^aws\.database\.storage\.type: .*"gp3"/);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, app: { instanceType: 'db.m7g.large' } } })[0], /^aws\.app\.instanceType: .*no "db\." prefix/);
  assert.deepEqual(errorsOf({ ...ex, aws: { ...ex.aws, load: {} } }), ['aws.load.instanceType: instanceType is required, e.g. "c7g.2xlarge"']);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, prices: { databasePerHour: -1 } } })[0], /^aws\.prices\.databasePerHour: databasePerHour must be >= 0/);
  assert.match(errorsOf({ ...ex, aws: { ...ex.aws, colour: 'red' } })[0], /^aws\.colour: unknown field: .*allowed in aws: /);
});

test('the local block (issue 23): rdsFidelity on the local target only, a boolean, named when wrong', () => {
  const base = PROFILES.rehearsal;
  assert.equal(parseCampaignSpec({ ...base, local: { rdsFidelity: true } }).local?.rdsFidelity, true);
  assert.equal(parseCampaignSpec({ ...base, local: {} }).local?.rdsFidelity, false);
  assert.equal(parseCampaignSpec(base).local, undefined, 'no block, nothing recorded: older campaigns resolve to the same spec');
  assert.deepEqual(errorsOf({ ...base, local: { rdsFidelity: 'yes' } }), ['local.rdsFidelity: local.rdsFidelity must be true or false']);
  assert.deepEqual(errorsOf({ ...base, local: { rdsFidelty: true } }), ['local.rdsFidelty: unknown field: did you mean "rdsFidelity"? (allowed in local: "rdsFidelity")']);
  assert.deepEqual(errorsOf({ ...awsExample(), local: { rdsFidelity: true } }), ['local: a "local" block is only read with target "local" (this spec\'s target is "aws"): remove it, or set target to "local"']);
});

test('service (issue 14): run and env, the reference switches as shorthands, errors that name the field and the fix', () => {
  const base = PROFILES.rehearsal;
  const cmd = { command: ['/usr/bin/node', '/srv/hc/main.js'] };
  // A user's build with its own settings; the switches keep their defaults and are not passed to it.
  const own = parseCampaignSpec({ ...base, service: { run: cmd, env: { HC_LAST_USED: 'every-request', APP_MODE: 'fast' } } });
  assert.deepEqual(own.service.run, { ...cmd, readyTimeoutSeconds: 60 });
  assert.deepEqual(serviceLaunch(own.service), { run: own.service.run, env: { HC_LAST_USED: 'every-request', APP_MODE: 'fast' } });
  assert.deepEqual(settingsEnv(serviceLaunch(own.service)), { HC_LAST_USED: 'every-request', APP_MODE: 'fast' });
  // The reference service: switches become HC_*, env entries beside them; without env the launch is what it was.
  const ref = parseCampaignSpec({ ...base, service: { insert: 'multi-row', env: { HC_POOL_SIZE: '30' } } });
  assert.deepEqual(settingsEnv(serviceLaunch(ref.service)), { HC_LAST_USED: 'per-minute', HC_INSERT: 'multi-row', HC_AGGREGATE: 'scan', HC_POOL_SIZE: '30' });
  assert.deepEqual(serviceLaunch(parseCampaignSpec(base).service), { lastUsed: 'per-minute', insert: 'per-event', aggregate: 'scan' });
  assert.equal(usesRollup(parseCampaignSpec({ ...base, service: { run: cmd, env: { HC_AGGREGATE: 'rollup' } } }).service), true);
  assert.equal(usesRollup(parseCampaignSpec({ ...base, service: { aggregate: 'rollup' } }).service), true);

  const svc = (service: unknown, extra: object = {}) => errorsOf({ ...base, service, ...extra });
  assert.deepEqual(svc({ run: {} }), ['service.run: give exactly one of "command" (an argv on the local target) or "image" (a container image on an aws app node)']);
  assert.match(svc({ run: { command: ['bin/serve'] } })[0], /^service\.run\.command\[0\]: "bin\/serve" is a relative path: give an absolute path, or a bare name found on PATH/);
  assert.match(svc({ run: { ...cmd, cwd: 'srv' } })[0], /^service\.run\.cwd: "srv" is relative/);
  assert.match(svc({ run: { image: 'ghcr.io/me/hc:1' } })[0], /^service\.run\.image: an image runs on an aws app node only: on the local target give "command"/);
  assert.match(svc({ run: cmd, insert: 'multi-row' })[0], /^service\.insert: "insert" is a switch of the reference service: with service\.run, give your build's settings in service\.env, e\.g\. \{"HC_INSERT": "multi-row"\}/);
  assert.match(svc({ env: { HC_LAST_USED: 'every-request' } })[0], /^service\.env\.HC_LAST_USED: .*set service\.lastUsed instead/);
  assert.match(svc({ env: { PORT: '80' } })[0], /^service\.env\.PORT: PORT is set by the rig itself/);
  assert.match(svc({ env: { DATABASE_URL: 'x' } })[0], /^service\.env\.DATABASE_URL: DATABASE_URL is set by the rig itself/);
  assert.match(svc({ env: { RIG_LOCAL_CAMPAIGN: 'x' } })[0], /names starting with RIG_ are the rig's own/);
  assert.match(svc({ env: { '9LIVES': 'x' } })[0], /is not an environment variable name/);
  assert.match(svc({ env: { N: 3 } })[0], /^service\.env\.N: a service\.env value must be a string \(quote numbers/);
  // Secrets never enter a spec (it is workflow history): refused by name, or by a password inside a URL.
  for (const name of ['DB_PASSWORD', 'STRIPE_API_KEY', 'AUTH_TOKEN', 'SECRET', 'AWS_SECRET_ACCESS_KEY']) {
    assert.match(svc({ env: { [name]: 'x' } })[0], new RegExp(`^service\\.env\\.${name}: ${name} looks like a secret: .*Export it in the environment of the \`rig worker\``));
  }
  assert.match(svc({ env: { UPSTREAM: 'postgres://u:hunter2@db/x' } })[0], /UPSTREAM looks like a secret/);
  assert.deepEqual(parseCampaignSpec({ ...base, service: { env: { MONKEY_MODE: 'on', CACHE_KEYS_MAX: '10' } } }).service.env, { MONKEY_MODE: 'on', CACHE_KEYS_MAX: '10' }, 'KEY only as a word of the name');
  // Variants override env entries; with a run, not the reference switches.
  const variants = (treatment: object, service: object = {}) => ({ variants: { control: { name: 'a' }, treatments: [{ name: 'b', ...treatment }] }, service });
  assert.match(errorsOf({ ...base, ...variants({ service: { env: { API_TOKEN: 'x' } } }) })[0], /^variants\.treatments\[0\]\.service\.env\.API_TOKEN: API_TOKEN looks like a secret/);
  assert.match(errorsOf({ ...base, ...variants({ service: { lastUsed: 'every-request' } }, { run: cmd }) })[0], /^variants\.treatments\[0\]\.service\.lastUsed: .*override your build's settings in env, e\.g\. \{"HC_LAST_USED": "every-request"\}/);
  const merged = parseCampaignSpec({ ...base, ...variants({ service: { env: { B: '2' } } }, { run: cmd, env: { A: '1', B: '1' } }) });
  assert.deepEqual(variantSettings(merged, 'b').service.env, { A: '1', B: '2' });
  assert.deepEqual(variantSettings(merged, 'a').service.env, { A: '1', B: '1' });
  // The command form is the local target's; the image form the aws app node's.
  const aws = JSON.parse(fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8')) as Record<string, unknown>;
  assert.match(errorsOf({ ...aws, service: { run: cmd } })[0], /^service\.run\.command: a command runs on the local target only: on aws give "image"/);
  assert.equal(parseCampaignSpec({ ...aws, service: { run: { image: 'ghcr.io/me/hc:1', port: 3000 } } }).service.run?.image, 'ghcr.io/me/hc:1');
});

test('rig rehearse --service-command: the rehearsal against your own build, relative paths from where it was typed', () => {
  const spec = withServiceCommand(parseCampaignSpec(PROFILES.rehearsal), './bin/serve --fast', '/srv/hc');
  assert.deepEqual(spec.service.run, { command: [path.resolve('./bin/serve'), '--fast'], cwd: '/srv/hc', readyTimeoutSeconds: 60 });
  assert.deepEqual(withServiceCommand(parseCampaignSpec(PROFILES.rehearsal), 'node main.js', '/srv/hc').service.run?.command, ['node', 'main.js']);
  assert.throws(() => withServiceCommand(parseCampaignSpec(PROFILES.rehearsal), '  '), /^Error: --service-command: give the command/);
  assert.throws(() => withServiceCommand(parseCampaignSpec({ ...PROFILES.rehearsal, service: { insert: 'multi-row' } }), 'node main.js'), /--service-command: invalid campaign spec:\n {2}- service\.insert: "insert" is a switch of the reference service/);
});

test('examples/own-service.json: the rehearsal against your own build, as a spec', () => {
  const ex = JSON.parse(fs.readFileSync(path.join(root, 'examples', 'own-service.json'), 'utf8')) as Record<string, unknown>;
  const spec = parseCampaignSpec(ex);
  assert.deepEqual(spec.service.run?.command, ['/usr/bin/node', '/srv/my-hardcount/dist/main.js']);
  const { name: _n, service: _s, ...rest } = ex;
  const { name: _r, ...rehearsal } = JSON.parse(fs.readFileSync(path.join(root, 'examples', 'rehearsal.json'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(rest, rehearsal, 'the rehearsal in all but its name and service');
});

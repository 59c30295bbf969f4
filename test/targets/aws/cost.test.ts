// test-mode: unit
// $/hour of an AWS rig: the table's figures item by item, the spec's overrides on top, and a missing
// price reported with its override rather than guessed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseCampaignSpec } from '../../../lib/protocol/spec';
import type { AwsSpec } from '../../../lib/protocol/aws-spec';
import { rigCost } from '../../../lib/targets/aws/cost';
import { PRICE_TABLE_SOURCE } from '../../../lib/targets/aws/prices';

const root = path.resolve(__dirname, '..', '..', '..');
const example = (): AwsSpec => parseCampaignSpec(JSON.parse(fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8'))).aws!;

test('the protocol rig from the table: instance, two nodes, 100 GB of gp3 with its IOPS included', () => {
  const c = rigCost(example());
  assert.deepEqual(
    c.items.map((i) => [i.what, Math.round(i.perHour * 1e4) / 1e4, i.from]),
    [
      ['RDS db.m7g.2xlarge', 0.672, 'table'],
      ['app node c7g.2xlarge', 0.29, 'table'],
      ['load node c7g.2xlarge', 0.29, 'table'],
      ['gp3 100 GB', 0.0158, 'table'],
    ],
  );
  assert.equal(c.perHour, 1.2678);
  assert.equal(c.protocolPerHour, 0.962);
  assert.deepEqual(c.missing, []);
  assert.equal(c.source, PRICE_TABLE_SOURCE);
});

test('overrides replace the table, and a big volume pays for IOPS and throughput above its baseline', () => {
  const aws = example();
  const c = rigCost({
    ...aws,
    database: { ...aws.database, storage: { type: 'gp3', sizeGb: 400, iops: 16_000, throughputMiBps: 600 } },
    prices: { databasePerHour: 1, source: 'quote 2026-11' },
  });
  const by = Object.fromEntries(c.items.map((i) => [i.what, i]));
  assert.equal(by['RDS db.m7g.2xlarge'].perHour, 1);
  assert.equal(by['RDS db.m7g.2xlarge'].from, 'spec');
  assert.ok(Math.abs(by['gp3 IOPS above 12000'].perHour - (4000 * 0.02) / 730) < 1e-9);
  assert.ok(Math.abs(by['gp3 MiB/s above 500'].perHour - (100 * 0.08) / 730) < 1e-9);
  assert.match(c.source, /us-east-1.*; spec overrides \(quote 2026-11\)$/);
});

test('another region without overrides has no $/hour, and says which overrides give one', () => {
  const c = rigCost({ ...example(), region: 'ap-south-1', zone: 'ap-south-1a' });
  assert.equal(c.perHour, undefined);
  assert.equal(c.protocolPerHour, undefined);
  assert.deepEqual(
    c.missing.map((m) => m.split('; ')[1]),
    ['give aws.prices.databasePerHour', 'give aws.prices.appNodePerHour', 'give aws.prices.loadNodePerHour', 'give aws.prices.storagePerGbMonth'],
  );
  const priced = rigCost({ ...example(), region: 'ap-south-1', zone: 'ap-south-1a', prices: { databasePerHour: 0.7, appNodePerHour: 0.3, loadNodePerHour: 0.3, storagePerGbMonth: 0.1314 } });
  assert.equal(priced.perHour, Math.round((0.7 + 0.3 + 0.3 + 13.14 / 730) * 1e4) / 1e4);
});

test('an instance class the table lacks is missing, not zero', () => {
  const aws = example();
  const c = rigCost({ ...aws, database: { ...aws.database, instanceClass: 'db.x2g.large' } });
  assert.equal(c.perHour, undefined);
  assert.match(c.missing[0], /^RDS db\.x2g\.large: no price for it in the table \(us-east-1 only\); give aws\.prices\.databasePerHour$/);
});

// test-mode: unit
// What a campaign on an AWS rig is billed beyond the instances' $/hour (lib/targets/aws/campaign-cost.ts):
// the IPv4 addresses, root volumes and Enhanced Monitoring's ingestion, the plan's total with RDS's
// 10-minute minimum, and the worst case at the watchdog deadline, every figure from the price table.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { AwsSpec } from '../../../lib/protocol/aws-spec';
import { parseCampaignSpec } from '../../../lib/protocol/spec';
import { campaignCost } from '../../../lib/targets/aws/campaign-cost';
import { rigCost } from '../../../lib/targets/aws/cost';

const root = path.resolve(__dirname, '..', '..', '..');
const example = (): AwsSpec => parseCampaignSpec(JSON.parse(fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8'))).aws!;
const input = { aws: example(), planMinutes: 60, watchdogMinutes: 120, monitoringIntervalS: 1, rootVolumeGb: 30 };

test('the extras: two IPv4 addresses, two 30 GB root volumes, Enhanced Monitoring every second', () => {
  const c = campaignCost(input);
  assert.deepEqual(c.extras.map((i) => [i.what, Math.round(i.perHour * 1e4) / 1e4]), [
    ['2 public IPv4 addresses (one per node)', 0.01],
    ['2 node root volumes (gp3 30 GB each)', 0.0066],
    ['Enhanced Monitoring every 1 s (~0.036 GB/hour into CloudWatch Logs)', 0.018],
  ]);
  // 1.2678 (instances and storage, cost.test.ts) + 0.01 + 0.006575 + 0.018
  assert.equal(c.perHour, 1.3024);
  assert.deepEqual(c.missing, []);
});

test('the plan and the worst case are the rate over their minutes; the worst case is the watchdog deadline', () => {
  const c = campaignCost(input);
  assert.equal(c.plan.usd, 1.3024);
  assert.equal(c.worstCase.usd, 2.6048);
  assert.match(c.lines.join('\n'), /^the plan as allowed \(60 min from provisioning to the report, what the watchdog covers\): \$1\.30 at \$1\.3024\/hour/m);
  assert.match(c.lines.join('\n'), /^worst case, teardown failing and the rig running to its watchdog deadline \(120 min\): \$2\.60;/m);
  assert.match(c.lines.join('\n'), /^RDS bills at least 10 minutes of the instance once created$/m);
  assert.equal(c.expected, undefined, 'no expected minutes given, no expected line');
  // With the dry run's expected minutes beside the allowances: what a campaign that goes as expected costs.
  const e = campaignCost({ ...input, expectedMinutes: 30 });
  assert.deepEqual(e.expected, { minutes: 30, usd: 0.6512 });
  assert.match(e.lines.join('\n'), /^expected \(30 min from provisioning to the report, each step's typical time\): \$0\.65\nthe plan as allowed/m);
});

test('a plan shorter than RDS\'s 10-minute minimum pays the minimum for the database', () => {
  const c = campaignCost({ ...input, planMinutes: 4 });
  const db = rigCost(input.aws).items.find((i) => i.what.startsWith('RDS '))!.perHour;
  assert.equal(c.plan.usd, Math.round(((1.3024 * 4) / 60 + (db * 6) / 60) * 1e4) / 1e4);
  assert.match(c.lines.join('\n'), /10 minutes of the instance once created \(counted in the plan above\)/);
});

test('no Enhanced Monitoring, no ingestion; a missing instance price leaves every total unknown, never guessed', () => {
  assert.equal(campaignCost({ ...input, monitoringIntervalS: 0 }).extras.length, 2);
  const aws = example();
  const c = campaignCost({ ...input, aws: { ...aws, database: { ...aws.database, instanceClass: 'db.x2g.large' } } });
  assert.equal(c.perHour, undefined);
  assert.equal(c.plan.usd, undefined);
  assert.equal(c.worstCase.usd, undefined);
  assert.match(c.lines.join('\n'), /worst case.*: unknown;/);
});

test('outside the table\'s region the extras are its figures, said so', () => {
  const c = campaignCost({ ...input, aws: { ...example(), region: 'eu-west-1', zone: 'eu-west-1a', prices: { databasePerHour: 0.7, appNodePerHour: 0.3, loadNodePerHour: 0.3, storagePerGbMonth: 0.127 } } });
  assert.ok(c.extras.every((i) => i.what.endsWith("(at us-east-1's price)")));
  assert.notEqual(c.perHour, undefined);
});

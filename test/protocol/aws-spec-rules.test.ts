// test-mode: unit
// What an AWS spec is refused for before anything is made, and what it may leave out (issue 32 items
// 2, 4, 5; issue 31 defect 8): every database setting is optional (a spec naming none keeps the
// target's defaults), gp3's IOPS/throughput ranges and its 0.25 MiB/s-per-IOPS ratio, values the
// engine's major does not take, and the major's lifecycle (standard support, or Extended Support
// opted in and priced).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { dbClassVcpus, engineLifecycleSupport, lifecycleProblem, pastStandardSupport } from '../../lib/protocol/rds-lifecycle';
import { rigCost } from '../../lib/targets/aws/cost';
import { specIssues } from '../harness/spec-issues';

// The example as plain JSON, edited field by field below (a loose shape: the spec's parser is what is tested).
interface Example {
  database?: object;
  aws: { database: { engineVersion: string; extendedSupport?: boolean; storage: object }; prices?: object };
}
const example = JSON.parse(fs.readFileSync('examples/aws.json', 'utf8')) as Example;
const withChanges = (f: (s: Example) => void) => {
  const s = structuredClone(example);
  f(s);
  return s;
};
const issues = specIssues;

test('every database setting is optional: a spec that names none resolves to an empty block, and one setting alone stays alone', () => {
  const none = parseCampaignSpec(withChanges((s) => delete s.database));
  assert.deepEqual(none.database, {});
  const one = parseCampaignSpec(withChanges((s) => (s.database = { shared_buffers: '8GB' })));
  assert.deepEqual(one.database, { shared_buffers: '8GB' });
  // min above max is still refused when both are named; one alone is the target's default against the other.
  assert.match(issues(withChanges((s) => (s.database = { min_wal_size: '2GB', max_wal_size: '1GB' }))).join('\n'), /database\.min_wal_size: min_wal_size 2GB is above max_wal_size 1GB/);
  assert.deepEqual(issues(withChanges((s) => (s.database = { min_wal_size: '2GB' }))), []);
});

test('gp3: ranges by size, and at most 0.25 MiB/s per provisioned IOPS, each naming the field and the fix', () => {
  const storage = (st: object) => withChanges((s) => (s.aws.database.storage = { type: 'gp3', ...st }));
  assert.deepEqual(issues(storage({ sizeGb: 400, iops: 12000, throughputMiBps: 3000 })), []);
  const ratio = issues(storage({ sizeGb: 400, iops: 12000, throughputMiBps: 4000 })).join('\n');
  assert.match(ratio, /aws\.database\.storage\.throughputMiBps: throughputMiBps 4000 at 12000 IOPS is 0\.333 MiB\/s per IOPS: RDS gp3 allows at most 0\.25 \(raise iops to at least 16000, or lower throughputMiBps to at most 3000\)/);
  assert.match(issues(storage({ sizeGb: 400, iops: 3000, throughputMiBps: 125 })).join('\n'), /aws\.database\.storage\.iops: iops must be 12000-64000/);
  assert.match(issues(storage({ sizeGb: 100, iops: 12000, throughputMiBps: 125 })).join('\n'), /aws\.database\.storage\.iops: iops must be 3000: RDS gp3 below 400 GB/);
});

test('values the major does not take: wal_compression zstd/lz4/pglz on 14 and earlier, the insert scale factor on 12', () => {
  const on = (version: string, db: object) => issues(withChanges((s) => ((s.aws.database.engineVersion = version), (s.aws.database.extendedSupport = true), (s.database = db)))).join('\n');
  assert.match(on('14', { wal_compression: 'zstd' }), /database\.wal_compression: wal_compression "zstd" needs PostgreSQL 15 or later; on 14 it is a boolean: set it to "on" \(pglz\) or "off", or aws\.database\.engineVersion to 15 or later/);
  assert.match(on('13.20', { wal_compression: 'lz4' }), /wal_compression "lz4" needs PostgreSQL 15/);
  assert.equal(on('14', { wal_compression: 'on' }), '');
  assert.equal(on('15', { wal_compression: 'zstd' }), '');
  assert.match(on('12', { autovacuum_vacuum_insert_scale_factor: 0.02 }), /database\.autovacuum_vacuum_insert_scale_factor: autovacuum_vacuum_insert_scale_factor does not exist on PostgreSQL 12 \(it came with 13\)/);
  assert.equal(on('13', { autovacuum_vacuum_insert_scale_factor: 0.02 }), '');
});

test('lifecycle: 12 and 13 are past standard support on 2026-12-05, 14 until 2027-02-28; refused without the opt-in, priced with it', () => {
  const now = new Date('2026-12-05T12:00:00Z');
  assert.equal(pastStandardSupport(13, now).past, true);
  assert.equal(pastStandardSupport(14, now).past, false);
  assert.equal(pastStandardSupport(14, new Date('2027-03-01T00:00:00Z')).past, true);
  assert.equal(pastStandardSupport(19, now).past, false, 'a major newer than the table is in standard support');
  const p = lifecycleProblem('13', false, now);
  assert.equal(p?.path, 'aws.database.engineVersion');
  assert.match(p!.line, /RDS for PostgreSQL 13 is past its end of standard support \(2026-02-28\)/);
  assert.match(p!.fix, /set aws\.database\.engineVersion to a major in standard support \(14, 15, 16, 17 or later\), or aws\.database\.extendedSupport to true/);
  assert.equal(lifecycleProblem('13', true, now), null);
  assert.equal(lifecycleProblem('16', false, now), null);
  assert.equal(engineLifecycleSupport(false), 'open-source-rds-extended-support-disabled');
  assert.equal(engineLifecycleSupport(true), 'open-source-rds-extended-support');

  assert.equal(dbClassVcpus('db.m7g.2xlarge'), 8);
  assert.equal(dbClassVcpus('db.r6g.large'), 2);
  assert.equal(dbClassVcpus('db.t4g.micro'), 2);
  assert.equal(dbClassVcpus('db.m7g.16xlarge'), 64);

  const spec = parseCampaignSpec(withChanges((s) => ((s.aws.database.engineVersion = '13'), (s.aws.database.extendedSupport = true))));
  const withEs = rigCost(spec.aws!, now);
  const es = withEs.items.find((i) => i.what.startsWith('RDS Extended Support'));
  assert.equal(es?.what, 'RDS Extended Support, PostgreSQL 13 (8 vCPU)');
  assert.equal(es?.perHour, 0.8, '8 vCPU x $0.100 (years 1-2)');
  const base = rigCost(parseCampaignSpec(example).aws!, now);
  assert.equal(Math.round((withEs.perHour! - base.perHour!) * 10_000) / 10_000, 0.8);
  // Year 3 of 12 (from 2027-03-01) doubles; the spec's price wins.
  const twelve = parseCampaignSpec(withChanges((s) => ((s.aws.database.engineVersion = '12'), (s.aws.database.extendedSupport = true), (s.database = {}))));
  assert.equal(rigCost(twelve.aws!, new Date('2027-04-01T00:00:00Z')).items.find((i) => i.what.startsWith('RDS Extended'))?.perHour, 1.6);
  const priced = parseCampaignSpec(withChanges((s) => ((s.aws.database.engineVersion = '13'), (s.aws.database.extendedSupport = true), (s.aws.prices = { extendedSupportPerVcpuHour: 0.12 }))));
  const item = rigCost(priced.aws!, now).items.find((i) => i.what.startsWith('RDS Extended'));
  assert.equal(item?.from, 'spec');
  assert.equal(Math.round(item!.perHour * 1000) / 1000, 0.96);
  // In standard support, the opt-in costs nothing.
  assert.equal(rigCost(parseCampaignSpec(withChanges((s) => (s.aws.database.extendedSupport = true))).aws!, now).perHour, base.perHour);
});

// test-mode: unit
// Variants (issue 13), as pure logic: which configurations are measured, in which order (blocks or
// interleaved A B A B), when a warm-up comes first, what settings a variant runs with, what the spec
// check refuses, and how the plan counts them. The campaign itself: test/campaign/variants.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measuringSecondsLeft } from '../../lib/protocol/plan';
import { parseCampaignSpec, PROFILES, SpecError, type CampaignSpecInput } from '../../lib/protocol/spec';
import { measuredConfigurations, measuringOrder, variantSettings, warmsUpBefore } from '../../lib/protocol/variants';
import { settingMatches, settingText } from '../../lib/targets/local/settings';

const base: CampaignSpecInput = {
  ...PROFILES.rehearsal,
  sustained: { ...PROFILES.rehearsal.sustained!, repeats: 2 },
  variants: {
    order: 'interleaved',
    control: { name: 'ctl', database: { autovacuum_vacuum_insert_scale_factor: 0.2 } },
    treatments: [{ name: 'vac', database: { autovacuum_vacuum_insert_scale_factor: 0.02 }, service: { insert: 'multi-row' } }],
  },
};
const order = (input: CampaignSpecInput) => measuringOrder(parseCampaignSpec(input)).map((u) => `${u.configuration.name} r${u.k}`);

test('interleaved runs every variant in turn per configuration and repeat; blocks runs each variant\'s whole series', () => {
  assert.deepEqual(order(base), ['single.ctl r1', 'single.vac r1', 'single.ctl r2', 'single.vac r2', 'batched.ctl r1', 'batched.vac r1', 'batched.ctl r2', 'batched.vac r2']);
  assert.deepEqual(order({ ...base, variants: { ...base.variants!, order: 'blocks' } }), [
    'single.ctl r1',
    'single.ctl r2',
    'batched.ctl r1',
    'batched.ctl r2',
    'single.vac r1',
    'single.vac r2',
    'batched.vac r1',
    'batched.vac r2',
  ]);
  // Without variants: each configuration's repeats in turn, under its own name (as before variants).
  assert.deepEqual(order({ ...base, variants: undefined }), ['single r1', 'single r2', 'batched r1', 'batched r2']);
  assert.deepEqual(
    measuredConfigurations(parseCampaignSpec(base)).map((c) => [c.name, c.base, c.variant]),
    [
      ['single.ctl', 'single', 'ctl'],
      ['single.vac', 'single', 'vac'],
      ['batched.ctl', 'batched', 'ctl'],
      ['batched.vac', 'batched', 'vac'],
    ],
  );
});

test('a warm-up comes before each configuration\'s first repeat and after every change of variant', () => {
  const spec = parseCampaignSpec(base);
  const plan = measuringOrder(spec);
  assert.deepEqual(plan.map((_, i) => warmsUpBefore(plan, i)), [true, true, true, true, true, true, true, true]);
  const blocks = measuringOrder(parseCampaignSpec({ ...base, variants: { ...base.variants!, order: 'blocks' } }));
  assert.deepEqual(blocks.map((_, i) => warmsUpBefore(blocks, i)), [true, false, true, false, true, false, true, false]);
  const plain = measuringOrder(parseCampaignSpec({ ...base, variants: undefined }));
  assert.deepEqual(plain.map((_, i) => warmsUpBefore(plain, i)), [true, false, true, false]);
  // The plan counts them: 8 repeats, 7 cool-downs, 8 warm-ups (each with its cool-down).
  const s = spec.sustained!;
  assert.equal(measuringSecondsLeft({ ...spec, ceiling: undefined, denominator: undefined }, 0), 8 * s.repeatSeconds + 7 * s.cooldownSeconds + 8 * (s.warmupSeconds + s.cooldownSeconds));
});

test('a ladder climbs under every variant: blocks climb each variant\'s whole ladder, interleaved alternates rung by rung', () => {
  const ladder: CampaignSpecInput = { ...base, sustained: undefined, ladder: { rates: [100, 200], batch: 10, rungs: 1, rungSeconds: 5, cooldownSeconds: 2, warmupSeconds: 3 } };
  const blocks = { ...ladder, variants: { ...ladder.variants!, order: 'blocks' as const } };
  assert.deepEqual(order(blocks), ['rung-100.ctl r1', 'rung-200.ctl r1', 'rung-100.vac r1', 'rung-200.vac r1']);
  assert.deepEqual(order(ladder), ['rung-100.ctl r1', 'rung-100.vac r1', 'rung-200.ctl r1', 'rung-200.vac r1']);
  // A rung has no p99 limit (the ingest gate alone), as the workflow has always measured it.
  assert.equal(measuredConfigurations(parseCampaignSpec(ladder))[0].p99LimitMs, Number.MAX_SAFE_INTEGER);
  // A ladder warms up at its first rung and after each change of variant, never before every rung.
  const b = measuringOrder(parseCampaignSpec(blocks));
  assert.deepEqual(b.map((_, i) => warmsUpBefore(b, i, 'rung')), [true, false, true, false]);
  const plain = measuringOrder(parseCampaignSpec({ ...ladder, variants: undefined }));
  assert.deepEqual(plain.map((u) => u.configuration.name), ['rung-100', 'rung-200']);
  assert.deepEqual(plain.map((_, i) => warmsUpBefore(plain, i, 'rung')), [true, false]);
  // The plan: 4 rungs each with its cool-down (the last one too), 2 warm-ups with theirs.
  const spec = parseCampaignSpec(blocks);
  assert.equal(measuringSecondsLeft({ ...spec, ceiling: undefined, denominator: undefined }, 0), 4 * (5 + 2) + 2 * (3 + 2));
  assert.equal(measuringSecondsLeft({ ...spec, ceiling: undefined, denominator: undefined }, 1), 3 * (5 + 2) + 1 * (3 + 2));
  // A ladder's rungs under a variant must not collide with its names either.
  assert.throws(() => parseCampaignSpec({ ...blocks, variants: { ...blocks.variants, control: { name: 'x'.repeat(60) } } }), /rung-100" of variant "x+" would be named/);
});

test('a variant runs with the campaign\'s settings and its own fields over them', () => {
  const spec = parseCampaignSpec(base);
  const vac = variantSettings(spec, 'vac');
  assert.equal(vac.database.autovacuum_vacuum_insert_scale_factor, 0.02);
  assert.equal(vac.database.shared_buffers, spec.database.shared_buffers);
  assert.equal(vac.service.insert, 'multi-row');
  assert.equal(vac.service.lastUsed, spec.service.lastUsed);
  assert.equal(variantSettings(spec, 'ctl').service.insert, 'per-event');
  assert.throws(() => variantSettings(spec, 'nope'), /no variant "nope" in the spec \(variants: ctl, vac\)/);
});

test('the spec check refuses what variants cannot be, naming the field', () => {
  const refused = (input: unknown, re: RegExp) =>
    assert.throws(
      () => parseCampaignSpec(input),
      (e: unknown) => e instanceof SpecError && re.test(e.message),
    );
  refused({ ...base, variants: { ...base.variants!, treatments: [{ name: 'ctl' }] } }, /variants\.treatments: variant names must differ: "ctl" is given twice/);
  refused({ ...base, variants: { ...base.variants!, fresh: true } }, /variants\.fresh: fresh re-seeds before each variant's block: it needs order "blocks"/);
  refused({ ...base, sustained: undefined, ceiling: { workers: 2, batch: 1, seconds: 5 } }, /variants: variants need "sustained" or "ladder"/);
  refused({ ...base, variants: { ...base.variants!, treatments: [] } }, /variants\.treatments: at least one treatment/);
  refused({ ...base, variants: { ...base.variants!, control: { name: 'ctl', database: { work_mem: '4MB' } } } }, /variants\.control\.database\.work_mem: unknown field: .*allowed in variants\.control\.database: "shared_buffers"/);
  refused(
    { ...base, sustained: { ...base.sustained!, configurations: [...base.sustained!.configurations, { name: 'single.vac', eventsPerSecond: 10, batch: 1, p99LimitMs: 50 }] } },
    /configuration "single" of variant "vac" is named "single\.vac", which another configuration already is/,
  );
});

test('a database setting read back from pg_settings matches what was asked, in the setting\'s own unit', () => {
  assert.equal(settingMatches('256MB', { setting: '32768', unit: '8kB' }), true);
  // Read back in a unit a reader knows, never "327688kB" (pages and their size side by side).
  assert.equal(settingText({ setting: '32768', unit: '8kB' }), '256MB');
  assert.equal(settingText({ setting: '81920', unit: 'MB' }), '80GB');
  assert.equal(settingText({ setting: '100', unit: '8kB' }), '800kB');
  assert.equal(settingText({ setting: '0.02', unit: null }), '0.02');
  assert.equal(settingText({ setting: '200', unit: 'ms' }), '200ms');
  assert.equal(settingMatches('128MB', { setting: '32768', unit: '8kB' }), false);
  assert.equal(settingMatches('1GB', { setting: '1024', unit: 'MB' }), true);
  assert.equal(settingMatches(0.02, { setting: '0.02', unit: null }), true);
  assert.equal(settingMatches(0.2, { setting: '0.02', unit: null }), false);
  assert.equal(settingMatches('lz4', { setting: 'lz4', unit: null }), true);
  assert.equal(settingMatches(0, { setting: '0', unit: 'ms' }), true);
  // Times in another unit than pg_settings' (the local rig asks autovacuum_naptime '15s').
  assert.equal(settingMatches('15s', { setting: '15', unit: 's' }), true);
  assert.equal(settingMatches('1min', { setting: '60', unit: 's' }), true);
  assert.equal(settingMatches('200ms', { setting: '200', unit: 'ms' }), true);
  assert.equal(settingMatches('15s', { setting: '60', unit: 's' }), false);
  assert.equal(settingMatches('soon', { setting: '60', unit: 's' }), false);
});

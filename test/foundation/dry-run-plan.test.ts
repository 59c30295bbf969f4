// test-mode: unit
// The dry run tells the whole plan (issue 26): every step with its expected and allowed minutes,
// calibration included, and totals that are their sums; the configurations with their gates; the
// variants with what each changes, and the order of the measured repeats; the build measured; a
// place for the campaign's cost that the AWS cost computation fills. `--json` (dryRunPlan) and the
// text (dryRunLines) are the same plan. The rehearsal's durations in docs/setup.md and the AWS plan's
// in docs/aws.md are this plan's.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { dryRunLines, dryRunPlan } from '../../client/dry-run';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { captureRig } from '../harness/capture-cli';

const root = path.resolve(__dirname, '..', '..');
const example = (name: string) => parseCampaignSpec(JSON.parse(fs.readFileSync(path.join(root, 'examples', `${name}.json`), 'utf8')));
const now = new Date('2026-12-03T12:00:00Z');

test('the rehearsal: every step from calibration to the report, totals their sums, docs/setup.md says the same', () => {
  const p = dryRunPlan('r-1', example('rehearsal'), now);
  assert.deepEqual(p.steps.map((s) => s.step), ['calibrate', 'provision', 'bring-up', 'seed', 'measuring', 'teardown', 'report']);
  const sum = (k: 'expectedMinutes' | 'allowedMinutes') => Math.round(p.steps.reduce((a, s) => a + s[k], 0) * 10) / 10;
  assert.equal(p.total.expectedMinutes, sum('expectedMinutes'));
  assert.equal(p.total.allowedMinutes, sum('allowedMinutes'));
  assert.ok(p.steps[0].expectedMinutes > 0, 'calibration is in the plan');
  const guide = fs.readFileSync(path.join(root, 'docs', 'setup.md'), 'utf8');
  assert.ok(guide.includes(`**${p.total.expectedMinutes} min expected**`), `docs/setup.md gives the dry run's ${p.total.expectedMinutes} min`);
  assert.ok(guide.includes(`${p.total.allowedMinutes} min allowed`), `docs/setup.md gives the dry run's ${p.total.allowedMinutes} min allowed`);
  const lines = dryRunLines('r-1', example('rehearsal'), now);
  const block = lines.slice(lines.findIndex((l) => l.startsWith('steps (')), lines.findIndex((l) => l.startsWith('  total')) + 1).join('\n');
  assert.ok(guide.includes(block), `docs/setup.md shows the dry run's steps as it prints them:\n${block}`);
  assert.deepEqual(p.configurations.map((c) => [c.name, c.requestsPerRepeat, c.gates[0]]), [['single', 10800, 'p99 <= 50 ms'], ['batched', 10800, 'p99 <= 100 ms']]);
  assert.equal(p.order.length, 6);
  assert.match(p.build.measured, /^the reference service/);
  assert.equal(p.cost.campaign, null, "the campaign's cost: the AWS cost computation's place");
  assert.equal(p.watchdog?.deadlineIfProvisionedNow, '2026-12-03T13:00:00.000Z');
});

test('variants say what each changes and the order; own-service names its build, not the reference service', () => {
  const p = dryRunPlan('v-1', example('finding-hot-row'), now);
  assert.deepEqual(p.variants?.names, ['per-minute', 'every-request']);
  assert.deepEqual(p.variants?.settings['every-request'].changes, ['lastUsed=every-request']);
  assert.deepEqual(p.variants?.settings['per-minute'].changes, []);
  assert.equal(p.order[0], 'rung-600.per-minute #1');
  assert.match(p.order[p.order.length - 1], /\.every-request #1$/, 'blocks: the control\'s series, then the treatment\'s');
  const own = dryRunPlan('o-1', example('own-service'), now);
  assert.equal(own.build.measured, 'command /usr/bin/node /srv/my-hardcount/dist/main.js in /srv/my-hardcount');
  const lines = dryRunLines('o-1', example('own-service'), now).join('\n');
  assert.match(lines, /^build measured: command \/usr\/bin\/node \/srv\/my-hardcount\/dist\/main\.js in \/srv\/my-hardcount/m);
  assert.doesNotMatch(lines, /the reference service/);
});

test('--json prints the same plan as the text', async () => {
  const r = await captureRig(['campaign', 'start', 'examples/finding-hot-row.json', '--id', 'j-1', '--dry-run', '--json']);
  assert.equal(r.code, 0, r.err);
  const p = JSON.parse(r.out) as ReturnType<typeof dryRunPlan>;
  const text = (await captureRig(['campaign', 'start', 'examples/finding-hot-row.json', '--id', 'j-1', '--dry-run'])).out;
  for (const s of p.steps) assert.match(text, new RegExp(`^  ${s.step} +${s.expectedMinutes} / ${s.allowedMinutes}$`, 'm'));
  assert.match(text, new RegExp(`^  total +${p.total.expectedMinutes} / ${p.total.allowedMinutes}$`, 'm'));
  for (const c of p.configurations) assert.ok(text.includes(`    gates: ${c.gates.join('; ')}`), c.name);
  assert.ok(text.includes(`order of the measured repeats: ${p.order.join(', ')}`));
  assert.ok(text.includes(`build measured: ${p.build.measured}`));
});

test('no step is expected to take longer than it is allowed, on any example and target; an AWS plan waits for RDS in a step of its own', () => {
  for (const file of fs.readdirSync(path.join(root, 'examples')).filter((f) => f.endsWith('.json'))) {
    const p = dryRunPlan('x-1', example(file.replace(/\.json$/, '')), now);
    for (const s of p.steps) assert.ok(s.expectedMinutes <= s.allowedMinutes, `${file}: ${s.step} expected ${s.expectedMinutes} min, allowed ${s.allowedMinutes}`);
  }
  const aws = dryRunPlan('a-1', example('aws'), now);
  assert.deepEqual(aws.steps.map((s) => s.step), ['provision', 'database', 'calibrate', 'bring-up', 'seed', 'measuring', 'teardown', 'report']);
  assert.deepEqual(aws.steps.find((s) => s.step === 'database'), { step: 'database', expectedMinutes: 13, allowedMinutes: 60 });
  // docs/aws.md's durations are this plan's.
  const guide = fs.readFileSync(path.join(root, 'docs', 'aws.md'), 'utf8').replace(/\s+/g, ' ');
  const said = `\`examples/aws.json\`: ${aws.total.expectedMinutes} min expected, ${aws.total.allowedMinutes} allowed, so its ${aws.watchdog!.minutes}-minute watchdog covers the ${aws.watchdog!.needMinutes} it needs`;
  assert.ok(guide.includes(said), `docs/aws.md says: ${said}`);
  const expectedUsd = /^\s*expected \(([\d.]+) min from provisioning to the report, each step's typical time\): (\$[\d.]+)$/m.exec(aws.cost.campaign!.lines.join('\n'));
  assert.equal(`$${aws.cost.campaign!.expectedTotal!.toFixed(2)}`, expectedUsd?.[2], '--json carries the same expected cost');
  assert.ok(expectedUsd && guide.includes(`(here ${expectedUsd[1]} min: ${expectedUsd[2]})`), `docs/aws.md gives the expected cost: ${expectedUsd?.[0]}`);
});

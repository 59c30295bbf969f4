// The weekly regression check: `rig report NEW --baseline OLD` flags a configuration that lost
// passes or whose p99 median left the baseline's range, and exits 1 so a schedule can alert; an
// unchanged rerun (same rig, other random draws) passes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildReport, compareWithBaseline, renderMarkdown } from '../../lib/evidence/report';
import { rig } from '../harness/rig-cli';
import { makeFixtureCampaign, type Fixture } from './fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-baseline-test-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const small = { repeats: 3, repeatSeconds: 30, ceiling: false, denominator: false } as const;
let baseline: Fixture;
let rerun: Fixture;
let slower: Fixture;
let lostPass: Fixture;

before(async () => {
  baseline = await makeFixtureCampaign({ seed: 101, root, campaignId: 'week-1', ...small });
  rerun = await makeFixtureCampaign({ seed: 202, root, campaignId: 'week-2', start: '2026-08-23T09:00:00.000Z', ...small });
  // Planted regressions: every request 60 % slower; or one repeat of `single` dropping requests.
  slower = await makeFixtureCampaign({ seed: 303, root, campaignId: 'week-3-slower', start: '2026-08-30T09:00:00.000Z', latencyFactor: 1.6, ...small });
  lostPass = await makeFixtureCampaign({ seed: 404, root, campaignId: 'week-3-lost-pass', start: '2026-08-30T09:00:00.000Z', plans: [{ config: 'single', repeat: 2, drops: 12 }], ...small });
});

test('an unchanged rerun passes: every configuration within the baseline', async () => {
  // Identical draws under another id and date: within the range by the exact rule (no tolerance).
  const same = await makeFixtureCampaign({ seed: 101, root, campaignId: 'week-1-again', start: '2026-08-23T09:00:00.000Z', ...small });
  const exact = compareWithBaseline(await buildReport(same.dir), await buildReport(baseline.dir));
  assert.equal(exact.regression, false, exact.summary);
  assert.deepEqual(exact.rows.map((r) => `${r.config}:${r.verdict}`), ['single:unchanged', 'batched:unchanged']);
  // Other random draws of the same rig: three repeats' min–max is narrow, so run-to-run noise alone
  // lands a median a few percent outside it (here: single 5.7 ms vs 5.5–5.6 ms). A schedule gives
  // itself a few percent of tolerance; a 60 % slowdown is still flagged with it (next test).
  const noisy = compareWithBaseline(await buildReport(rerun.dir), await buildReport(baseline.dir), { tolerancePct: 5 });
  assert.equal(noisy.regression, false, noisy.summary);
  assert.deepEqual(noisy.rows.map((r) => `${r.config}:${r.verdict}`), ['single:unchanged', 'batched:unchanged']);
  const res = await rig(['report', rerun.dir, '--baseline', baseline.dir, '--tolerance', '5']);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stderr, /No regression against baseline week-1 \(2026-08-16\): 2 configurations compared \(p99 tolerance 5 %\)/);
  assert.match(res.stdout, /## Compared with the baseline\n\nNo regression/);
});

test('a planted p99 regression is flagged and exits 1', async () => {
  const res = await rig(['report', slower.dir, '--baseline', 'week-1'], { RIG_RESULTS: root });
  assert.equal(res.code, 1, res.stderr);
  assert.match(res.stderr, /REGRESSION against baseline week-1: single \(p99 median [\d.]+ ms is above the baseline's range [\d.]+–[\d.]+ ms\); batched \(p99 median/);
  assert.match(res.stdout, /\| single \| REGRESSION \| 3\/3 \| 3\/3 \|/);
  const tolerant = await rig(['report', slower.dir, '--baseline', 'week-1', '--tolerance', '5', '--format', 'json'], { RIG_RESULTS: root });
  assert.equal(tolerant.code, 1, 'still a regression with 5 % of tolerance');
  assert.equal((JSON.parse(tolerant.stdout) as { baseline: { tolerance_pct: number } }).baseline.tolerance_pct, 5);
  const bad = await rig(['report', slower.dir, '--tolerance', '5']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--tolerance applies to --baseline/);
});

test('a configuration that lost a pass is flagged, the others are not', async () => {
  const m = await buildReport(lostPass.dir, { baselineDir: baseline.dir, tolerancePct: 5 });
  const cmp = m.baseline!;
  assert.equal(cmp.regression, true);
  const single = cmp.rows.find((r) => r.config === 'single')!;
  assert.equal(single.verdict, 'regression');
  assert.ok(single.flags.includes('lost passes: 2/3 now, 3/3 in the baseline'), single.flags.join('; '));
  assert.equal(cmp.rows.find((r) => r.config === 'batched')!.verdict, 'unchanged');
  assert.match(renderMarkdown(m), /\| single \| REGRESSION \| 2\/3 \| 3\/3 \|/);
  // Improvements are flagged but do not alert: the baseline against the slow week.
  const faster = compareWithBaseline(await buildReport(baseline.dir), await buildReport(slower.dir));
  assert.equal(faster.regression, false);
  assert.ok(faster.rows.every((r) => r.verdict === 'faster'), faster.summary);
});

test('a configuration missing now, or reshaped under the same name, is a regression', async () => {
  const reshaped = await makeFixtureCampaign({
    seed: 505,
    root,
    campaignId: 'reshaped',
    ...small,
    configurations: [{ name: 'single', eventsPerSecond: 400, batch: 1, p99LimitMs: 50 }],
  });
  const cmp = compareWithBaseline(await buildReport(reshaped.dir), await buildReport(baseline.dir));
  assert.equal(cmp.regression, true);
  assert.deepEqual(
    cmp.rows.map((r) => [r.config, r.verdict, r.flags[0]]),
    [
      ['single', 'regression', 'not comparable: 400 ev/s at batch 1 now, 200 ev/s at batch 1 in the baseline'],
      ['batched', 'regression', 'missing now: the baseline measured it, this campaign did not'],
    ],
  );
});

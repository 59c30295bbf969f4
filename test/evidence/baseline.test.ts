// The weekly regression check: `rig report NEW --baseline OLD` flags a configuration that lost
// passes or whose p99 or p50 got worse by the comparison that knows noise (lib/protocol/compare.ts:
// the rank interval of the shift, from the repeats themselves), and exits 1 so a schedule can alert;
// a rerun of the same rig (other random draws) passes, with no tolerance.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildReport, compareWithBaseline, comparisonTable, renderHtml, renderMarkdown } from '../../lib/evidence/report';
import { rig } from '../harness/rig-cli';
import { makeFixtureCampaign, type Fixture } from './fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-baseline-test-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const small = { repeats: 3, repeatSeconds: 30, ceiling: false, denominator: false } as const;
const five = { ...small, repeats: 5 } as const;
let baseline: Fixture;
let rerun: Fixture;
let slower: Fixture;
let lostPass: Fixture;
let baseline5: Fixture;
let slower5: Fixture;

before(async () => {
  baseline = await makeFixtureCampaign({ seed: 101, root, campaignId: 'week-1', ...small });
  rerun = await makeFixtureCampaign({ seed: 202, root, campaignId: 'week-2', start: '2026-08-23T09:00:00.000Z', ...small });
  // Planted regressions: every request 60 % slower; or one repeat of `single` dropping requests.
  slower = await makeFixtureCampaign({ seed: 303, root, campaignId: 'week-3-slower', start: '2026-08-30T09:00:00.000Z', latencyFactor: 1.6, ...small });
  lostPass = await makeFixtureCampaign({ seed: 404, root, campaignId: 'week-3-lost-pass', start: '2026-08-30T09:00:00.000Z', plans: [{ config: 'single', repeat: 2, drops: 12 }], ...small });
  // The same two weeks at five repeats a side: enough for a 95 % rank interval.
  baseline5 = await makeFixtureCampaign({ seed: 111, root, campaignId: 'week-1-five', ...five });
  slower5 = await makeFixtureCampaign({ seed: 313, root, campaignId: 'week-3-slower-five', start: '2026-08-30T09:00:00.000Z', latencyFactor: 1.6, ...five });
});

test('a rerun of the same rig passes with no tolerance: three repeats of noise are not a regression', async () => {
  const same = await makeFixtureCampaign({ seed: 101, root, campaignId: 'week-1-again', start: '2026-08-23T09:00:00.000Z', ...small });
  const exact = compareWithBaseline(await buildReport(same.dir), await buildReport(baseline.dir));
  assert.equal(exact.regression, false, exact.summary);
  assert.deepEqual(exact.rows.map((r) => `${r.config}:${r.verdict}`), ['single:unchanged', 'batched:unchanged']);
  // Other random draws of the same rig: the old exact rule flagged this (single's p99 median 5.7 ms
  // outside the baseline's 5.5–5.6 ms) unless given 5 % of tolerance.
  const noisy = compareWithBaseline(await buildReport(rerun.dir), await buildReport(baseline.dir));
  assert.equal(noisy.regression, false, noisy.summary);
  assert.deepEqual(noisy.rows.map((r) => `${r.config}:${r.verdict}`), ['single:unchanged', 'batched:unchanged']);
  const p99 = noisy.rows[0].comparison!.figures.find((f) => f.figure === 'p99_ms')!;
  // Six figures share the 5 %: each interval is at 1 − 5 %/6, which 3 vs 3 cannot reach, and the
  // page says no change of any size could have shown.
  assert.equal(p99.words, 'no difference we can see; 3 vs 3 repeats can show no change at this level (99.2 %), however large');
  assert.equal(p99.shift!.interval, null);
  assert.equal(p99.detectable!.absolute, null);
  assert.deepEqual(noisy.rows[0].comparison!.correction, { method: 'benjamini-hochberg', figures: 6, rejected: 0, level: 1 - 0.05 / 6 });
  const res = await rig(['report', rerun.dir, '--baseline', baseline.dir]);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stderr, /No regression against baseline week-1 \(2026-08-16\): 2 configurations compared\.\n/);
  assert.match(res.stdout, /## Compared with the baseline\n\nNo regression/);
  // The page: medians with min–max on each side, the difference, the verdict and the method.
  assert.match(res.stdout, /\| configuration \| figure \| baseline: median \(min–max\) \| now: median \(min–max\) \| difference \(now − baseline\), interval \| verdict \| method \|/);
  assert.match(res.stdout, /\| single \| p99 \| [\d.]+ ms( \([\d.]+–[\d.]+\))?, 3 repeats \| [\d.]+ ms( \([\d.]+–[\d.]+\))?, 3 repeats \| [+−±][\d.]+ ms \([+−±]\d+ %\); interval none \(too few repeats\) \| no difference we can see; 3 vs 3 repeats can show no change at this level \(99\.2 %\), however large \| Mann–Whitney: 3 vs 3 repeats is too few for a 99\.2 % interval \(fewest 5 vs 5\), p = [\d.]+ \|/);
  assert.match(res.stdout, /\| single \| passed \| 3\/3 \| 3\/3 \| — \| no pass lost \| counts \|/);
  assert.match(res.stdout, /exact Mann–Whitney \(Wilcoxon rank-sum\) confidence interval/);
  assert.match(res.stdout, /corrected by Benjamini–Hochberg at 5 %/);
});

test('three repeats cannot see even a 60 % slowdown, and the page says why; five repeats flag it and exit 99 (NOT-HELD)', async () => {
  const three = compareWithBaseline(await buildReport(slower.dir), await buildReport(baseline.dir));
  assert.equal(three.regression, false, three.summary);
  const p99 = three.rows[0].comparison!.figures.find((f) => f.figure === 'p99_ms')!;
  assert.ok(p99.difference! > 2, `p99 moved ${p99.difference} ms`);
  assert.equal(p99.words, 'no difference we can see; 3 vs 3 repeats can show no change at this level (99.2 %), however large');

  const res = await rig(['report', slower5.dir, '--baseline', 'week-1-five'], { RIG_RESULTS: root });
  assert.equal(res.code, 99, res.stderr);
  assert.match(res.stderr, /REGRESSION against baseline week-1-five: single \(p50 worse: median [\d.]+ ms now, [\d.]+ ms in the baseline \(\+[\d.]+ ms, interval \+[\d.]+ to \+[\d.]+ ms\); p99 worse: median [\d.]+ ms now/);
  assert.match(res.stderr, /; batched \(p50 worse: /);
  assert.match(res.stdout, /\| single \| REGRESSION \| 5\/5 \| 5\/5 \|/);
  assert.match(res.stdout, /\| single \| p99 \| [^|]+, 5 repeats \| [^|]+, 5 repeats \| \+[\d.]+ ms \(\+\d+ %\); interval \+[\d.]+ to \+[\d.]+ ms \| worse \| Mann–Whitney 9\d\.\d % interval \(5 vs 5\), p = 0\.00\d \|/);
  // --tolerance is the smallest difference that counts: 5 % does not excuse 60 %, 80 % does.
  const tolerant = await rig(['report', slower5.dir, '--baseline', 'week-1-five', '--tolerance', '5', '--format', 'json'], { RIG_RESULTS: root });
  assert.equal(tolerant.code, 99, 'still a regression with 5 %');
  assert.equal((JSON.parse(tolerant.stdout) as { baseline: { tolerance_pct: number } }).baseline.tolerance_pct, 5);
  const lenient = compareWithBaseline(await buildReport(slower5.dir), await buildReport(baseline5.dir), { tolerancePct: 80 });
  assert.equal(lenient.regression, false, lenient.summary);
  const lenientP99 = lenient.rows[0].comparison!.figures.find((f) => f.figure === 'p99_ms')!;
  assert.match(lenientP99.words, /^no difference beyond 80 % we can see; with 5 repeats a side at this noise, a change under \d+ % would not show$/);
  assert.ok(lenientP99.detectable!.pct! > 80, 'the bar is part of what a change must clear');
  // The MDE reaches the JSON, the Markdown and the HTML page.
  const json = JSON.parse(tolerant.stdout) as { baseline: { rows: Array<{ comparison: { figures: Array<{ figure: string; verdict: string; detectable?: { pct: number | null; power: number } }> } }> } };
  const quiet = json.baseline.rows[0].comparison.figures.filter((f) => f.verdict === 'no-difference');
  assert.ok(quiet.length > 0 && quiet.every((f) => f.detectable?.power === 0.8), JSON.stringify(quiet));
  const lm = await buildReport(slower5.dir, { baselineDir: baseline5.dir, tolerancePct: 80 });
  assert.ok(renderMarkdown(lm).includes(lenientP99.words), 'the Markdown page carries the MDE words');
  assert.ok(renderHtml(lm).includes('a change under'), 'the HTML page carries the MDE words');
  const bad = await rig(['report', slower.dir, '--tolerance', '5']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--tolerance applies to --baseline/);
});

test('a configuration that lost a pass is flagged, the others are not; a faster week is flagged without alerting', async () => {
  const m = await buildReport(lostPass.dir, { baselineDir: baseline.dir });
  const cmp = m.baseline!;
  assert.equal(cmp.regression, true);
  const single = cmp.rows.find((r) => r.config === 'single')!;
  assert.equal(single.verdict, 'regression');
  assert.ok(single.flags.includes('lost passes: 2/3 now, 3/3 in the baseline'), single.flags.join('; '));
  assert.equal(cmp.rows.find((r) => r.config === 'batched')!.verdict, 'unchanged');
  const md = renderMarkdown(m);
  assert.match(md, /\| single \| REGRESSION \| 2\/3 \| 3\/3 \|/);
  assert.match(md, /\| single \| passed \| 3\/3 \| 2\/3 \| — \| lost passes \| counts \|/);
  assert.match(md, /\| single \| p99 \| [^|]+, 3 repeats \| [^|]+, 2 repeats \|/, 'the failed repeat is in no median');
  // What each side waited on stands under its figures (the fixtures' DB samples: CPU and WAL waits).
  assert.match(md, /\| single \| what requests waited on \| [^|]*% \([\d,]+\)[^|]* \| [^|]*% \([\d,]+\)[^|]* \| — \| — \| DB sampler, share of the service's active client backends \(backend-samples\) \|/);
  assert.match(renderHtml(m), /<table id="baseline-figures">/);
  // Improvements are flagged but do not alert: the baseline against the slow week.
  const faster = compareWithBaseline(await buildReport(baseline5.dir), await buildReport(slower5.dir));
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
    cmp.rows.map((r) => [r.config, r.verdict, r.flags[0], r.comparison]),
    [
      ['single', 'regression', 'not comparable: 400 ev/s at batch 1 now, 200 ev/s at batch 1 in the baseline', null],
      ['batched', 'regression', 'missing now: the baseline measured it, this campaign did not', null],
    ],
  );
});

test('comparisonTable: any two configurations of the model, control first (the shape variants will use)', async () => {
  const [c, v] = await Promise.all([buildReport(baseline5.dir), buildReport(slower5.dir)]);
  const t = comparisonTable(c.configurations[1], v.configurations[1], { labels: { control: 'control', variant: 'treatment' } });
  assert.deepEqual(t.header, ['configuration', 'figure', 'control: median (min–max)', 'treatment: median (min–max)', 'difference (treatment − control), interval', 'verdict', 'method']);
  assert.deepEqual(
    t.rows.map((r) => [r.cells[1], r.cells[5]]),
    [
      ['passed', 'no pass lost'],
      ['p50', 'worse'],
      ['p99', 'worse'],
      ['worst 10-s p99', 'worse'],
      ['freeze-seconds', 'no difference we can see; these repeats did not vary, so any change would have shown'],
      ['drops', 'no difference we can see; these repeats did not vary, so any change would have shown'],
      // The fixture draws WAL per event afresh per campaign (noise with no planted shift): not asserted.
      ['WAL per event', t.rows[6].cells[5]],
    ],
  );
  assert.match(t.rows[6].cells[6], /^Mann–Whitney 9\d\.\d % interval \(5 vs 5\), p = [\d.e−-]+$/);
  // Every repeat has host samples (steal 0): p50 is compared over the seconds of low steal, and says so.
  assert.match(t.rows[1].cells[6], /^Mann–Whitney 9\d\.\d % interval \(5 vs 5\), p = [\d.e−-]+; p50 over the seconds of host CPU steal under 2 %$/);
});

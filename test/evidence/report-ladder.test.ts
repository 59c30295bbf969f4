// test-mode: unit
// A ladder shows its knee: every rung charted by offered rate (the ones that did not hold included,
// with their own figures, and marked), the first rung that did not hold named, and the database's
// wait profile of the rungs around it beside it. A campaign without a ladder has none of it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildReport, pageCharts, renderHtml, renderJson, renderMarkdown, type ReportModel } from '../../lib/evidence/report';
import { makeFixtureCampaign } from './fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-report-ladder-test-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const ladderRun = { ceiling: false, denominator: false } as const;
let m: ReportModel;

before(async () => {
  // rung-2000 drops requests in one repeat while its commits stall (the WAL waits pile up): the knee.
  // rung-4000 drops in both. Below them, every repeat holds.
  const lad = await makeFixtureCampaign({
    seed: 37,
    root,
    campaignId: 'ladder-knee',
    ...ladderRun,
    ladder: { rates: [500, 1000, 2000, 4000], batch: 10, rungs: 2, rungSeconds: 30 },
    plans: [
      { config: 'rung-2000', repeat: 2, drops: 30, stallsAt: [4, 9, 14, 19, 24] },
      { config: 'rung-4000', repeat: 1, drops: 60 },
      { config: 'rung-4000', repeat: 2, drops: 90 },
    ],
  });
  m = await buildReport(lad.dir);
});

test('the model: every rung by offered rate with figures over its finished repeats, and the knee', () => {
  const l = m.ladder!;
  assert.deepEqual(
    l.rungs.map((r) => `${r.name}:${r.status}:${r.passed}:${r.repeats}:${r.dropped}`),
    ['rung-500:held:2/2:2:0', 'rung-1000:held:2/2:2:0', 'rung-2000:did-not-hold:1/2:2:30', 'rung-4000:did-not-hold:0/2:2:150'],
  );
  // The At-a-glance medians are over passing repeats: rung-4000 has none there; the ladder has both.
  const four = m.configurations.find((c) => c.name === 'rung-4000')!;
  assert.equal(four.summary.figures.p99_ms, null);
  const rung = l.rungs[3];
  assert.equal(rung.p99_ms!.n, 2);
  assert.equal(rung.delivered_evps!.n, 2);
  assert.ok(rung.delivered_evps!.max < 4000, `delivered ${rung.delivered_evps!.max}`);
  assert.deepEqual(l.knee, {
    rung: 'rung-2000',
    offered_evps: 2000,
    last_held: 'rung-1000',
    reasons: [l.rungs[2].reasons[0]],
    around: ['rung-1000', 'rung-2000', 'rung-4000'],
  });
  assert.match(l.knee!.reasons[0], /^r2: dropped: 30 of \d+ requests dropped/);
  // The stalls show in the knee's wait profile: more of its sampled work waits on WALSync.
  const share = (name: string) => l.rungs.find((r) => r.name === name)!.waits.top.find((w) => w.event === 'IO:WALSync')?.share ?? 0;
  assert.ok(share('rung-2000') > share('rung-1000'), `WALSync ${share('rung-2000')} at the knee, ${share('rung-1000')} below it`);
  assert.equal(l.rungs[2].waits.sampled, 2);
});

test('the page names the knee, tables every rung (marked) and sets the wait profile around it beside it', () => {
  const md = renderMarkdown(m);
  assert.match(md, /### The ladder: where it stops holding\n\nThe first rung that did not hold: rung-2000, 2,000 ev\/s offered at batch 10, passed 1\/2 \(r2: dropped: 30 of \d+ requests dropped[^)]*\)\)\. The last rung below it that held: rung-1000, 1,000 ev\/s\./);
  assert.match(md, /\| rung \| offered ev\/s \| delivered ev\/s \| delivered \/ offered \| p50 \| p99 \| dropped \| passed \| status \|/);
  assert.match(md, /\| rung-500 \| 500 \| 500 \| 100\.0 % \| [\d.]+ ms[^|]* \| [\d.]+ ms[^|]* \| 0 \| 2\/2 \| held \|/);
  assert.match(md, /\| rung-2000 \| 2,000 \| [\d,]+ \([\d,]+–[\d,]+\) \| [\d.]+ % \| [\d.]+ ms[^|]* \| [\d.]+ ms[^|]* \| 30 \| 1\/2 \| DID NOT HOLD \(the knee\) \|/);
  assert.match(md, /\| rung-4000 \| 4,000 \| [\d,]+ \([\d,]+–[\d,]+\) \| [\d.]+ % \| [\d.]+ ms[^|]* \| [\d.]+ ms[^|]* \| 150 \| 0\/2 \| DID NOT HOLD \|/);
  assert.match(md, /#### The database around the knee\n\n\| rung \| offered ev\/s \| status \| from \| what requests waited on \(share of the service's active client backends sampled, with their count\) \|\n\|---\|---\|---\|---\|---\|\n\| rung-1000 \| 1,000 \| held \| 2 repeats, 2 with DB samples \| no wait event \(on CPU or waiting to run\) \d+ % \([\d,]+\), .*; [\d,]+ backend-samples in [\d,]+ snapshots \|\n\| rung-2000 \(the knee\) \| 2,000 \| DID NOT HOLD \| 2 repeats, 2 with DB samples \| .*IO:WALSync \d+ % \([\d,]+\).*\n\| rung-4000 \| 4,000 \| DID NOT HOLD \|/);
  const html = renderHtml(m);
  assert.match(html, /<h3 id="ladder">The ladder: where it stops holding<\/h3><p class="failed">The first rung that did not hold: rung-2000/);
  assert.match(html, /<div class="chart" id="chart-0" data-kind="ladder-throughput" data-owner="ladder"><\/div><div class="chart" id="chart-1" data-kind="ladder-latency" data-owner="ladder"><\/div>/);
  assert.match(html, /<table id="ladder-table">/);
  assert.match(html, /<table id="knee-waits-table">/);
});

test('the charts: one point per rung by offered rate, the ones that did not hold marked, a line at the knee', () => {
  const [tp, lat] = pageCharts(m).get('ladder')!.map((c) => c.option);
  type Series = { name: string; data: Array<[number, number]>; markLine?: { data: Array<{ xAxis: number }>; label: { formatter: string } } };
  const series = (o: Record<string, unknown>) => o.series as Series[];
  const byName = (o: Record<string, unknown>, n: string) => series(o).find((s) => s.name === n)!;
  assert.deepEqual(byName(tp, 'offered').data, [[500, 500], [1000, 1000], [2000, 2000], [4000, 4000]]);
  assert.deepEqual(byName(tp, 'delivered').data.map(([x]) => x), [500, 1000, 2000, 4000]);
  assert.deepEqual(byName(tp, 'did not hold').data.map(([x]) => x), [2000, 4000]);
  assert.deepEqual(byName(tp, 'delivered').markLine!.data, [{ xAxis: 2000 }]);
  assert.equal(byName(lat, 'p99').markLine!.label.formatter, 'first that did not hold: rung-2000');
  assert.deepEqual(byName(lat, 'p50').data.map(([x]) => x), [500, 1000, 2000, 4000]);
  assert.deepEqual((lat.yAxis as { type: string }).type, 'log');
  // The JSON model carries the ladder too.
  assert.equal((JSON.parse(renderJson(m)) as ReportModel).ladder!.knee!.rung, 'rung-2000');
});

test('a ladder whose every rung held says there is no knee within the rates offered', async () => {
  const held = await makeFixtureCampaign({ seed: 41, root, campaignId: 'ladder-held', ...ladderRun, ladder: { rates: [500, 1000], batch: 10, rungs: 2, rungSeconds: 30 } });
  const h = await buildReport(held.dir);
  assert.equal(h.ladder!.knee, null);
  const md = renderMarkdown(h);
  assert.match(md, /No knee within the rates offered: no rung failed its gate, up to 1,000 ev\/s offered \(rung-1000, held\)\./);
  assert.ok(!md.includes('#### The database around the knee'));
  assert.ok(!pageCharts(h).get('ladder')!.some((c) => JSON.stringify(c.option).includes('markLine')));
});

test('a ladder with variants: each variant climbs its own ladder, and the page sets their knees side by side', async () => {
  // The hot-row finding's shape: the control holds to 2,000 ev/s, the treatment's knee is at 1,000.
  const v = await makeFixtureCampaign({
    seed: 43,
    root,
    campaignId: 'ladder-variants',
    ...ladderRun,
    ladder: { rates: [500, 1000, 2000], batch: 10, rungs: 1, rungSeconds: 30 },
    variants: { order: 'blocks', control: { name: 'per-minute' }, treatments: [{ name: 'every-request', service: { lastUsed: 'every-request' } }] },
    plans: [
      { config: 'rung-1000.every-request', repeat: 1, drops: 40 },
      { config: 'rung-2000.every-request', repeat: 1, drops: 80 },
    ],
  });
  const r = await buildReport(v.dir);
  assert.equal(r.ladder, undefined);
  assert.deepEqual(
    r.variant_ladders!.map((l) => [l.variant, l.ladder!.rungs.map((x) => `${x.name}:${x.status}`), l.ladder!.knee?.rung ?? null]),
    [
      ['per-minute', ['rung-500.per-minute:held', 'rung-1000.per-minute:held', 'rung-2000.per-minute:held'], null],
      ['every-request', ['rung-500.every-request:held', 'rung-1000.every-request:did-not-hold', 'rung-2000.every-request:did-not-hold'], 'rung-1000.every-request'],
    ],
  );
  assert.deepEqual(r.variants!.knees, [
    { variant: 'per-minute', where: 'none up to 2,000 ev/s' },
    { variant: 'every-request', where: 'at 1,000 ev/s (last held: 500 ev/s)' },
  ]);
  const md = renderMarkdown(r);
  assert.match(md, /### The ladder of per-minute: where it stops holding\n\nNo knee within the rates offered/);
  assert.match(md, /### The ladder of every-request: where it stops holding\n\nThe first rung that did not hold: rung-1000\.every-request/);
  assert.match(md, /The knee \(first rung that did not hold\): per-minute none up to 2,000 ev\/s; every-request at 1,000 ev\/s \(last held: 500 ev\/s\)\./);
  // Each ladder has its own charts, keyed by variant.
  assert.deepEqual([...pageCharts(r).keys()].filter((k) => k.startsWith('ladder')), ['ladder:per-minute', 'ladder:every-request']);
  assert.match(renderHtml(r), /<h3 id="ladder-every-request">The ladder of every-request: where it stops holding<\/h3>/);
});

test('a rung that failed on the instrument\'s gate alone is not judged, and is not the knee', async () => {
  const lateLadder = await makeFixtureCampaign({
    seed: 47,
    root,
    campaignId: 'ladder-late',
    ...ladderRun,
    ladder: { rates: [500, 1000, 2000], batch: 10, rungs: 1, rungSeconds: 30 },
    plans: [
      { config: 'rung-500', repeat: 1, lateMs: 30 },
      { config: 'rung-2000', repeat: 1, drops: 40 },
    ],
  });
  const l = (await buildReport(lateLadder.dir)).ladder!;
  assert.deepEqual(l.rungs.map((r) => `${r.name}:${r.status}`), ['rung-500:instrument-late', 'rung-1000:held', 'rung-2000:did-not-hold']);
  assert.equal(l.knee!.rung, 'rung-2000');
  assert.equal(l.knee!.last_held, 'rung-1000');
  const md = renderMarkdown(await buildReport(lateLadder.dir));
  assert.match(md, /Not judged, because the generator sent late \(the instrument's gate alone failed\): rung-500\./);
  assert.match(md, /\| rung-500 \| 500 \| .* \| not judged \(the generator sent late\) \|/);
});

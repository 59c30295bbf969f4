// The report: rebuilt from the folder alone, byte-identical for the same evidence, stopped by any
// file that differs from the manifest, and honest about every repeat that is not a clean pass.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildManifest, EvidenceIntegrityError, verifyManifest } from '../../lib/evidence';
import { buildReport, renderHtml, renderJson, renderMarkdown, renderAtAGlanceText, type ReportModel } from '../../lib/evidence/report';
import { rig } from '../harness/rig-cli';
import { ONE_CONFIG, makeFixtureCampaign, type Fixture } from './fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-report-test-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let fx: Fixture;
let model: ReportModel;

before(async () => {
  fx = await makeFixtureCampaign({
    seed: 11,
    root,
    plans: [
      { config: 'single', repeat: 2, stallsAt: [30] },
      { config: 'single', repeat: 3, drift: true, stealPct: 6.5 },
      { config: 'single', repeat: 4, drops: 5 },
      { config: 'batched', repeat: 2, interruptedFirst: true },
      { config: 'batched', repeat: 3, reconcile: 'missing' },
      { config: 'batched', repeat: 4, reconcile: 'rows-lost' },
      { config: 'batched', repeat: 5, tamperVerdict: true },
    ],
  });
  model = await buildReport(fx.dir);
});

function copyTree(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true });
}

test('the same evidence gives a byte-identical report, in every format, wherever the folder lives', async () => {
  const again = await buildReport(fx.dir);
  assert.equal(renderMarkdown(again), renderMarkdown(model));
  assert.equal(renderHtml(again), renderHtml(model));
  assert.equal(renderJson(again), renderJson(model));
  // Copied elsewhere under another folder name: still the same bytes (nothing machine- or path-bound).
  const copy = path.join(root, 'copied-elsewhere');
  copyTree(fx.dir, copy);
  assert.equal(renderHtml(await buildReport(copy)), renderHtml(model));
  // No "generated at": the only dates are the evidence's own.
  const md = renderMarkdown(model);
  const today = new Date().toISOString().slice(0, 10);
  assert.ok(!md.includes(today) || today === '2026-08-16');
  assert.match(md, /run on 2026-08-16/);
  // Through the command line, twice.
  const a = await rig(['report', fx.dir]);
  const b = await rig(['report', fx.dir]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(a.stdout, b.stdout);
  assert.equal(a.stdout, renderMarkdown(model));
  // Reading the evidence changed nothing in it.
  assert.equal((await verifyManifest(fx.dir)).ok, true);
  // A campaign without a ladder has no ladder in its model, nor on its page.
  assert.ok(!('ladder' in model));
  assert.ok(!md.includes('The ladder') && !renderHtml(model).includes('ladder-'));
});

test('one changed byte in a sample stream stops the report, naming that file', async () => {
  const copy = path.join(root, 'tampered');
  copyTree(fx.dir, copy);
  const rel = 'repeats/single/r2-a1/samples.csv.gz';
  const file = path.join(copy, rel);
  const bytes = fs.readFileSync(file);
  bytes[Math.floor(bytes.length / 2)] ^= 0x01;
  fs.writeFileSync(file, bytes);
  await assert.rejects(buildReport(copy), (err: unknown) => err instanceof EvidenceIntegrityError && err.files.length === 1 && err.files[0] === rel);
  const res = await rig(['report', copy, '--format', 'html']);
  assert.equal(res.code, 1, 'failed: the evidence does not match');
  assert.equal(res.stdout, '', 'nothing is reported');
  assert.match(res.stderr, new RegExp(`${rel.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: sha256 [0-9a-f]{64} does not match the manifest`));
});

test('failed, unreconciled and interrupted repeats appear as such, and never in a median', () => {
  const single = model.configurations.find((c) => c.name === 'single')!;
  assert.deepEqual(single.repeats.map((r) => `${r.repeat}-${r.attempt}:${r.status}`), ['1-1:passed', '2-1:passed', '3-1:failed', '4-1:failed', '5-1:passed']);
  assert.match(single.repeats[2].reasons.join(), /^drift: x\d/);
  // judged against its plan (load.json's, sealed with the stream): the dropped seconds are short, named
  assert.match(single.repeats[3].reasons.join('; '), /^not delivered: delivered 11995 of 12000 scheduled requests \(200 ev\/s, batch 1, 60 s\); 5 short seconds at 20, 24, 28, 32, 36; dropped: 5 of \d+ requests dropped/);
  assert.equal(single.summary.label, '3/5');
  assert.equal(single.published, true);
  assert.equal(single.repeats[1].report!.freeze_seconds.length, 1, 'the planted stall is a freeze-second');

  const batched = model.configurations.find((c) => c.name === 'batched')!;
  assert.deepEqual(batched.repeats.map((r) => `${r.repeat}-${r.attempt}:${r.status}`), ['1-1:passed', '2-1:interrupted', '2-2:passed', '3-1:not-published', '4-1:not-published', '5-1:not-published']);
  const byRepeat = (k: number, a = 1) => batched.repeats.find((r) => r.repeat === k && r.attempt === a)!;
  assert.match(byRepeat(2).reasons[0], /worker lost/);
  assert.match(byRepeat(3).reasons[0], /^not reconciled: no reconcile\.json/);
  assert.match(byRepeat(4).reasons.join(), /not reconciled: rows written \d+ != events claimed \d+ \(missing 30\)/);
  assert.match(byRepeat(5).reasons.join(), /verdict\.json records p99 [\d.]+ ms, the samples give [\d.]+ ms/);
  assert.equal(batched.summary.label, '2/5', 'not-published repeats count in M, never in N; the interrupted attempt in neither');
  assert.equal(batched.summary.interrupted, 1);
  assert.equal(batched.published, false);
  assert.equal(batched.why_not.length, 3);

  // Medians and ranges are over the passing repeats only.
  for (const c of [single, batched]) {
    const passing = c.repeats.filter((r) => r.status === 'passed').map((r) => r.report!.p99_ms as number).sort((x, y) => x - y);
    const f = c.summary.figures.p99_ms!;
    assert.equal(f.n, passing.length);
    assert.equal(f.min, passing[0]);
    assert.equal(f.max, passing[passing.length - 1]);
    const mid = passing.length >> 1;
    assert.equal(f.median, passing.length % 2 ? passing[mid] : (passing[mid - 1] + passing[mid]) / 2);
  }

  const md = renderMarkdown(model);
  assert.match(md, /\| batched: 1,000 ev\/s offered \| not published \|/);
  assert.match(md, /\| r2-a1 \| INTERRUPTED \|/);
  assert.match(md, /\| r3-a1 \| NOT PUBLISHED \|/);
  assert.match(md, /\| r3-a1 \| FAIL \|.*drift: x/);
  assert.match(md, /## Not published\n\n- configuration batched: r3: not reconciled/);
  assert.match(md, /- repeat batched r4-a1: not reconciled: rows written/);
  assert.match(md, /2\/5 \(\+1 interrupted, not counted\)/);
});

test('a failed repeat names the host CPU steal beside its reason; the verdict stays FAIL and the counts do not move', () => {
  const single = model.configurations.find((c) => c.name === 'single')!;
  const r3 = single.repeats.find((r) => r.repeat === 3)!;
  assert.equal(r3.status, 'failed');
  assert.deepEqual(r3.host?.steal_pct, { median: 0, max: 6.5 });
  assert.equal(single.summary.label, '3/5', 'a disturbed host never turns a failure into an uncounted repeat');
  const md = renderMarkdown(model);
  assert.match(md, /\| r3-a1 \| FAIL \|.*\| 6\.5 % \| drift: x[^|]*; host CPU steal up to 6\.5 % \(median 0\.0 %\) during this repeat/);
  assert.match(md, /\| r1-a1 \| PASS \|.*\| 0\.0 % \|  ?\|/, 'a passed repeat shows its steal, with no note');
  assert.match(md, /\| host CPU steal \| max 6\.5 % over \d+ sampled repeats; at or over 2 % in single r3-a1 \(6\.5 %\) \|/);
  assert.match(renderAtAGlanceText(model), /single r3-a1 failed: drift: x[^\n]*; host CPU steal up to 6\.5 %/);
});

test('the page carries the spec\'s sections: conditions with cost, the ceiling beside its denominator, what this does not show', () => {
  const md = renderMarkdown(model);
  for (const h of ['## Result', '## At a glance', '### Closed-loop ceiling and the database\'s own floor', '### Reads under load', '### What stops it', '## Method', '## Conditions', '## Runs', '## Not published', '## What this does not show']) {
    assert.ok(md.includes(`\n${h}\n`), `missing section ${h}`);
  }
  assert.match(md, /\| cost \| \$0\.50\/hour × 0\.\d+ h \(provision start to teardown end\) = \$0\.\d\d \|/);
  assert.match(md, /\| database parameters \(rig\.json\) \| server_version=16\.4, log_autovacuum_min_duration=0, log_checkpoints=on \|/);
  // The fixture's DB samples predate the settings read back: the page says so rather than show nothing.
  assert.match(md, /\| database settings read back \| not in the evidence \(written before the DB sampler read pg_settings\) \|/);
  const withSettings = {
    ...model,
    conditions: {
      ...model.conditions,
      settings_read_back: [
        { repeats: ['single r1-a1'], named: [['data_checksums', 'off'], ['wal_compression', 'off'], ['wal_segment_size', '16MB']] as Array<[string, string]>, changed: [{ name: 'shared_buffers', value: '32768 8kB', source: 'configuration file' }] },
        { repeats: ['single.trt r1-a1', 'single.trt r2-a1'], named: [['wal_compression', 'lz4']] as Array<[string, string]>, changed: [] },
      ],
    },
  };
  const settingsMd = renderMarkdown(withSettings);
  assert.match(settingsMd, /\| database settings read back \(single r1-a1\) \| data_checksums=off, wal_compression=off, wal_segment_size=16MB \|/);
  assert.match(settingsMd, /\| settings not at their default \(single r1-a1\) \(pg_settings source\) \| shared_buffers=32768 8kB \(configuration file\) \|/);
  assert.match(settingsMd, /\| database settings read back \(2 repeats, single\.trt r1-a1 …\) \| wal_compression=lz4 \|/);
  // The legs in the order they ran; a legs.json written before issue 31 says they began unsettled.
  assert.match(md, /\| 2\. pgbench owner-1row: one-row INSERTs per transaction, as the owner .*; began after no VACUUM or CHECKPOINT\) \| 52,700 rows\/s \(105 transactions\/s\) \| \d+ % \|/);
  assert.match(md, /\| 3\. pgbench rls-1row: .* \| 41,000 rows\/s .* \| \d+ % \|/);
  // The commit-rate leg beside the batch legs: "the database alone commits N/s", with no ratio (another unit).
  assert.match(md, /\| 1\. pgbench owner-commit: one-row transactions \(batch 1\), as the owner: the database's own commit rate \(\d+ clients, 1 row\/transaction; began after no VACUUM or CHECKPOINT\) \| 7,184 one-row commits\/s \| — \|/);
  // At a glance, one ratio of one unit: events/s over the multi-row leg's rows/s.
  assert.match(md, /Closed-loop ceiling \(a ceiling, not a service level\): [\d,]+ ev\/s at batch 500; \d+ % of pgbench owner-multirow's rows\/s\./);
  assert.doesNotMatch(md, /% of pgbench owner-1row|% of pgbench owner-commit|% of pgbench rls-1row/);
  assert.match(md, /\| single \| aggregate \| [\d.]+ ms/);
  assert.match(md, /IO:WALSync \d+ %/);
  assert.match(md, /1,\d{3} B .*7\.\d records/);
  assert.match(md, /- Steady state only\./);
  assert.match(md, /"Sustained" means 5 × 1 min with a 5 s cool-down between/);
  assert.equal(model.dates.days.join(), '2026-08-16');
  const text = renderAtAGlanceText(model);
  assert.match(text, /^fixture \(fixture-11\): at a glance\n\nconfiguration +events\/s/);
  assert.match(text, /batched not published: r3: not reconciled/);
});

test('the ceiling is set beside the legs of its own row shape only', async () => {
  const copy = path.join(root, 'other-shape');
  copyTree(fx.dir, copy);
  const legsFile = path.join(copy, 'denominator/legs.json');
  const legs = JSON.parse(fs.readFileSync(legsFile, 'utf8')) as { legs: Array<{ batch: number; rows_verified: boolean }> };
  // legs[0], the commit-rate leg, is one row per transaction: no denominator for a batch-500 ceiling
  legs.legs[1].batch = 1; // nor is any other leg of one row per transaction
  legs.legs[2].rows_verified = false; // nor is a leg whose rows were not found
  fs.writeFileSync(legsFile, JSON.stringify(legs));
  fs.rmSync(path.join(copy, 'manifest.json'));
  await buildManifest(copy);
  const m = await buildReport(copy);
  assert.deepEqual(m.denominator!.legs.map((l) => l.ratio === null), [true, true, true, false]);
  assert.ok(m.unpublished.some((u) => u.what === 'denominator leg rls-1row'));
  assert.ok(m.ceiling!.report!.delivered_rate > 0);
  assert.equal(m.denominator!.legs[3].ratio, Math.round((m.ceiling!.report!.delivered_rate / 150_000) * 1000) / 1000);
});

test('a ratio only between figures of one unit: the commit leg (commits/s) gets none even at the ceiling\'s row shape; legs that began settled say so', async () => {
  const copy = path.join(root, 'batch-one');
  copyTree(fx.dir, copy);
  const legsFile = path.join(copy, 'denominator/legs.json');
  const legs = JSON.parse(fs.readFileSync(legsFile, 'utf8')) as { legs: Array<Record<string, unknown>> };
  for (const [i, l] of legs.legs.entries()) {
    l.batch = 500; // every leg of the ceiling's row shape, the commit leg too
    l.order = i + 1;
    l.settled_before = { vacuum_s: 0.1, checkpoint: { why: `before pgbench leg ${String(l.leg)}`, at: '2026-08-16T10:00:00Z', seconds: 0.2, buffers_written: 40, requested_before: 1, requested_after: 2, ...(i === 2 ? { error: 'permission denied' } : {}) } };
  }
  fs.writeFileSync(legsFile, JSON.stringify(legs));
  fs.rmSync(path.join(copy, 'manifest.json'));
  await buildManifest(copy);
  const m = await buildReport(copy);
  assert.equal(m.ceiling?.batch, 500);
  assert.equal(m.denominator!.legs.find((l) => l.leg === 'owner-commit')!.ratio, null, 'commits/s are not rows/s of the ceiling');
  assert.ok(m.denominator!.legs.filter((l) => l.leg !== 'owner-commit').every((l) => l.ratio !== null));
  const md = renderMarkdown(m);
  assert.match(md, /\| 1\. pgbench owner-commit: .*; began after a VACUUM and a CHECKPOINT\) \| [\d,]+ rows\/s \([\d,]+ transactions\/s\) \| — \|/);
  assert.match(md, /\| 3\. pgbench rls-1row: .*; began WITHOUT a CHECKPOINT \(permission denied\)\)/);
});

test('a rig priced by its target: the cost line has its source and what else the bill holds (the plan, the worst case)', async () => {
  const notes = ['2 public IPv4 addresses (one per node): $0.0100/hour', 'worst case, teardown failing and the rig running to its watchdog deadline (600 min): $13.02'];
  const priced = await makeFixtureCampaign({ seed: 5, root, campaignId: 'priced-rig', repeats: 1, repeatSeconds: 10, ...ONE_CONFIG, rigCost: { costPerHour: 1.3024, priceSource: 'price table 2026-12-01', costNotes: notes } });
  const md = renderMarkdown(await buildReport(priced.dir));
  assert.match(md, /\| cost \| \$1\.30\/hour \(prices: price table 2026-12-01\) × [\d.]+ h \(provision start to teardown end\) = \$[\d.]+\. 2 public IPv4 addresses \(one per node\): \$0\.0100\/hour; worst case, teardown failing .*\(600 min\): \$13\.02 \|/);
});

test('per repeat, the plan-based delivery, the schedule lag p99, the max lag, the late seconds and the corrected p99 stand beside the gated p99; a late generator fails "instrument late"', async () => {
  const late = await makeFixtureCampaign({
    seed: 17,
    root,
    campaignId: 'late-generator',
    repeats: 3,
    repeatSeconds: 20,
    ...ONE_CONFIG,
    plans: [
      { config: 'only', repeat: 2, lateMs: 40 },
      { config: 'only', repeat: 3, lateMs: 120 },
    ],
  });
  const m = await buildReport(late.dir);
  const [r1, r2, r3] = m.configurations[0].repeats;
  assert.equal(r1.status, 'passed');
  assert.ok(r1.report!.schedule_lag_p99_ms! < 1);
  assert.deepEqual(r1.report!.delivery, { scheduled: 2000, delivered: 2000, short_seconds: [], empty_seconds: [] });
  assert.equal(r2.status, 'failed');
  assert.ok(r2.report!.schedule_lag_p99_ms! >= 40 && r2.report!.co_p99_ms! > r2.report!.p99_ms! + 39);
  assert.match(r2.reasons.join('; '), /^instrument late: schedule lag p99 40\.\d+ ms > 10 ms \(10 % of the p99 limit 100 ms\), max 40\.\d+ ms <= 100 ms \(the p99 limit\);/);
  assert.deepEqual(r2.report!.late_seconds, []);
  // every request later than the 100-ms limit: every second is a late second
  assert.equal(r3.status, 'failed');
  assert.deepEqual(r3.report!.late_seconds, Array.from({ length: 20 }, (_, i) => i));
  assert.match(r3.reasons.join('; '), /max 120\.\d+ ms > 100 ms \(the p99 limit\), late seconds 0-19;/);
  // the latency plot has the corrected p99 (done - intended) per second beside the p99: 120 ms more
  assert.ok(r3.series!.co_p99_ms.every((x, i) => x !== null && x > (r3.series!.p99_ms[i] ?? 0) + 119));
  const md = renderMarkdown(m);
  assert.match(md, /\| repeat \| verdict \| delivered ev\/s \| delivered \/ planned \| p50 \| p99 \| schedule lag p99 \| max lag \| late seconds \| corrected p99 \| worst 10-s p99 \|/);
  assert.match(md, /\| r1-a1 \| PASS \| [\d,]+ \| 2,000 \/ 2,000 \| [\d.]+ ms \| [\d.]+ ms \| 0\.\d+ ms \| [\d.]+ ms \| 0 \| /);
  assert.match(md, /\| r2-a1 \| FAIL \| [\d,]+ \| 2,000 \/ 2,000 \| [\d.]+ ms \| [\d.]+ ms \| 40\.\d ms \| 40\.\d+ ms \| 0 \| [\d.]+ ms \| .*\| instrument late: schedule lag p99 40/);
  assert.match(md, /\| r3-a1 \| FAIL \| [\d,]+ \| 2,000 \/ 2,000 \| [\d.]+ ms \| [\d.]+ ms \| 120\.\d ms \| 120\.\d+ ms \| 20 \(0-19\) \| /);
  assert.match(md, /Delivery is judged against the plan the stream carries/);
  assert.match(renderHtml(m), /<th>delivered \/ planned<\/th><th>p50<\/th><th>p99<\/th><th>schedule lag p99<\/th><th>max lag<\/th><th>late seconds<\/th><th>corrected p99<\/th>/);
  assert.equal(m.configurations[0].summary.label, '1/3');
});

test('a repeat whose stream is short of its plan shows the short seconds on the page', async () => {
  const gap = await makeFixtureCampaign({ seed: 19, root, campaignId: 'short-seconds', repeats: 1, repeatSeconds: 20, ...ONE_CONFIG, plans: [{ config: 'only', repeat: 1, dropSeconds: [7] }] });
  const m = await buildReport(gap.dir);
  const [r1] = m.configurations[0].repeats;
  assert.equal(r1.status, 'failed');
  assert.deepEqual(r1.report!.delivery?.short_seconds, [7]);
  assert.match(r1.reasons[0], /^not delivered: delivered 1900 of 2000 scheduled requests \(500 ev\/s, batch 5, 20 s\); 1 short second at 7 \(1 empty: 7\)/);
  assert.match(renderMarkdown(m), /\| r1-a1 \| FAIL \| [\d,]+ \| 1,900 \/ 2,000; short s 7 \| /);
  // the throughput plot has the plan beside what was offered: second 7 offered nothing of its 100
  assert.equal(r1.series!.planned_rps![7], 100);
  assert.equal(r1.series!.offered_rps[7], 0);
  assert.match(renderHtml(m), /"name":"planned"/);
});

test('a ceiling with failed requests, or not reconciled, is "not a valid ceiling", and no ratio is computed from it', async () => {
  const failing = await makeFixtureCampaign({
    seed: 23,
    root,
    campaignId: 'ceiling-failed',
    repeats: 1,
    repeatSeconds: 20,
    probe: false,
    configurations: [{ name: 'only', eventsPerSecond: 500, batch: 5, p99LimitMs: 100 }],
    ceilingFailed: 3,
  });
  const m = await buildReport(failing.dir);
  assert.equal(m.ceiling!.status, 'invalid');
  assert.match(m.ceiling!.why.join('; '), /^failed: 3 of \d+ sent requests failed/);
  assert.equal(m.denominator!.ceiling_evps, null);
  assert.ok(m.denominator!.legs.length > 0 && m.denominator!.legs.every((l) => l.ratio === null), 'no ratio from an invalid ceiling');
  const md = renderMarkdown(m);
  assert.match(md, /\| closed-loop maximum, 8 workers, batch 500 \(not a service level\) \| not a valid ceiling: failed: 3 of \d+ sent requests failed \(no 2xx\) \| — \|/);
  assert.match(md, /^- Closed-loop ceiling: not a valid ceiling: failed: 3 of/m);
  assert.match(md, /^- closed-loop ceiling: not a valid ceiling: failed: 3 of/m);
  assert.match(md, /8 workers, batch 500, 30 s: not a valid ceiling\./);
  assert.doesNotMatch(md, /% of pgbench/);
  assert.doesNotMatch(md, /\| \d+ % \|/);

  // The fixture's valid ceiling, with its reconcile.json gone: not reconciled, so not a ceiling either.
  const copy = path.join(root, 'ceiling-unreconciled');
  copyTree(fx.dir, copy);
  fs.rmSync(path.join(copy, 'ceiling/r1-a1/reconcile.json'));
  fs.rmSync(path.join(copy, 'manifest.json'));
  await buildManifest(copy);
  const u = await buildReport(copy);
  assert.equal(model.ceiling!.status, 'measured', 'the fixture\'s own ceiling is valid');
  assert.ok(model.denominator!.legs.some((l) => l.ratio !== null));
  assert.equal(u.ceiling!.status, 'not-published');
  assert.ok(u.denominator!.legs.every((l) => l.ratio === null));
  assert.match(renderMarkdown(u), /\| closed-loop maximum, .* \| not a valid ceiling: not reconciled: no reconcile\.json/);
});

test('missing optional evidence reads "not sampled", never a guess', async () => {
  const bare = await makeFixtureCampaign({
    seed: 5,
    root,
    campaignId: 'bare',
    repeats: 2,
    repeatSeconds: 20,
    ...ONE_CONFIG,
    plans: [
      { config: 'only', repeat: 1, noDbSamples: true, noHostSamples: true },
      { config: 'only', repeat: 2, noDbSamples: true, noHostSamples: true },
    ],
  });
  fs.rmSync(path.join(bare.dir, 'rig.json'));
  fs.rmSync(path.join(bare.dir, 'manifest.json'));
  const res = await rig(['report', bare.dir, '--seal']);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stderr, /sealed .*manifest\.json lists \d+ files/);
  const md = res.stdout;
  assert.match(md, /\| only \| 2 passing repeats \| not sampled \| not sampled \| not sampled \| not sampled \| not sampled \|/);
  assert.match(md, /No read probe ran/);
  assert.match(md, /rig\.json: not in the evidence/);
  assert.match(md, /\| database parameters \(spec\.json\) \|/);
  const html = renderHtml(await buildReport(bare.dir));
  assert.match(html, /Wait events and WAL: not sampled/);
  assert.doesNotMatch(html, /data-kind="waits"/);
  // Sealing twice is refused: a manifest is never rebuilt over evidence that may have changed.
  const again = await rig(['report', bare.dir, '--seal']);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /already sealed/);
});

test('a ladder campaign: rungs pass on the ingest gate alone, drift is noted beside them', async () => {
  const lad = await makeFixtureCampaign({
    seed: 31,
    root,
    campaignId: 'ladder',
    ceiling: false,
    denominator: false,
    ladder: { rates: [500, 2000, 4000], batch: 10, rungs: 2, rungSeconds: 30 },
    plans: [
      { config: 'rung-2000', repeat: 1, drift: true },
      { config: 'rung-4000', repeat: 2, drops: 40 },
    ],
  });
  const m = await buildReport(lad.dir);
  assert.deepEqual(
    m.configurations.map((c) => `${c.name}:${c.kind}:${c.summary.label}:${c.published}`),
    ['rung-500:rung:2/2:true', 'rung-2000:rung:2/2:true', 'rung-4000:rung:1/2:true'],
  );
  const drifting = m.configurations[1].repeats[0];
  assert.equal(drifting.status, 'passed');
  assert.ok(drifting.report!.drift! >= 1.5, `drift ${drifting.report!.drift}`);
  assert.match(drifting.report!.gate.notes.join(), /^drift \(noted, not gated on a rung\): x\d/);
  assert.match(m.configurations[2].repeats[1].reasons.join('; '), /dropped: 40 of \d+ requests dropped/);
  const md = renderMarkdown(m);
  assert.match(md, /\| rung-2000 \(ladder rung\): 2,000 ev\/s offered \| 2,000 \| 10 \|/);
  assert.match(md, /Ladder rungs pass on the ingest gate alone/);
  assert.match(md, /ladder: rates 500, 2,000, 4,000 ev\/s at batch 10, 2 × 30 s per rung/);
});

test('a file added after sealing is named and not used', async () => {
  const copy = path.join(root, 'with-extra');
  copyTree(fx.dir, copy);
  fs.writeFileSync(path.join(copy, 'repeats/single/r1-a1/reconcile-fixed.json'), '{}');
  const m = await buildReport(copy);
  assert.ok(m.warnings.some((w) => w === 'repeats/single/r1-a1/reconcile-fixed.json: present but not in the manifest (added after the campaign was sealed); not used'));
});

test('rig report: formats, --out, ids under RIG_RESULTS, and usage errors', async () => {
  const out = path.join(root, 'page.html');
  const res = await rig(['report', fx.campaignId, '--format', 'html', '--out', out], { RIG_RESULTS: root });
  assert.equal(res.code, 0, res.stderr);
  assert.equal(res.stdout, '');
  assert.equal(fs.readFileSync(out, 'utf8'), renderHtml(model));
  const json = await rig(['report', fx.dir, '--format', 'json']);
  assert.equal(json.code, 0, json.stderr);
  const parsed = JSON.parse(json.stdout) as ReportModel;
  assert.equal(parsed.format, 'rig-report/1');
  assert.equal(parsed.configurations.length, 2);
  const bad = await rig(['report', fx.dir, '--format', 'pdf']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--format must be one of md, html, json/);
  const missing = await rig(['report', 'no-such-campaign'], { RIG_RESULTS: root });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /neither a folder nor a campaign id/);
  const help = await rig(['report', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /exit 1 +the evidence does not match its manifest/);
});

test('a database that failed a calibration case: every database heading and column of the page names it; a calibrated one: no mark', async () => {
  const write = async (name: string, cases: Array<{ name: string; ok: boolean }>) => {
    const copy = path.join(root, name);
    copyTree(fx.dir, copy);
    fs.writeFileSync(path.join(copy, 'calibration/database.json'), JSON.stringify({ calibrated: cases.every((c) => c.ok), passed: cases.filter((c) => c.ok).length, total: cases.length, cases }));
    fs.rmSync(path.join(copy, 'manifest.json'));
    await buildManifest(copy);
    return buildReport(copy);
  };
  const off = await write('db-uncalibrated', [{ name: 'lock wait', ok: false }, { name: 'WAL per event', ok: true }]);
  assert.deepEqual(off.db_calibration, { passed: 1, total: 2, failed: ['lock wait'], mark: 'database NOT CALIBRATED (lock wait)' });
  const md = renderMarkdown(off);
  assert.match(md, /### What stops it \[database NOT CALIBRATED \(lock wait\)\]/);
  assert.match(md, /\| WAL per event \[database NOT CALIBRATED \(lock wait\)\] \|/);
  assert.match(renderHtml(off), /<h3>What stops it \[database NOT CALIBRATED \(lock wait\)\]<\/h3>/);
  const ok = await write('db-calibrated', [{ name: 'lock wait', ok: true }]);
  assert.equal(ok.db_calibration?.mark, null);
  assert.doesNotMatch(renderMarkdown(ok), /NOT CALIBRATED/);
});

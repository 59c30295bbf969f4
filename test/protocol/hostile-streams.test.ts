// test-mode: unit
// The damaged streams of issue 25, each fed through the real reader and the one verdict function
// (evaluateRun, what `rig analyze`, `rig measure` and the campaign's repeat call), with the database's
// counts as they really are: each fails for its own reason or is refused, and the undamaged stream
// keeps its PASS.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { mergeNodeStreams } from '../../lib/loadgen/merge-streams';
import { SampleFileError } from '../../lib/loadgen/sample-reader';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { nodeRows, type NodeRow } from '../../lib/protocol/node-gates';
import { formatRunReport, verdictLine } from '../../lib/protocol/run-report';
import { flagsPlan } from '../../lib/protocol/stream-plan';
import type { Evaluation } from '../../lib/protocol/evaluate';
import { cutEnd, delayBurst, duplicateRow, editRow, judgeStream, keepEvery, makeStream, overflowColumn, removeSecond, streamBytes, strayRow, truthfulDb, withoutPlan, type Stream } from './planned-stream';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-hostile-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** 1,000 ev/s in requests of 10 for 30 s: 3,000 requests. */
const base = () => makeStream({ rate: 1000, batch: 10, seconds: 30 });
const failed = (e: Evaluation) => e.verdict.ingest.checks.filter((c) => c.passed === false).map((c) => c.name);
const check = (e: Evaluation, name: string) => e.verdict.ingest.checks.find((c) => c.name === name);

async function refused(s: Stream, re: RegExp): Promise<void> {
  await assert.rejects(judgeStream(dir, s), (e: unknown) => {
    assert.ok(e instanceof SampleFileError, String(e));
    assert.match(e.message, re);
    return true;
  });
}

test('the undamaged stream passes, and reports its plan, its delivery and its lateness', async () => {
  const e = await judgeStream(dir, base());
  assert.equal(e.verdict.state, 'PASS', verdictLine(e.report));
  assert.deepEqual(e.report.delivery, { scheduled: 3000, delivered: 3000, short_seconds: [], empty_seconds: [] });
  assert.equal(e.report.plan?.seconds, 30);
  assert.deepEqual(e.report.late_seconds, []);
  assert.ok((e.report.schedule_lag_max_ms ?? 99) < 1);
  assert.match(check(e, 'delivered')?.detail ?? '', /^delivered 3000 of 3000 scheduled requests \(1000 ev\/s, batch 10, 30 s\), every second$/);
});

test('missing requests fail "not delivered", naming the seconds: a gap, every 10th kept, a run cut at 450 of 600 s', async () => {
  const gap = base();
  let s = gap;
  for (let sec = 10; sec < 20; sec++) s = removeSecond(s, sec);
  const g = await judgeStream(dir, s);
  assert.equal(g.verdict.state, 'FAIL');
  assert.deepEqual(failed(g), ['delivered']);
  assert.equal(g.report.delivered_rate, 666.667);
  assert.match(g.verdict.reasons[0], /^not delivered: delivered 2000 of 3000 scheduled requests .*; 10 short seconds at 10-19 \(10 empty: 10-19\)$/);
  assert.deepEqual(g.report.delivery?.short_seconds, [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);

  const tenth = await judgeStream(dir, keepEvery(base(), 10));
  assert.equal(tenth.verdict.state, 'FAIL');
  assert.ok(failed(tenth).includes('delivered'));
  assert.equal(tenth.report.delivery?.short_seconds.length, 30);

  // a Ctrl-C'd `rig measure` at 450 s of 600 s: its #end says cut short; edited to say otherwise, its
  // missing seconds still fail it
  const long = makeStream({ rate: 10, batch: 1, seconds: 600 });
  const cut = await judgeStream(dir, cutEnd(long, 450, true));
  assert.equal(cut.verdict.state, 'CUT SHORT');
  assert.match(check(cut, 'delivered')?.detail ?? '', /; cut short \(SIGINT\) before the plan's 600 s: never a pass$/);
  const hidden = await judgeStream(dir, cutEnd(long, 450, false));
  assert.equal(hidden.verdict.state, 'FAIL');
  assert.equal(hidden.report.delivered_rate, 7.5);
  assert.match(hidden.verdict.reasons[0], /150 short seconds at 450-599/);
});

test('a stream without a plan is read, and its delivery is not judged: NOT JUDGED (no plan), never PASS', async () => {
  const e = await judgeStream(dir, withoutPlan(base()));
  assert.equal(e.verdict.state, 'NOT JUDGED');
  assert.equal(check(e, 'delivered')?.passed, null);
  assert.match(check(e, 'delivered')?.detail ?? '', /^delivery not judged: no plan/);
  assert.match(verdictLine(e.report), /^NOT JUDGED \(no plan\): /);
  // its plan given from the flags judges it: undamaged passes, a gap fails
  const flags = flagsPlan(1000, 10, 30);
  assert.equal((await judgeStream(dir, withoutPlan(base()), { plan: flags })).verdict.state, 'PASS');
  const gap = await judgeStream(dir, withoutPlan(removeSecond(base(), 7)), { plan: flags });
  assert.match(gap.verdict.reasons[0], /^not delivered: .*1 short second at 7 \(1 empty: 7\)$/);
});

test('one plan, one strictness: a flags plan holds the rows to its schedule as the stream\'s own plan does', async () => {
  // the rehearsal's batched shape, 100 requests/s for 30 s (3,000 requests), judged against a flags
  // plan of a tenth of its rate: before issue 34 this read "delivered 330 of 300 scheduled requests"
  // and PASS; now its second row is off that plan's schedule and refused, exactly as a stream carrying
  // that plan would be
  const tenth = flagsPlan(100, 10, 30);
  await assert.rejects(judgeStream(dir, withoutPlan(base()), { plan: tenth }), /line 3: ingest row intended at 10000 µs is not on the plan's schedule \(from the flags\) \(10 requests\/s: .*a row outside the schedule/);
  // the same stream carrying that plan is refused the same way (same line, same reason)
  await refused({ ...base(), plan: { ...base().plan!, rate: 100 } }, /line 4: ingest row intended at 10000 µs is not on the plan's schedule \(10 requests\/s: /);
  // and a flags plan that drops a request a second no longer passes either: no tolerance of its own
  let thin = withoutPlan(base());
  let k = 0;
  thin = { ...thin, rows: thin.rows.filter((r) => r.scenario !== 'ingest' || r.intended_us % 1_000_000 !== 0 || k++ < 0) };
  const e = await judgeStream(dir, thin, { plan: flagsPlan(1000, 10, 30) });
  assert.equal(e.verdict.state, 'FAIL');
  assert.deepEqual(failed(e), ['delivered']);
  assert.equal(e.report.delivery?.short_seconds.length, 30);
});

test('one stray row cannot defeat the drift gate: it is refused, naming its line; probe rows the same', async () => {
  // latency rising from 5 to 45 ms over the run: drift fails
  const rising = makeStream({ rate: 1000, batch: 10, seconds: 30, latencyMs: (_n, s) => 5 + (40 * s) / 29 });
  const d = await judgeStream(dir, rising);
  assert.deepEqual(failed(d), ['drift']);
  // the page shows the ratio with its interval, and the interval lies wholly over the limit
  assert.match(d.verdict.reasons[0], /^drift: x\S+ \(95 % interval x\S+-x\S+; last-third p99 \S+ ms \/ first-third p99 \S+ ms\) >= limit x1\.5$/);
  assert.ok((d.report.drift_low as number) >= 1.5, String(d.report.drift_low));
  assert.match(formatRunReport(d.report), /; drift x\S+ \(95 % interval x\S+-x\S+\)\n/);
  // one fast row at 100 s: outside the 30-s plan; one between two scheduled times: off the schedule
  await refused(strayRow(rising, 100_000_000), /line 3003: ingest row intended at 100000000 µs, after the plan's 30 s: a row outside the schedule/);
  await refused(strayRow(rising, 5_000_001), /ingest row intended at 5000001 µs is not on the plan's schedule .*a row outside the schedule/);
  const probe = makeStream({ rate: 1000, batch: 10, seconds: 30, probeRate: 1 });
  await refused({ ...probe, rows: [...probe.rows, { scenario: 'probe:invoices', intended_us: 100e6, sent_us: 100e6, done_us: 100e6 + 1, status: 200, events: 0, quantity: 0 }] }, /after the plan's 30 s/);
  // without a plan, --seconds is the run's length, not a minimum: the stray row is refused too
  await assert.rejects(judgeStream(dir, withoutPlan(strayRow(rising, 100_000_000)), { durationS: 30 }), /after the run's 30 s \(--seconds\): a row outside the run/);
});

test('thirds too small for a p99 are not judgeable: NOT JUDGED, not a pass nor the service\'s fault', async () => {
  // 40 requests/s for 6 s: thirds of 2 s hold 80 samples each (and 240 samples fail their own check)
  const thin = await judgeStream(dir, makeStream({ rate: 40, batch: 1, seconds: 6 }), { minSamples: 200 });
  assert.equal(thin.verdict.state, 'NOT JUDGED', verdictLine(thin.report));
  assert.equal(check(thin, 'drift')?.passed, null);
  assert.match(check(thin, 'drift')?.detail ?? '', /^not judgeable: a third has too few samples for a p99 \(first 80, last 80; 100 needed\)$/);
  assert.match(verdictLine(thin.report), /^NOT JUDGED \(drift not judgeable\)/);
});

test('a stalled generator is never a pass: a 5.9-s freeze and a 3-s one fail the instrument, naming the late seconds', async () => {
  // 590 requests due in 5.9 s of a 600-s run leave at its end in one burst, each answered in ~5 ms
  const stalled = await judgeStream(dir, delayBurst(makeStream({ rate: 1000, batch: 10, seconds: 600 }), 20, 5.9));
  assert.equal(stalled.verdict.state, 'FAIL');
  assert.deepEqual(failed(stalled), ['instrument']);
  assert.ok((stalled.report.schedule_lag_p99_ms ?? 99) < 1, 'the p99 alone passes: 590 of 60,000 requests is under 1 %');
  assert.ok((stalled.report.schedule_lag_max_ms ?? 0) > 5800);
  assert.deepEqual(stalled.report.late_seconds, [20, 21, 22, 23, 24, 25]);
  assert.match(stalled.verdict.reasons[0], /^instrument late: .*max 5900 ms > 50 ms \(the p99 limit\), late seconds 20-25; /);
  // the corrected latency (intended -> done) shows the stall as freeze-seconds; done - sent does not
  assert.deepEqual(stalled.report.freeze_seconds, [20, 21, 22, 23, 24, 25]);
  const host = await judgeStream(dir, delayBurst(makeStream({ rate: 200, batch: 1, seconds: 60 }), 40, 3));
  assert.deepEqual(failed(host), ['instrument']);
  assert.deepEqual(host.report.late_seconds, [40, 41, 42]);
});

test('the probe\'s lateness is judged like ingest\'s', async () => {
  const s = makeStream({ rate: 1000, batch: 10, seconds: 30, probeRate: 2 });
  const late = { ...s, rows: s.rows.map((r) => (r.scenario !== 'ingest' && r.intended_us === 10e6 ? { ...r, sent_us: r.intended_us + 400_000, done_us: r.intended_us + 403_000 } : r)) };
  const e = await judgeStream(dir, late);
  assert.deepEqual(failed(e), ['instrument']);
  assert.match(e.verdict.reasons[0], /; probe schedule lag p99 .* max 400 ms > 50 ms \(the p99 limit\), late seconds 10;/);
  assert.equal(e.report.probe_schedule_lag_max_ms, 400);
});

/** The stream with its first `n` probe requests from second 10 on sent `lateUs` late. */
function lateProbe(s: Stream, n: number, lateUs: number): Stream {
  let k = 0;
  return { ...s, rows: s.rows.map((r) => (r.scenario !== 'ingest' && r.intended_us >= 10e6 && k++ < n ? { ...r, sent_us: r.intended_us + lateUs, done_us: r.intended_us + lateUs + 3_000 } : r)) };
}

test('a probe of a few requests is not made late by one of them: below 100 requests one may be over the tail limit (issue 34)', async () => {
  // 2/s for 30 s: 60 probe requests, one 7 ms late (the tail limit is 5 ms, 10 % of the p99 limit 50 ms).
  const few = await judgeStream(dir, lateProbe(makeStream({ rate: 1000, batch: 10, seconds: 30, probeRate: 2 }), 1, 7_000));
  assert.equal(few.verdict.state, 'PASS', verdictLine(few.report));
  assert.match(
    check(few, 'instrument')?.detail ?? '',
    /probe schedule lag p99 7 ms \(60 requests, fewer than the 100 whose p99 is not their maximum: at most one may be over the tail limit, second-largest 0\.2 ms <= 5 ms \(10 % of the p99 limit 50 ms\)\), max 7 ms <= 50 ms/,
  );
  // 5/s for 30 s: 150 probe requests, 3 of them (2 %) 7 ms late: the tail is judged, and fails.
  const many = await judgeStream(dir, lateProbe(makeStream({ rate: 1000, batch: 10, seconds: 30, probeRate: 5 }), 3, 7_000));
  assert.deepEqual(failed(many), ['instrument']);
  assert.match(many.verdict.reasons[0], /; probe schedule lag p99 7 ms > 5 ms \(10 % of the p99 limit 50 ms\)/);
});

/** The rehearsal's probe: 2/s for 45 s, 90 requests a repeat (single's p99 limit is 50 ms). */
const rehearsalRepeat = () => makeStream({ rate: 1000, batch: 10, seconds: 45, probeRate: 2 });

test('MUST SHOW (issue 47): a probe of 90 requests all sent 49.9 ms late FAILS; one of them 7 ms late still passes; two fail', async () => {
  const s = rehearsalRepeat();
  assert.equal(s.rows.filter((r) => r.scenario !== 'ingest').length, 90);
  // Every probe request 49.9 ms late: under the 50-ms maximum, 10 times the 5-ms tail limit.
  const all = await judgeStream(dir, { ...s, rows: s.rows.map((r) => (r.scenario === 'ingest' ? r : { ...r, sent_us: r.intended_us + 49_900, done_us: r.intended_us + 52_900 })) });
  assert.equal(all.verdict.state, 'FAIL', verdictLine(all.report));
  assert.deepEqual(failed(all), ['instrument']);
  assert.match(
    all.verdict.reasons[0],
    /; probe schedule lag p99 49\.9 ms \(90 requests, fewer than the 100 whose p99 is not their maximum: at most one may be over the tail limit, second-largest 49\.9 ms > 5 ms \(10 % of the p99 limit 50 ms\)\), max 49\.9 ms <= 50 ms \(the p99 limit\);/,
  );
  // One of the 90, 7 ms late (issue 34's healthy repeat): still a pass.
  const one = await judgeStream(dir, lateProbe(rehearsalRepeat(), 1, 7_000));
  assert.equal(one.verdict.state, 'PASS', verdictLine(one.report));
  assert.equal(check(one, 'instrument')?.passed, true);
  // Two of the 90: more than the one a sample this small allows.
  const two = await judgeStream(dir, lateProbe(rehearsalRepeat(), 2, 7_000));
  assert.deepEqual(failed(two), ['instrument']);
  assert.match(two.verdict.reasons[0], /second-largest 7 ms > 5 ms/);
});

/** Node `node` of `nodes`'s share of `s` (ingest request n and probe request k go to node n, k mod nodes), as its stream. */
function nodeShare(s: Stream, node: number, nodes: number): Stream {
  let n = 0;
  let k = 0;
  const rows = s.rows.filter((r) => (r.scenario === 'ingest' ? n++ : k++) % nodes === node);
  return { ...s, plan: { ...s.plan!, share: { node, nodes }, run_tag: `hostile.n${node}` }, rows };
}

/** `s` split over `nodes` load nodes, merged as the campaign merges them, each node judged on its own share (node-gates.ts). */
async function judgeNodes(s: Stream, nodes: number, damage: (node: number, share: Stream) => Stream): Promise<{ e: Evaluation; rows: NodeRow[] }> {
  const files = Array.from({ length: nodes }, (_, i) => {
    const f = path.join(dir, `node-${nodes}-${i}-${Math.random().toString(36).slice(2)}.csv.gz`);
    fs.writeFileSync(f, streamBytes(damage(i, nodeShare(s, i, nodes))));
    return f;
  });
  const out = path.join(dir, `merged-${Math.random().toString(36).slice(2)}.csv.gz`);
  const merged = await mergeNodeStreams(files, out, 'hostile');
  const rows = nodeRows(merged.nodes.map((m) => m.analysis), 50);
  const { analysis } = await analyzeFile(out);
  const e = evaluateRun(analysis, { p99LimitMs: 50, reconciliation: truthfulDb(s.rows), nodes: rows });
  return { e, rows };
}

test('MUST SHOW (issue 47): each of 3 load nodes judges its 30 of the probe\'s 90 requests by the same rule', async () => {
  const late = (share: Stream, n: number, us: number) => lateProbe(share, n, us);
  // Node 1's 30 probe requests from second 10 on (25 of them) all 49.9 ms late: node 1 fails on its own, named.
  const slow = await judgeNodes(rehearsalRepeat(), 3, (i, sh) => (i === 1 ? late(sh, 30, 49_900) : sh));
  assert.deepEqual(slow.rows.map((r) => r.instrument.passed), [true, false, true]);
  assert.match(slow.rows[1].instrument.detail, /probe schedule lag p99 49\.9 ms \(30 requests, .* second-largest 49\.9 ms > 5 ms/);
  assert.equal(slow.e.verdict.state, 'FAIL', verdictLine(slow.e.report));
  assert.match(slow.e.verdict.ingest.reasons.join('\n'), /instrument late: .*node 1 \(hostile\.n1\): .*second-largest 49\.9 ms > 5 ms/);
  // One request 7 ms late on one node: every node and the merge pass.
  const one = await judgeNodes(rehearsalRepeat(), 3, (i, sh) => (i === 2 ? late(sh, 1, 7_000) : sh));
  assert.deepEqual(one.rows.map((r) => r.instrument.passed), [true, true, true]);
  assert.equal(one.e.verdict.state, 'PASS', verdictLine(one.e.report));
  // Two of node 0's 30 7 ms late: node 0 fails, as one node of 90 would.
  const two = await judgeNodes(rehearsalRepeat(), 3, (i, sh) => (i === 0 ? late(sh, 2, 7_000) : sh));
  assert.deepEqual(two.rows.map((r) => r.instrument.passed), [false, true, true]);
  assert.equal(two.e.verdict.state, 'FAIL', verdictLine(two.e.report));
});

test('without a threshold a 10-s-per-request run is NOT JUDGED (no threshold), never PASS', async () => {
  const slow = await judgeStream(dir, makeStream({ rate: 100, batch: 1, seconds: 15, latencyMs: () => 10_000 }), { p99LimitMs: null });
  assert.equal(slow.verdict.state, 'NOT JUDGED');
  assert.match(verdictLine(slow.report), /^NOT JUDGED \(no threshold\)/);
});

test('rows written twice and a wrapping column are refused, naming the line', async () => {
  await refused(duplicateRow(base(), 41), /line 45: duplicate row: ingest at intended_us 410000 is already on line 44/);
  await refused(overflowColumn(base(), 9), /line 12: events 4294967306 does not fit its column/);
  const row = (i: number, o: Partial<Stream['rows'][number]>) => editRow(base(), i, o);
  await refused(row(3, { events: 2 ** 31 }), /line 6: events 2147483648 does not fit its column/);
  await refused(row(4, { events: 0 }), /line 7: a 2xx ingest row must carry 1 to 1000 events, got 0/);
  await refused(row(5, { quantity: 0 }), /line 8: a 2xx ingest row's quantity 0 is less than its 10 events/);
});

// test-mode: unit
// `rig analyze FILE --json --p99-limit-ms 50 --reconcile rows=N,quantity=Q` on the damaged streams of
// issue 25, as a user runs it (through client/main.ts, in this process: test/harness/capture-cli.ts),
// with N and Q what the database would really hold: each damage exits with its own code (99 FAIL,
// 130 CUT SHORT, 2 refused) and the JSON names the check that failed, where the undamaged stream
// exits 0. The streams are the hostile-stream tests' own (test/protocol/planned-stream.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { EXIT } from '../../client/exit-codes';
import type { RunReport } from '../../lib/protocol/run-report';
import { captureRig } from '../harness/capture-cli';
import { cutEnd, delayBurst, duplicateRow, makeStream, removeSecond, streamBytes, truthfulDb, withoutPlan, type Stream } from '../protocol/planned-stream';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-analyze-damaged-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** 1,000 ev/s in requests of 10 for 30 s: 3,000 requests, answered in about 5 ms. */
const base = () => makeStream({ rate: 1000, batch: 10, seconds: 30 });

/** `rig analyze` on the stream as written, reconciled against what the database holds (`db`, else the stream's own acknowledged counts). */
async function analyze(name: string, s: Stream, db = truthfulDb(s.rows)) {
  const file = path.join(dir, `${name}.csv.gz`);
  fs.writeFileSync(file, streamBytes(s));
  const r = await captureRig(['analyze', file, '--json', '--p99-limit-ms', '50', '--reconcile', `rows=${db.rows_written},quantity=${db.quantity_gained}`]);
  const report = r.code === EXIT.USAGE ? null : (JSON.parse(r.out) as RunReport);
  const failed = report ? report.gate.checks.filter((c) => c.passed === false).map((c) => c.name) : [];
  return { ...r, report, failed };
}

test('the undamaged stream: PASS, exit 0', async () => {
  const r = await analyze('undamaged', base());
  assert.equal(r.code, EXIT.OK, r.out + r.err);
  assert.equal(r.report?.verdict.state, 'PASS');
  assert.deepEqual(r.failed, []);
});

test('a gap (seconds 10-19 sent nothing): FAIL, exit 99, "delivered" failing and naming the seconds', async () => {
  let s = base();
  for (let sec = 10; sec < 20; sec++) s = removeSecond(s, sec);
  const r = await analyze('gap', s);
  assert.equal(r.code, EXIT.NOT_HELD, r.out + r.err);
  assert.equal(r.report?.verdict.state, 'FAIL');
  assert.deepEqual(r.failed, ['delivered']);
  assert.deepEqual(r.report?.delivery?.empty_seconds, [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  assert.match(r.report?.verdict.reasons[0] ?? '', /^not delivered: delivered 2000 of 3000 scheduled requests /);
});

test('a run cut at 450 s of 600: CUT SHORT, exit 130, when its #end says so; FAIL, exit 99, "delivered" failing, when edited to hide it', async () => {
  const long = makeStream({ rate: 10, batch: 1, seconds: 600 });
  const admitted = await analyze('cut-admitted', cutEnd(long, 450, true));
  assert.equal(admitted.code, EXIT.CUT_SHORT, admitted.out + admitted.err);
  assert.equal(admitted.report?.verdict.state, 'CUT SHORT');
  assert.equal(admitted.report?.verdict.passed, false);
  const hidden = await analyze('cut-hidden', cutEnd(long, 450, false));
  assert.equal(hidden.code, EXIT.NOT_HELD, hidden.out + hidden.err);
  assert.deepEqual(hidden.failed, ['delivered']);
  assert.deepEqual(hidden.report?.delivery?.short_seconds, Array.from({ length: 150 }, (_, i) => 450 + i));
});

test('a row written twice: refused, exit 2, naming both lines, and no report printed', async () => {
  const s = base();
  // the database holds what was really acknowledged: the undamaged stream's counts
  const r = await analyze('duplicate', duplicateRow(s, 41), truthfulDb(s.rows));
  assert.equal(r.code, EXIT.USAGE, r.out + r.err);
  assert.equal(r.out, '');
  assert.match(r.err, /line 45: duplicate row: ingest at intended_us 410000 is already on line 44/);
});

test('a stalled burst (5.9 s of requests sent at once, each answered fast): FAIL, exit 99, "instrument" failing and naming the late seconds', async () => {
  const r = await analyze('stalled', delayBurst(makeStream({ rate: 1000, batch: 10, seconds: 60 }), 20, 5.9));
  assert.equal(r.code, EXIT.NOT_HELD, r.out + r.err);
  assert.deepEqual(r.failed, ['instrument']);
  assert.deepEqual(r.report?.late_seconds, [20, 21, 22, 23, 24, 25]);
  assert.ok((r.report?.schedule_lag_max_ms ?? 0) > 5800, `max lag ${r.report?.schedule_lag_max_ms}`);
  assert.match(r.report?.verdict.reasons[0] ?? '', /^instrument late: .*late seconds 20-25/);
});

test('one plan, one strictness: the rehearsal\'s shape judged against flags of a tenth of its rate is refused, exit 2, never PASS', async () => {
  // 100 requests/s for 30 s (3,000 requests) without its #plan, given --rate 100 --seconds 30 (batch 10
  // from its rows: 10 requests/s, 300 scheduled): the second row is off that plan's schedule
  const s = withoutPlan(base());
  const file = path.join(dir, 'tenth.csv.gz');
  fs.writeFileSync(file, streamBytes(s));
  const db = truthfulDb(s.rows);
  const reconcile = `rows=${db.rows_written},quantity=${db.quantity_gained}`;
  const r = await captureRig(['analyze', file, '--rate', '100', '--seconds', '30', '--p99-limit-ms', '50', '--reconcile', reconcile]);
  assert.equal(r.code, EXIT.USAGE, r.out + r.err);
  assert.equal(r.out, '');
  assert.doesNotMatch(r.out + r.err, /PASS|delivered 330 of 300/);
  assert.match(r.err, /line 3: ingest row intended at 10000 µs is not on the plan's schedule \(from the flags\) \(10 requests\/s: /);
  // its true plan from the flags: PASS, exit 0
  const right = await captureRig(['analyze', file, '--rate', '1000', '--seconds', '30', '--p99-limit-ms', '50', '--reconcile', reconcile]);
  assert.equal(right.code, EXIT.OK, right.out + right.err);
  assert.match(right.out, /\nPASS/);
});

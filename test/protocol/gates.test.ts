// test-mode: unit
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSamples, type IngestAnalysis } from '../../lib/protocol/analysis';
import { ceilingGate, ladderGate, sustainedGate } from '../../lib/protocol/gates';
import { cols, dropped, plan, planned, second } from './fixtures';

/** 15 s at 100 requests/s (1,500 samples: thirds of 500, enough to bound a p99, drift.ts), 10 events of quantity 7 each, latency by second; planned so. */
function run(latencyMs: (s: number, k: number) => number = () => 5, extra: Parameters<typeof cols>[0] = []): IngestAnalysis {
  const rows = [];
  for (let s = 0; s < 15; s++) rows.push(...second(s, 100, (k) => latencyMs(s, k), { events: 10, quantity: 70 }));
  return analyzeSamples(planned([...rows, ...extra], plan(1000, 10, 15))).ingest;
}

test('a clean, reconciled repeat passes every check', () => {
  const a = run();
  assert.equal(a.events_claimed, 15_000);
  assert.equal(a.quantity_claimed, 105_000);
  const g = sustainedGate(a, { p99LimitMs: 10, reconciliation: { rows_written: 15_000, quantity_gained: 105_000 } });
  assert.equal(g.passed, true);
  assert.equal(g.reconciled, true);
  assert.deepEqual(g.reasons, []);
  assert.deepEqual(g.unchecked, []);
  assert.deepEqual(g.checks.map((c) => [c.name, c.passed]), [
    ['threshold', true],
    ['delivered', true],
    ['dropped', true],
    ['failed', true],
    ['rows', true],
    ['quantity', true],
    ['samples', true],
    ['drift', true],
    ['instrument', true],
  ]);
});

test('every failing check is reported, in order, not just the first', () => {
  // drift: last third (s 10-14) at 40 ms vs 5 ms; one drop (request 330 of the schedule); two 500s
  const rows = [];
  for (let s = 0; s < 15; s++) {
    const sec = second(s, 100, () => (s >= 10 ? 40 : 5), { events: 10, quantity: 70 });
    if (s === 1) sec[0].status = sec[1].status = 500; // two failures
    if (s === 3) sec.splice(30, 1); // sent no more: dropped below
    rows.push(...sec);
  }
  const withFailures = analyzeSamples(planned([...rows, dropped(3.3, { events: 10 })], plan(1000, 10, 15))).ingest;
  assert.equal(withFailures.dropped, 1);
  const g = sustainedGate(withFailures, { p99LimitMs: 20, reconciliation: { rows_written: 14_960, quantity_gained: 104_630 } });
  assert.equal(g.passed, false);
  assert.deepEqual(g.checks.filter((c) => c.passed === false).map((c) => c.name), ['threshold', 'delivered', 'dropped', 'failed', 'rows', 'quantity', 'drift']);
  assert.equal(g.reasons.length, 7);
  // claimed: 1,497 requests x 10 = 14,970 events, quantity 104,790; the DB is short of 10 rows and 160
  assert.match(g.reasons[0], /^threshold: p99 40 ms > limit 20 ms$/);
  assert.equal(g.reasons[1], 'not delivered: delivered 1497 of 1500 scheduled requests (1000 ev/s, batch 10, 15 s); 2 short seconds at 1, 3');
  assert.match(g.reasons[2], /^dropped: 1 of 1500 requests dropped/);
  assert.match(g.reasons[3], /^failed: 2 of 1499 sent requests failed/);
  assert.equal(g.reasons[4], 'rows: rows written 14960 != events claimed 14970 (missing 10)');
  assert.equal(g.reasons[5], 'quantity: quantity gained 104630 != quantity sent (acknowledged) 104790 (missing 160)');
  assert.match(g.reasons[6], /^drift: x8 \(95 % interval x8-x8; last-third p99 40 ms \/ first-third p99 5 ms\) >= limit x1\.5$/);
});

test('more rows than claimed is reported as extra', () => {
  const g = sustainedGate(run(), { reconciliation: { rows_written: 15_003, quantity_gained: 105_000 } });
  assert.deepEqual(g.reasons, ['rows: rows written 15003 != events claimed 15000 (3 extra)']);
});

test('without database counts reconciliation is unchecked: not failed, but not reconciled', () => {
  const g = sustainedGate(run());
  assert.equal(g.passed, true);
  assert.equal(g.reconciled, false);
  assert.deepEqual(g.unchecked, ['threshold', 'rows', 'quantity']);
});

test('without a plan, delivery is not judged: unchecked, named', () => {
  const rows = [];
  for (let s = 0; s < 15; s++) rows.push(...second(s, 100, () => 5, { events: 10, quantity: 70 }));
  const g = sustainedGate(analyzeSamples(cols(rows)).ingest, { p99LimitMs: 10 });
  assert.equal(g.passed, true);
  assert.deepEqual(g.unchecked, ['delivered', 'rows', 'quantity']);
  assert.match(g.checks[1].detail, /^delivery not judged: no plan/);
});

test('fewer than 1,000 samples fails; a run too short for thirds is not judgeable on drift', () => {
  const short = analyzeSamples(planned(second(0, 100, () => 5).concat(second(1, 100, () => 5)), plan(100, 1, 2))).ingest;
  const g = sustainedGate(short);
  assert.deepEqual(g.checks.filter((c) => c.passed === false).map((c) => c.name), ['samples']);
  assert.match(g.reasons[0], /200 samples, fewer than the 1000 required/);
  assert.match(g.checks.find((c) => c.name === 'drift')?.detail ?? '', /^not judgeable: the run is 2 s, too short for thirds/);
  assert.ok(g.unchecked.includes('drift'));
});

test('an all-dropped repeat fails threshold, delivery, drops and samples at once; drift is not judgeable', () => {
  const a = analyzeSamples(planned(Array.from({ length: 30 }, (_, i) => dropped(i / 10)), plan(10, 1, 3))).ingest;
  const g = sustainedGate(a, { p99LimitMs: 50, reconciliation: { rows_written: 0, quantity_gained: 0 } });
  assert.deepEqual(g.checks.map((c) => [c.name, c.passed]), [
    ['threshold', false],
    ['delivered', false],
    ['dropped', false],
    ['failed', true],
    ['rows', true],
    ['quantity', true],
    ['samples', false],
    ['drift', null],
    ['instrument', null],
  ]);
  assert.deepEqual(g.unchecked, ['drift', 'instrument']);
  assert.match(g.reasons[0], /no latency samples/);
  assert.match(g.reasons[1], /^not delivered: delivered 0 of 30 scheduled requests .*3 short seconds at 0-2 \(3 empty: 0-2\)/);
});

test('the drift limit is configurable and strict (ratio < limit)', () => {
  const a = run((s) => (s >= 10 ? 7.5 : 5)); // x1.5 exactly
  assert.equal(a.drift.ratio, 1.5);
  assert.equal(sustainedGate(a).checks.find((c) => c.name === 'drift')?.passed, false);
  assert.equal(sustainedGate(a, { driftLimit: 1.6 }).checks.find((c) => c.name === 'drift')?.passed, true);
});

test('a drift interval that straddles the limit is not judged: neither a pass nor a failure, naming the samples that would decide it', () => {
  // latencies 5.0-14.9 ms in every second, x1.49 in the last third: thirds of 500 bound each p99 within
  // a few percent (14.7-14.9 ms), so the ratio x1.49 has an interval about x1.47-x1.51 around the limit
  const a = run((s, k) => (5 + k / 10) * (s >= 10 ? 1.49 : 1));
  const g = sustainedGate(a, { p99LimitMs: 50, reconciliation: { rows_written: 15_000, quantity_gained: 105_000 } });
  const d = g.checks.find((c) => c.name === 'drift');
  assert.equal(d?.passed, null);
  assert.equal(g.passed, true);
  assert.deepEqual(g.unchecked, ['drift']);
  assert.ok((a.drift.ratio_low as number) < 1.5 && (a.drift.ratio_high as number) >= 1.5, `x${a.drift.ratio_low}-x${a.drift.ratio_high}`);
  assert.match(
    d?.detail ?? '',
    /^not judgeable: x1\.49 \(95 % interval x1\.47\d*-x1\.51\d*; last-third p99 \S+ ms \/ first-third p99 14\.8 ms\) straddles the limit x1\.5: thirds of 500 and 500 samples cannot tell; thirds of about \d+ samples would decide it \(a repeat of about \d+ s at this rate\)$/,
  );
  // a ratio at the limit itself: no number of samples decides it, and the page says so
  const at = sustainedGate(run((s, k) => (5 + k / 10) * (s >= 10 ? 1.5 : 1)), { p99LimitMs: 50 }).checks.find((c) => c.name === 'drift');
  assert.equal(at?.passed, null);
  assert.match(at?.detail ?? '', /^not judgeable: x1\.5 \(95 % interval x1\.48-x1\.52; .*\) straddles the limit x1\.5: .*; no number of samples decides a ratio at the limit itself$/);
  // the same thirds judged against x1.4 fail, against x1.6 pass: the interval lies wholly over or under it
  assert.equal(sustainedGate(a, { driftLimit: 1.4 }).checks.find((c) => c.name === 'drift')?.passed, false);
  assert.equal(sustainedGate(a, { driftLimit: 1.6 }).checks.find((c) => c.name === 'drift')?.passed, true);
});

test('a ladder rung: delivered rate, drops and reconciliation only; drift noted, not gated', () => {
  const a = run((s) => (s >= 10 ? 40 : 5));
  const g = ladderGate(a, { reconciliation: { rows_written: 15_000, quantity_gained: 105_000 } });
  assert.equal(g.kind, 'ladder');
  assert.equal(g.passed, true);
  assert.deepEqual(g.checks.map((c) => c.name), ['delivered', 'dropped', 'rows', 'quantity', 'instrument']);
  assert.match(g.notes[0], /^drift \(noted, not gated on a rung\): x8 /);
  // a rung that delivered less than 99.5 % of its offer fails on delivery
  const lossy = analyzeSamples(planned(second(0, 100, () => 5).concat(second(1, 100, () => 5).map((r, k) => (k < 2 ? { ...r, status: 503 } : r))), plan(100, 1, 2))).ingest;
  const l = ladderGate(lossy);
  assert.deepEqual(l.checks.filter((c) => c.passed === false).map((c) => c.name), ['delivered']);
  assert.match(l.reasons[0], /^not delivered: delivered 198 of 200 scheduled requests \(99 req\/s, 99 ev\/s of 100 ev\/s planned\), below the 99\.5 % required/);
});

test('a ceiling is checked for failures and samples only, and reconciled when counts are given', () => {
  const a = run((s) => (s >= 10 ? 40 : 5));
  const g = ceilingGate(a);
  assert.equal(g.kind, 'ceiling');
  assert.equal(g.passed, true);
  assert.equal(g.reconciled, false);
  assert.deepEqual(g.checks.map((c) => [c.name, c.passed]), [['failed', true], ['rows', null], ['quantity', null], ['samples', true]]);
  assert.deepEqual(g.unchecked, ['rows', 'quantity']);
  const ok = ceilingGate(a, { reconciliation: { rows_written: a.events_claimed, quantity_gained: a.quantity_claimed } });
  assert.equal(ok.reconciled, true);
  assert.equal(ok.passed, true);
  assert.deepEqual(ok.checks.map((c) => c.name), ['failed', 'rows', 'quantity', 'samples']);
  const short = ceilingGate(a, { reconciliation: { rows_written: a.events_claimed - 3, quantity_gained: a.quantity_claimed } });
  assert.equal(short.passed, false);
  assert.match(short.reasons[0], /^rows: rows written \d+ != events claimed \d+ \(missing 3\)/);
});

test('drift is rounded once: the figure printed is the figure compared (1.4996 is x1.5, not under x1.5)', () => {
  const a = run((s) => (s >= 10 ? 7.498 : 5)); // 7.498 / 5 = 1.4996
  assert.equal(a.drift.ratio, 1.5);
  const d = sustainedGate(a).checks.find((c) => c.name === 'drift');
  assert.equal(d?.passed, false);
  assert.match(d?.detail ?? '', /^x1\.5 \(.*\) >= limit x1\.5$/);
  const b = run((s) => (s >= 10 ? 7.497 : 5)); // 1.4994: x1.499, under the limit, and printed so
  assert.equal(b.drift.ratio, 1.499);
  const e = sustainedGate(b).checks.find((c) => c.name === 'drift');
  assert.equal(e?.passed, true);
  assert.match(e?.detail ?? '', /^x1\.499 \(.*\) < limit x1\.5$/);
});

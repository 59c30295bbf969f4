// test-mode: unit
// A load that ran to its end is a result: what fails after it makes the verdict FAIL with the reason.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { afterLoadReason, failAfterLoad, unanalysedSummary, unanalysedVerdict } from '../../lib/protocol/after-load';
import { analyzeSamples } from '../../lib/protocol/analysis';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { summarizeRepeat } from '../../lib/protocol/repeat-summary';
import { VerdictSchema } from '../../lib/evidence/records';
import { plan, planned, second } from './fixtures';

function passing() {
  const rows = [];
  for (let s = 0; s < 15; s++) rows.push(...second(s, 100, () => 5));
  const a = analyzeSamples(planned(rows, plan(100, 1, 15)));
  return evaluateRun(a, { p99LimitMs: 50, reconciliation: { rows_written: a.ingest.events_claimed, quantity_gained: a.ingest.quantity_claimed } });
}

const id = { configuration: 'single', index: 2, attempt: 1, runTag: 'x.single.r2.a1', kind: 'sustained' as const, dir: 'repeats/single/r2-a1', cutShort: false };

test('a reason from after the load turns a passing repeat into FAIL, in the verdict, its report and its summary', () => {
  const e = passing();
  assert.equal(e.verdict.passed, true);
  const reason = afterLoadReason('reconcile', new Error('connection refused\nat line 2'));
  assert.equal(reason, 'after the load: reconcile failed: connection refused');
  const f = failAfterLoad(e, [reason]);
  assert.equal(f.verdict.passed, false);
  assert.equal(f.verdict.state, 'FAIL');
  assert.deepEqual(f.verdict.reasons, [reason]);
  assert.deepEqual(f.report.verdict, { passed: false, state: 'FAIL', interrupted: false, reasons: [reason] });
  assert.equal(f.report.p99_ms, e.report.p99_ms, 'the figures are the load’s, unchanged');
  const s = summarizeRepeat(id, f.report, f.verdict, { probe: false, reconciled: false });
  assert.equal(s.passed, false);
  assert.deepEqual(s.reasons, [reason]);
  assert.equal(e.verdict.passed, true, 'the original evaluation is not changed');
});

test('nothing after the load: the evaluation is the load’s own', () => {
  const e = passing();
  assert.equal(failAfterLoad(e, []), e);
});

test('a stream that cannot be analysed: a FAIL verdict.json the report can read, and a summary with no figures', () => {
  const reasons = ['after the load: the analysis failed: truncated'];
  const v = unanalysedVerdict(reasons);
  assert.ok(VerdictSchema.safeParse(v).success);
  assert.equal(v.verdict.passed, false);
  const s = unanalysedSummary(id, reasons, false);
  assert.deepEqual([s.passed, s.reasons, s.p99Ms, s.samples], [false, reasons, null, 0]);
});

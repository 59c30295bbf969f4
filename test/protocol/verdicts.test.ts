// test-mode: unit
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSamples } from '../../lib/protocol/analysis';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { sustainedGate } from '../../lib/protocol/gates';
import { formatRunReport, verdictLine } from '../../lib/protocol/run-report';
import { probeVerdict, repeatVerdict } from '../../lib/protocol/verdicts';
import { VERDICT_EXIT_CODE } from '../../client/exit-codes';
import { cols, dropped, plan, planned, req, second } from './fixtures';

/** 12 s of ingest at 100/s, 5 ms; a probe at 1/s cycling three endpoints with the given latencies. */
function stream(aggregateMs: number, o: { probeStatus?: number; probeDrop?: boolean } = {}) {
  const rows = [];
  for (let s = 0; s < 15; s++) rows.push(...second(s, 100, () => 5));
  const names = ['probe:aggregate', 'probe:invoices', 'probe:customers'] as const;
  for (let k = 0; k < 12; k++) {
    const scenario = names[k % 3];
    rows.push(req(k, scenario === 'probe:aggregate' ? aggregateMs : 4, { scenario, events: 0, quantity: 0, status: k === 4 && o.probeStatus ? o.probeStatus : 200 }));
  }
  // a drop between the probe's scheduled times is off its schedule: that stream goes without a plan
  if (o.probeDrop) return analyzeSamples(cols([...rows, dropped(11.5, { scenario: 'probe:customers', events: 0 })]));
  return analyzeSamples(planned(rows, plan(100, 1, 15, { probeRate: 1 })));
}

test('a probe over budget while ingest holds: both verdicts are reported, and the repeat fails', () => {
  const a = stream(620);
  const reconciliation = { rows_written: a.ingest.events_claimed, quantity_gained: a.ingest.quantity_claimed };
  const { verdict, report } = evaluateRun(a, { p99LimitMs: 50, reconciliation, probeP99Ms: 500 });
  assert.equal(verdict.ingest.passed, true, 'ingest holds');
  assert.equal(verdict.probe.state, 'DEGRADED');
  assert.equal(verdict.passed, false);
  assert.deepEqual(verdict.reasons, ['probe probe:aggregate: p99 620 ms > budget 500 ms']);
  // ingest latency is ingest only: the 620 ms probe is not in it
  assert.equal(report.p99_ms, 5);
  assert.deepEqual(report.probe.endpoints['probe:aggregate'], { samples: 4, failed: 0, dropped: 0, p50_ms: 620, p99_ms: 620, over_budget: true });
  assert.deepEqual(report.probe.endpoints['probe:invoices'], { samples: 4, failed: 0, dropped: 0, p50_ms: 4, p99_ms: 4, over_budget: false });
  assert.equal(report.probe.verdict, 'DEGRADED');
  assert.equal(report.gate.passed, true);
});

test('a probe within budget is OK; no probe is OFF', () => {
  assert.equal(probeVerdict(stream(300).probe).state, 'OK');
  const noProbe = analyzeSamples(cols(second(0, 10, () => 1)));
  assert.deepEqual(probeVerdict(noProbe.probe), { state: 'OFF', budget_ms: 500, reasons: [], endpoints: [] });
});

test('a probe request that failed or was dropped degrades the probe too', () => {
  const f = probeVerdict(stream(300, { probeStatus: 500 }).probe);
  assert.equal(f.state, 'DEGRADED');
  assert.deepEqual(f.reasons, ['probe:invoices: 1 of 4 requests failed']);
  const d = probeVerdict(stream(300, { probeDrop: true }).probe);
  assert.deepEqual(d.reasons, ['probe:customers: 1 of 5 requests dropped']);
});

test('the budget is the caller’s: 700 ms holds what 500 ms does not', () => {
  assert.equal(probeVerdict(stream(620).probe, 700).state, 'OK');
});

test('an interrupted repeat never passes, whatever its gate', () => {
  const a = stream(10);
  const v = repeatVerdict(sustainedGate(a.ingest), probeVerdict(a.probe), true);
  assert.equal(v.passed, false);
  assert.equal(v.interrupted, true);
  assert.match(v.reasons.at(-1) ?? '', /interrupted/);
});

test('a stream sent 900 ms late fails "instrument late", though its gated p99 is 5 ms', () => {
  // Every request sent 900 ms after its intended time, answered 5 ms after it was sent: done - sent
  // (the gated latency) is 5 ms, done - intended (what a user on schedule saw) is 905 ms.
  const rows = [];
  for (let s = 0; s < 15; s++) rows.push(...second(s, 100, () => 5, { lagMs: 900 }));
  const a = analyzeSamples(planned(rows, plan(100, 1, 15)));
  const reconciliation = { rows_written: a.ingest.events_claimed, quantity_gained: a.ingest.quantity_claimed };
  const { verdict, report } = evaluateRun(a, { p99LimitMs: 50, reconciliation });
  assert.equal(report.p99_ms, 5);
  assert.equal(report.schedule_lag_p99_ms, 900);
  assert.equal(report.co_p99_ms, 905);
  assert.equal(verdict.passed, false);
  assert.equal(verdict.state, 'FAIL');
  assert.deepEqual(verdict.ingest.checks.filter((c) => c.passed === false).map((c) => c.name), ['instrument']);
  assert.match(
    verdict.reasons[0],
    /^instrument late: schedule lag p99 900 ms > 5 ms \(10 % of the p99 limit 50 ms\), max 900 ms > 50 ms \(the p99 limit\), late seconds 0-14; .*gated p99 5 ms .*corrected p99 905 ms/,
  );
  assert.match(formatRunReport(report), /^FAIL: instrument late: schedule lag p99 900 ms/m);
});

test('the instrument limit is 10 % of the p99 limit, or 5 ms without one; a ladder rung has none', () => {
  const lagged = (lagMs: number) => {
    const rows = [];
    for (let s = 0; s < 15; s++) rows.push(...second(s, 100, () => 5, { lagMs }));
    const a = analyzeSamples(planned(rows, plan(100, 1, 15)));
    return { a, reconciliation: { rows_written: a.ingest.events_claimed, quantity_gained: a.ingest.quantity_claimed } };
  };
  const { a: a20, reconciliation: r20 } = lagged(20);
  const instrument = (e: ReturnType<typeof evaluateRun>) => e.verdict.ingest.checks.find((c) => c.name === 'instrument')?.passed;
  assert.equal(instrument(evaluateRun(a20, { p99LimitMs: 250, reconciliation: r20 })), true, '20 ms <= 25 ms');
  assert.equal(instrument(evaluateRun(a20, { p99LimitMs: 100, reconciliation: r20 })), false, '20 ms > 10 ms');
  assert.equal(instrument(evaluateRun(a20, { reconciliation: r20 })), false, '20 ms > 5 ms (no limit)');
  const { a: a4, reconciliation: r4 } = lagged(4);
  assert.equal(instrument(evaluateRun(a4, { reconciliation: r4 })), true, '4 ms <= 5 ms');
  const rung = evaluateRun(a20, { kind: 'ladder', reconciliation: r20 });
  assert.equal(rung.verdict.state, 'FAIL');
  assert.match(rung.verdict.reasons[0], /^instrument late: schedule lag p99 20 ms > 5 ms \(no p99 limit: 5 ms\), max 20 ms <= 50 ms \(no p99 limit: 50 ms\);/);
  // a closed loop has no schedule: the ceiling has no instrument check
  const ceiling = evaluateRun(a20, { kind: 'ceiling', reconciliation: r20 });
  assert.equal(ceiling.verdict.ingest.checks.some((c) => c.name === 'instrument'), false);
  assert.equal(ceiling.verdict.state, 'PASS');
});

test('unreconciled is never PASS: every check that ran passed, the verdict says which did not run', () => {
  const a = stream(10);
  const un = evaluateRun(a, { p99LimitMs: 50 });
  assert.equal(un.verdict.state, 'UNRECONCILED');
  assert.equal(un.report.verdict.state, 'UNRECONCILED');
  assert.equal(VERDICT_EXIT_CODE[un.verdict.state], 3);
  assert.equal(
    verdictLine(un.report),
    'UNRECONCILED: every check that ran passed (threshold, delivered, dropped, failed, samples, drift, instrument, probe); not checked: rows, quantity: the database was not counted for this run tag, so this is not a PASS',
  );
  // the same run reconciled is a PASS (exit 0)
  const reconciliation = { rows_written: a.ingest.events_claimed, quantity_gained: a.ingest.quantity_claimed };
  const ok = evaluateRun(a, { p99LimitMs: 50, reconciliation });
  assert.equal(ok.verdict.state, 'PASS');
  assert.equal(VERDICT_EXIT_CODE[ok.verdict.state], 0);
  assert.match(formatRunReport(ok.report), /\nPASS$/);
  // a failed check is FAIL (exit 99, a negative verdict) whether or not the database was counted
  const failed = evaluateRun(a, { p99LimitMs: 1 });
  assert.equal(failed.verdict.state, 'FAIL');
  assert.match(verdictLine(failed.report), /^FAIL \(not checked: rows, quantity\): threshold: p99 5 ms > limit 1 ms$/);
  // a ceiling without counts is unreconciled too; cut short is CUT SHORT (130)
  assert.equal(evaluateRun(a, { kind: 'ceiling' }).verdict.state, 'UNRECONCILED');
  const cut = evaluateRun(a, { p99LimitMs: 50, reconciliation, interrupted: true });
  assert.equal(cut.verdict.state, 'CUT SHORT');
  assert.equal(VERDICT_EXIT_CODE[cut.verdict.state], 130);
});

test('no threshold, no PASS: a sustained repeat without a p99 limit is NOT JUDGED (exit 4), reconciled or not', () => {
  const a = stream(10);
  const reconciliation = { rows_written: a.ingest.events_claimed, quantity_gained: a.ingest.quantity_claimed };
  const nj = evaluateRun(a, { reconciliation });
  assert.equal(nj.verdict.state, 'NOT JUDGED');
  assert.equal(nj.verdict.passed, false, 'every check that ran passed, and still it does not count as a pass');
  assert.match(nj.verdict.reasons.join('; '), /not judged: no threshold \(not a pass, not the service's fault\)/);
  assert.equal(VERDICT_EXIT_CODE[nj.verdict.state], 4);
  assert.equal(
    verdictLine(nj.report),
    'NOT JUDGED (no threshold): every check that ran passed (delivered, dropped, failed, rows, quantity, samples, drift, instrument, probe); not checked: threshold: without a p99 limit the latency was held to nothing, so this is not a PASS',
  );
  assert.doesNotMatch(formatRunReport(nj.report), /PASS \(not checked/);
  // without counts either: still NOT JUDGED, naming both
  assert.match(verdictLine(evaluateRun(a).report), /^NOT JUDGED \(no threshold\): .*not checked: threshold, rows, quantity: /);
  // a failed check is still FAIL; a rung and a ceiling have no threshold to miss
  assert.equal(evaluateRun(a, { reconciliation: { ...reconciliation, rows_written: 0 } }).verdict.state, 'FAIL');
  assert.equal(evaluateRun(a, { kind: 'ceiling', reconciliation }).verdict.state, 'PASS');
  assert.equal(new Set(Object.values(VERDICT_EXIT_CODE)).size, Object.keys(VERDICT_EXIT_CODE).length, 'each state its own exit code');
});

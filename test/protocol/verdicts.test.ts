import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSamples } from '../../lib/protocol/analysis';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { sustainedGate } from '../../lib/protocol/gates';
import { probeVerdict, repeatVerdict } from '../../lib/protocol/verdicts';
import { cols, dropped, req, second } from './fixtures';

/** 12 s of ingest at 100/s, 5 ms; a probe at 1/s cycling three endpoints with the given latencies. */
function stream(aggregateMs: number, o: { probeStatus?: number; probeDrop?: boolean } = {}) {
  const rows = [];
  for (let s = 0; s < 12; s++) rows.push(...second(s, 100, () => 5));
  const names = ['probe:aggregate', 'probe:invoices', 'probe:customers'] as const;
  for (let k = 0; k < 12; k++) {
    const scenario = names[k % 3];
    rows.push(req(k, scenario === 'probe:aggregate' ? aggregateMs : 4, { scenario, events: 0, quantity: 0, status: k === 4 && o.probeStatus ? o.probeStatus : 200 }));
  }
  if (o.probeDrop) rows.push(dropped(11.5, { scenario: 'probe:customers', events: 0 }));
  return analyzeSamples(cols(rows));
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

test('a generator that could not keep its schedule is named in the report, without changing the gate', () => {
  const rows = [];
  for (let s = 0; s < 12; s++) rows.push(...second(s, 100, () => 5, { lagMs: s === 5 ? 40 : 0 }));
  const late = evaluateRun(analyzeSamples(cols(rows)));
  assert.equal(late.report.instrument_warnings.length, 1);
  assert.match(late.report.instrument_warnings[0], /^the generator was late: schedule lag p99 40 ms/);
  assert.equal(evaluateRun(stream(10)).report.instrument_warnings.length, 0);
});

// test-mode: unit
// Issue 47, item 2: a recorded calibration stands for a campaign only when it covers it
// (lib/protocol/calibration-record.ts). A complete record of the campaign's cases, limit and
// tolerances has no gaps; each way a record can fall short is named, one gap each: a one-case file
// (what the tests used to forge), no floor, another spec's limit, other tolerances, a floor too coarse
// or too small, a verdict its own cases contradict.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CALIBRATION_CASES } from '../../lib/loadgen/calibration-cases';
import { recordedCalibrationGaps, type RecordedCalibration } from '../../lib/protocol/calibration-record';
import { CALIBRATION_TOLERANCES } from '../../lib/protocol/calibration-truth';

const need = { cases: CALIBRATION_CASES, p99LimitMs: 50 };
const truth = { joined: 2400, server_p50_ms: 0.05, server_p99_ms: 0.2, client_p50_ms: 0.15, client_p99_ms: 1.7, excess_p50_ms: 0.1, excess_p99_ms: 1.5, schedule_lag_p99_ms: 1.2 };

/** A calibration as the campaign's step writes it, every case passed, against a 50-ms limit. */
function completeRecord(): RecordedCalibration & { cases: Array<{ id: number; name: string; passed: boolean; detail: string; truth: typeof truth }> } {
  return {
    calibrated: true,
    cases: CALIBRATION_CASES.map((c) => ({ id: c.id, name: c.name, passed: true, detail: `case ${c.id} ${c.name}: -> ok`, truth })),
    floor: { samples: 2400, p99_ms: 1.5, p99_limit_ms: 50 },
    p99_limit_ms: 50,
    tolerances: { ...CALIBRATION_TOLERANCES },
  };
}

test('a complete record of this campaign\'s calibration has no gaps; the same record judged NOT CALIBRATED (a case off) neither', () => {
  assert.deepEqual(recordedCalibrationGaps(completeRecord(), need), []);
  const refused = completeRecord();
  refused.calibrated = false;
  refused.cases[3].passed = false;
  refused.floor = null; // a refusal need not have measured a floor
  assert.deepEqual(recordedCalibrationGaps(refused, need), []);
});

test('the one-case file the tests used to forge covers nothing: every missing case, the limit, the tolerances and the floor are named', () => {
  const forged: RecordedCalibration = { calibrated: true, cases: [{ name: 'recorded by test/campaign/outage.test.ts', passed: true }] };
  assert.deepEqual(recordedCalibrationGaps(forged, need), [
    ...CALIBRATION_CASES.map((c) => `case ${c.id} (${c.name}) is not in it`),
    'its case "recorded by test/campaign/outage.test.ts" has no id',
    "it names no p99 limit (this campaign's smallest is 50 ms)",
    'it names no tolerances',
    'it says calibrated, but has no floor',
  ]);
  // With an id, a single floor case is still eight cases short.
  const oneCase: RecordedCalibration = { ...completeRecord(), cases: [completeRecord().cases[0]] };
  assert.deepEqual(recordedCalibrationGaps(oneCase, need), CALIBRATION_CASES.slice(1).map((c) => `case ${c.id} (${c.name}) is not in it`));
});

test('each way a record falls short is named, one gap each', () => {
  const gaps = (edit: (r: ReturnType<typeof completeRecord>) => void) => {
    const r = completeRecord();
    edit(r);
    return recordedCalibrationGaps(r, need);
  };
  // another spec's limit (the floor judged against it too)
  assert.deepEqual(
    gaps((r) => {
      r.p99_limit_ms = 500;
      r.floor = { ...r.floor!, p99_limit_ms: 500 };
    }),
    ["it was judged against a smallest p99 limit of 500 ms, this campaign's is 50 ms", "its floor was judged against 500 ms, this campaign's smallest p99 limit is 50 ms"],
  );
  assert.deepEqual(gaps((r) => (r.floor = null)), ['it says calibrated, but has no floor']);
  assert.deepEqual(gaps((r) => (r.floor = { ...r.floor!, samples: 300 })), [`its floor has 300 samples, a calibration needs >= ${CALIBRATION_TOLERANCES.floorMinSamples}`]);
  assert.deepEqual(gaps((r) => (r.floor = { ...r.floor!, p99_ms: 10.5 })), ['its floor p99 10.5 ms is over 20 % of the 50-ms limit (10 ms)']);
  assert.deepEqual(gaps((r) => (r.tolerances = { ...r.tolerances, floorShareOfLimit: 0.5 })), ["its tolerance floorShareOfLimit is 0.5, this build's is 0.2"]);
  assert.deepEqual(gaps((r) => (r.cases[2].passed = false)), ['it says calibrated, but case 2 did not pass']);
  assert.deepEqual(gaps((r) => (r.calibrated = false)), ['it says not calibrated, yet every case in it passed']);
  assert.deepEqual(gaps((r) => (r.cases[5].name = 'something else')), [`its case 5 is "something else", this campaign's is "${CALIBRATION_CASES[5].name}"`]);
  assert.deepEqual(gaps((r) => delete (r.cases[4] as { truth?: unknown }).truth), [`its case 4 (${CALIBRATION_CASES[4].name}) has no truth (the server's own figures it was judged by)`]);
  assert.deepEqual(gaps((r) => r.cases.push({ ...r.cases[1] })), ['case 1 is in it 2 times']);
  assert.deepEqual(gaps((r) => r.cases.push({ ...r.cases[1], id: 42 })), ['its case 42 ("constant 5 ms service time") is not one this campaign runs']);
});

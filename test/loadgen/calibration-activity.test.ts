// The campaign's calibrate step (activities/calibrate.ts, run in-process as `rig step` does): the
// smallest p99 limit reaches the floor's judgement, and calibration/calibration.json keeps the floor,
// each case's truth and the tolerances, written before the refusal; each case's stream and the
// server's per-request times are kept beside it. Runs beside other files: a 0.01-ms limit is refused on
// any host, and nothing asserted depends on how fast this one is (the floor's 2,000 samples and its
// judgement on a quiet host are test/loadgen/calibration-floor.test.ts's, alone).
// A recorded calibration is believed only when it covers the campaign (issue 47, item 2): a forged
// one-case file or another spec's limit is refused naming each gap; the test hook
// (RIG_TEST_CALIBRATION_STAND_IN, test/harness/calibration-stand-in.ts) records a stand-in under
// RIG_TESTING=1 and is refused outside it, naming the variable.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { calibrateInstrument } from '../../activities/calibrate';
import type { CalibrationFile } from '../../lib/evidence/records';
import { CalibrationSchema } from '../../lib/evidence/records';
import { CALIBRATION_CASES } from '../../lib/loadgen/calibration-cases';
import { CALIBRATION_TOLERANCES } from '../../lib/protocol/calibration-truth';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-calibration-activity-'));
const saved = process.env.RIG_RESULTS;
process.env.RIG_RESULTS = root;
after(() => {
  if (saved === undefined) delete process.env.RIG_RESULTS;
  else process.env.RIG_RESULTS = saved;
  fs.rmSync(root, { recursive: true, force: true });
});

test('calibrateInstrument: a floor too coarse for the campaign smallest p99 limit refuses the campaign; the evidence says why', async () => {
  const campaignId = 'calib-activity';
  // 0.01 ms: far below any loopback floor, so the refusal is certain on any host
  await assert.rejects(calibrateInstrument({ campaignId, p99LimitMs: 0.01 }), (err: Error & { type?: string; nonRetryable?: boolean }) => {
    assert.equal(err.type, 'CalibrationRefusal');
    assert.equal(err.nonRetryable, true);
    assert.match(err.message, /case 0 instrument floor \(0 ms service time\): floor p99 [\d.]+ ms is [\d.]+ % of the smallest p99 limit 0\.01 ms, over 20 %/);
    return true;
  });
  const dir = path.join(root, campaignId);
  const file = JSON.parse(fs.readFileSync(path.join(dir, 'calibration', 'calibration.json'), 'utf8')) as CalibrationFile;
  assert.ok(CalibrationSchema.safeParse(file).success, 'the report reads it');
  assert.equal(file.calibrated, false);
  assert.equal(file.p99_limit_ms, 0.01);
  assert.deepEqual(file.cases.map((c) => c.id), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.ok(file.floor && file.floor.samples > 0 && file.floor.p99_limit_ms === 0.01);
  assert.equal(file.floor.p99_ms, file.cases[0].truth?.excess_p99_ms);
  for (const c of file.cases) assert.ok(c.truth && c.truth.joined > 0 && c.truth.server_p50_ms !== null, `case ${c.id} has its truth`);
  assert.deepEqual(Object.keys(file.tolerances ?? {}).sort(), ['excessP50Ms', 'floorMinSamples', 'floorShareOfLimit', 'serverP50Ms']);
  // The host's steal while the cases ran, and the bound it sets for the repeats (issue 34).
  assert.ok(file.host_steal && file.host_steal.max >= file.host_steal.median && file.host_steal.median >= 0, JSON.stringify(file.host_steal));
  assert.ok(file.steal_bound_pct !== undefined && file.steal_bound_pct >= 5 && file.steal_bound_pct >= file.host_steal.max, `bound ${file.steal_bound_pct}`);
  // the measurements behind it, per attempt
  const kept = fs.readdirSync(path.join(dir, 'calibration', 'a1')).sort();
  for (let id = 0; id <= 8; id++) {
    assert.ok(kept.includes(`case-${id}.csv.gz`) && kept.includes(`case-${id}.server-truth.csv`), `case ${id}: ${kept.join(', ')}`);
  }
  assert.match(fs.readFileSync(path.join(dir, 'campaign.log'), 'utf8'), /calibration instrument floor p50 [\d.]+ ms, p99 [\d.]+ ms/);
});

test('calibrateInstrument run again for the same campaign (a retry) returns the recorded judgement and measures nothing', async () => {
  const campaignId = 'calib-activity'; // judged NOT CALIBRATED by the test above
  const dir = path.join(root, campaignId);
  const before = fs.readdirSync(path.join(dir, 'calibration')).sort();
  await assert.rejects(calibrateInstrument({ campaignId, p99LimitMs: 0.01 }), (err: Error & { type?: string }) => {
    assert.equal(err.type, 'CalibrationRefusal');
    assert.match(err.message, /recorded by an earlier attempt.*case 0 instrument floor/);
    return true;
  });
  assert.deepEqual(fs.readdirSync(path.join(dir, 'calibration')).sort(), before, 'no new attempt folder: nothing was measured');
  // And a recorded CALIBRATED that covers the campaign (every case, its limit, these tolerances, a floor) is returned as it was.
  const okId = 'calib-activity-ok';
  record(okId, completeRecord());
  const out = await calibrateInstrument({ campaignId: okId, p99LimitMs: 50 });
  assert.equal(out.summary, 'CALIBRATED (9/9); floor p50 0.10 ms, p99 1.50 ms (recorded by an earlier attempt)');
  assert.equal(out.stealBoundPct, 7);
});

/** A calibration as the step writes it: every case passed, a 50-ms limit, this build's tolerances, a fine floor. */
function completeRecord(): CalibrationFile {
  const truth = { joined: 2400, client_only: 0, server_only: 0, server_p50_ms: 0.05, server_p99_ms: 0.2, client_p50_ms: 0.15, client_p99_ms: 1.7, excess_p50_ms: 0.1, excess_p99_ms: 1.5, schedule_lag_p99_ms: 1.2 };
  return {
    calibrated: true,
    cases: CALIBRATION_CASES.map((c) => ({ id: c.id, name: c.name, passed: true, detail: `case ${c.id} ${c.name}: -> ok`, truth })),
    floor: { samples: 2400, p50_ms: 0.1, p99_ms: 1.5, p99_limit_ms: 50, share_of_limit: 0.03 },
    p99_limit_ms: 50,
    tolerances: { ...CALIBRATION_TOLERANCES },
    host_steal: { max: 6.2, median: 0.4 },
    steal_bound_pct: 7,
  };
}

function record(campaignId: string, file: CalibrationFile): void {
  fs.mkdirSync(path.join(root, campaignId, 'calibration'), { recursive: true });
  fs.writeFileSync(path.join(root, campaignId, 'calibration', 'calibration.json'), JSON.stringify(file));
}

/** Runs fn with these variables set (undefined: unset), then puts them back. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const put = (v: Record<string, string | undefined>) => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
    }
  };
  put(vars);
  try {
    return await fn();
  } finally {
    put(saved);
  }
}

// Issue 47, item 2: a recorded calibration is believed only when it covers this campaign.
test('a recorded calibration that does not cover the campaign is refused, naming each gap: the forged one-case file, another spec\'s limit', async () => {
  const forged = 'calib-forged';
  record(forged, { calibrated: true, cases: [{ id: 0, name: 'floor', passed: true, detail: 'case 0 -> ok' }], floor: { samples: 2400, p50_ms: 0.1, p99_ms: 1.5, p99_limit_ms: 50, share_of_limit: 0.03 } });
  await assert.rejects(calibrateInstrument({ campaignId: forged, p99LimitMs: 50 }), (err: Error & { type?: string; nonRetryable?: boolean }) => {
    assert.equal(err.type, 'CalibrationRefusal');
    assert.equal(err.nonRetryable, true);
    assert.match(err.message, /^calibration\/calibration\.json, found before this attempt measured, does not cover this campaign, so it is not believed: its case 0 is "floor", this campaign's is "instrument floor \(0 ms service time\)"; case 1 \(constant 5 ms service time\) is not in it; /);
    assert.match(err.message, /case 8 \(a spike to 5x\) is not in it; it names no p99 limit \(this campaign's smallest is 50 ms\); it names no tolerances\. It is evidence, written once: remove it to calibrate again, or start the campaign under a new id$/);
    return true;
  });
  assert.ok(!fs.existsSync(path.join(root, forged, 'calibration', 'a1')), 'nothing measured: the refusal came first');
  // A complete record of another spec's limit (500 ms) does not stand for a campaign judged at 50 ms.
  const other = 'calib-other-limit';
  const file = completeRecord();
  record(other, { ...file, p99_limit_ms: 500, floor: { ...file.floor!, p99_limit_ms: 500 } });
  await assert.rejects(calibrateInstrument({ campaignId: other, p99LimitMs: 50 }), (err: Error & { type?: string }) => {
    assert.equal(err.type, 'CalibrationRefusal');
    assert.match(err.message, /not believed: it was judged against a smallest p99 limit of 500 ms, this campaign's is 50 ms; its floor was judged against 500 ms, this campaign's smallest p99 limit is 50 ms\. /);
    return true;
  });
  // The same file refused at 0.01 ms (the first test's) is not a refusal of a campaign judged at 50 ms either.
  await assert.rejects(calibrateInstrument({ campaignId: 'calib-activity', p99LimitMs: 50 }), /does not cover this campaign, so it is not believed: it was judged against a smallest p99 limit of 0\.01 ms, this campaign's is 50 ms/);
});

test('the test hook: RIG_TEST_CALIBRATION_STAND_IN records a stand-in under RIG_TESTING=1, and is refused outside it, naming the variable', async () => {
  // Under the test suite: a stand-in, written and said to be one, measuring nothing; a retry returns it.
  const id = 'calib-stand-in';
  const why = 'calibration-activity.test.ts: the hook itself';
  const out = await withEnv({ RIG_TESTING: '1', RIG_TEST_CALIBRATION_STAND_IN: why }, () => calibrateInstrument({ campaignId: id, p99LimitMs: 50 }));
  assert.equal(out.summary, `CALIBRATED by a test's stand-in, nothing measured (${why})`);
  const file = JSON.parse(fs.readFileSync(path.join(root, id, 'calibration', 'calibration.json'), 'utf8')) as CalibrationFile;
  assert.deepEqual(file, { calibrated: true, test_stand_in: why, cases: [{ name: 'test stand-in: not measured', passed: true, detail: why }] });
  assert.ok(CalibrationSchema.safeParse(file).success, 'the report reads it');
  assert.deepEqual(fs.readdirSync(path.join(root, id, 'calibration')), ['calibration.json'], 'nothing measured');
  assert.deepEqual(await withEnv({ RIG_TESTING: '1', RIG_TEST_CALIBRATION_STAND_IN: undefined }, () => calibrateInstrument({ campaignId: id, p99LimitMs: 50 })), out);
  // (A load node's calibration is never a stand-in: test/campaign/load-node-calibration.test.ts runs the nodes' for real beside the hook.)
});

test('outside the test suite the hook is refused, naming RIG_TESTING: a stand-in calibration.json, and RIG_TEST_CALIBRATION_STAND_IN itself', async () => {
  // A stand-in file, as the hook writes it, found by a campaign that is not a test's.
  const id = 'calib-stand-in-outside';
  const why = 'calibration-activity.test.ts: the hook itself';
  record(id, { calibrated: true, test_stand_in: why, cases: [{ name: 'test stand-in: not measured', passed: true, detail: why }] });
  await withEnv({ RIG_TESTING: undefined, RIG_TEST_CALIBRATION_STAND_IN: undefined }, () =>
    assert.rejects(calibrateInstrument({ campaignId: id, p99LimitMs: 50 }), (err: Error & { type?: string; nonRetryable?: boolean }) => {
      assert.equal(err.type, 'CalibrationRefusal');
      assert.equal(err.nonRetryable, true);
      assert.equal(
        err.message,
        `calibration/calibration.json is a test's stand-in, not a calibration (test_stand_in: "${why}"): nothing was measured, and a stand-in is honoured only when RIG_TESTING=1 (the test suite sets it); it is evidence, written once: remove it to calibrate again, or start the campaign under a new id`,
      );
      return true;
    }),
  );
  // And the variable, before anything is measured or written.
  const fresh = 'calib-stand-in-refused';
  await withEnv({ RIG_TESTING: undefined, RIG_TEST_CALIBRATION_STAND_IN: why }, () =>
    assert.rejects(calibrateInstrument({ campaignId: fresh, p99LimitMs: 0.01 }), (err: Error & { type?: string; nonRetryable?: boolean }) => {
      assert.equal(err.type, 'TestSwitchRefusal');
      assert.equal(err.nonRetryable, true);
      assert.equal(
        err.message,
        `RIG_TEST_CALIBRATION_STAND_IN=${why} is a test-only switch (it records a stand-in for the campaign's calibration and measures nothing, so its verdicts would rest on no calibration), honoured only when RIG_TESTING=1 (the test suite sets it): unset RIG_TEST_CALIBRATION_STAND_IN`,
      );
      return true;
    }),
  );
  assert.ok(!fs.existsSync(path.join(root, fresh, 'calibration')), 'nothing measured, nothing written');
});

// The campaign's calibrate step (activities/calibrate.ts, run in-process as `rig step` does): the
// smallest p99 limit reaches the floor's judgement, and calibration/calibration.json keeps the floor,
// each case's truth and the tolerances, written before the refusal; each case's stream and the
// server's per-request times are kept beside it. Runs beside other files: a 0.01-ms limit is refused on
// any host, and nothing asserted depends on how fast this one is (the floor's 2,000 samples and its
// judgement on a quiet host are test/loadgen/calibration-floor.test.ts's, alone).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { calibrateInstrument } from '../../activities/calibrate';
import type { CalibrationFile } from '../../lib/evidence/records';
import { CalibrationSchema } from '../../lib/evidence/records';

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
  for (let id = 0; id <= 6; id++) {
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
  // And a recorded CALIBRATED is returned as it was.
  const okId = 'calib-activity-ok';
  fs.mkdirSync(path.join(root, okId, 'calibration'), { recursive: true });
  const recorded: CalibrationFile = { calibrated: true, cases: [{ id: 0, name: 'floor', passed: true, detail: 'case 0 -> ok' }], floor: { samples: 2400, p50_ms: 0.1, p99_ms: 1.5, p99_limit_ms: 50, share_of_limit: 0.03 } };
  fs.writeFileSync(path.join(root, okId, 'calibration', 'calibration.json'), JSON.stringify(recorded));
  const out = await calibrateInstrument({ campaignId: okId, p99LimitMs: 50 });
  assert.equal(out.summary, 'CALIBRATED (1/1); floor p50 0.10 ms, p99 1.50 ms (recorded by an earlier attempt)');
});

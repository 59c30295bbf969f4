// test-mode: unit
// The database calibration's verdicts (lib/protocol/db-calibration.ts): each case ok only when the
// evidence found the event within its tolerance, the verdict line names every failed case and its fix,
// and the page's mark appears only when a case failed (beside the database headings, report/tables.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dbMarked } from '../../lib/evidence/report/tables';
import { caseError, dbCalibrationMark, dbVerdictLine, judgeLock, judgeMarker, judgeWal, judgeZone, summarizeCases, type MarkerReading } from '../../lib/protocol/db-calibration';

const lock = (lockSamples: number, topEvent: string | null = 'Lock:tuple') => judgeLock({ knownSeconds: 12, sessions: 4, lockSamples, backendSamples: lockSamples, snapshots: 30, spanSeconds: 3, topEvent });
const marker = (kind: 'vacuum' | 'checkpoint', offMs: number | null, classified: string | null = kind): MarkerReading => ({ kind, trueMs: 1_000_000, markerMs: offMs === null ? null : 1_000_000 + offMs, classified, unplaced: 0, markerLine: null });

test('lock wait: within ±20 % of the known seconds and attributed to Lock waits, else off', () => {
  assert.equal(lock(120).ok, true); // 120/30 x 3 s = 12 s
  assert.equal(lock(140).ok, true); // 14 s: +16.7 %
  assert.match(lock(150).problems.join(), /\+25\.0 % off the known/);
  assert.match(lock(120, 'Timeout:CheckpointWriteDelay').problems.join(), /top wait is Timeout:CheckpointWriteDelay/);
});

test('WAL per event: ±2 % of PostgreSQL\'s count, and no count is a failure, never a pass', () => {
  const w = (rig: number | null, truthBytes: number | null) => judgeWal({ rows: 1000, rigBytesPerEvent: rig, rigRecordsPerEvent: 6.5, problem: rig === null ? 'no reading' : null, truthBytes, truthRecords: 6500, truthSource: 'pg_walinspect' });
  assert.equal(w(870, 860_000).ok, true);
  assert.match(w(780, 860_000).problems.join(), /-9\.3 % off pg_walinspect's/);
  assert.equal(w(870, null).ok, false);
  assert.equal(w(null, 860_000).ok, false);
});

test('markers: within 1 s and classified as what they were; the zone case needs both', () => {
  assert.equal(judgeMarker(marker('vacuum', -3)).ok, true);
  assert.match(judgeMarker(marker('checkpoint', 1500)).problems.join(), /1\.500 s off/);
  assert.match(judgeMarker(marker('checkpoint', 0, 'vacuum')).problems.join(), /classified vacuum/);
  assert.match(judgeMarker(marker('vacuum', null, null)).problems.join(), /no vacuum marker/);
  assert.equal(judgeZone('Europe/Berlin', [marker('vacuum', 0), marker('checkpoint', 2)]).ok, true);
  assert.equal(judgeZone('Europe/Berlin', [marker('vacuum', 0), marker('checkpoint', 3_600_000)]).ok, false);
});

test('the verdict line and the page mark name the failed cases', () => {
  const ok = summarizeCases([lock(120), judgeMarker(marker('vacuum', 0))], {}, 'a', 'b');
  assert.equal(dbVerdictLine(ok), 'CALIBRATED 2/2');
  assert.equal(dbCalibrationMark(ok), null);
  assert.equal(dbMarked({ db_calibration: { passed: 2, total: 2, failed: [], mark: null } }, 'What stops it'), 'What stops it');
  const off = summarizeCases([lock(200), judgeMarker(marker('vacuum', 0)), caseError('WAL per event', new Error('boom'))], {}, 'a', 'b');
  assert.match(dbVerdictLine(off), /^NOT CALIBRATED 1\/3: lock wait \(fix: .+\); WAL per event \(fix: /);
  const mark = dbCalibrationMark(off);
  assert.equal(mark, 'database NOT CALIBRATED (lock wait, WAL per event)');
  assert.equal(dbMarked({ db_calibration: { passed: 1, total: 3, failed: ['lock wait', 'WAL per event'], mark } }, 'What stops it'), 'What stops it [database NOT CALIBRATED (lock wait, WAL per event)]');
});

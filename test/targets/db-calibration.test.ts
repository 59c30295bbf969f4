// The database side's calibration (issue 31, item 6) on a real cluster: every provoked event is found
// by the rig's own evidence code (CALIBRATED 5/5), and each case fails when the regression it guards
// against is provoked: a sampler that counts every backend as a request, a WAL window cut short, and a
// cluster logging in Europe/Berlin whose stamps are read as UTC. One cluster for the file; each run
// drops its own database and puts the cluster's settings back, which the last test checks.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import { openFileLogWindow } from '../../lib/evidence/file-log-window';
import { withClient } from '../../lib/targets/db';
import { dbVerdictLine, failedCases, type DbCalibrationFile } from '../../lib/protocol/db-calibration';
import { runDbCalibration, type DbCalibrationOptions } from '../../lib/targets/db-calibration/run';
import { localWalDump } from '../../lib/targets/db-calibration/local';
import type { PgCluster } from '../../lib/targets/local/pg-cluster';
import { throwAwayCluster } from '../harness/pg';

const made = throwAwayCluster();
let cluster: PgCluster;
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-dbcal-test-'));
before(async () => {
  cluster = await made;
});

let n = 0;
async function calibrate(extra: Partial<DbCalibrationOptions> = {}): Promise<DbCalibrationFile> {
  const outFile = path.join(out, `run-${++n}.json`);
  const file = await runDbCalibration({
    superuserUrl: cluster.url(),
    openLog: async () => openFileLogWindow(cluster.logFile),
    waldump: localWalDump(cluster),
    outFile,
    walRows: 2000,
    lockHoldSeconds: 2,
    onCase: (c) => console.log(`  ${c.name}: ${c.measured} | known ${c.known} -> ${c.ok ? 'ok' : c.problems.join('; ')}`),
    ...extra,
  });
  // Written before it is summarised, and what it says is what was returned.
  assert.deepEqual(JSON.parse(fs.readFileSync(outFile, 'utf8')), JSON.parse(JSON.stringify(file)));
  console.log(dbVerdictLine(file));
  return file;
}

test('a healthy cluster and the rig as it is: CALIBRATED 5/5', async () => {
  const file = await calibrate();
  assert.deepEqual(file.cases.map((c) => c.name), ['lock wait', 'WAL per event', 'vacuum marker', 'checkpoint marker', 'non-UTC zone']);
  assert.deepEqual(failedCases(file), [], dbVerdictLine(file));
  assert.equal(dbVerdictLine(file), 'CALIBRATED 5/5');
  const wal = file.cases[1];
  assert.equal(wal.figures.truth_source, 'pg_walinspect');
});

test('a sampler that counts every backend as a request: the lock wait is off, and only it fails', async () => {
  const file = await calibrate({ only: ['lock'], regressions: { samplerCountsEveryone: true } });
  assert.deepEqual(failedCases(file), ['lock wait']);
  assert.match(dbVerdictLine(file), /^NOT CALIBRATED 0\/1: lock wait \(fix: /);
  assert.ok(Number(file.cases[0].figures.off) > 0.2, `counted ${String(file.cases[0].figures.off)} over the known`);
});

test('a WAL window cut short: WAL per event is off pg_walinspect\'s count', async () => {
  const file = await calibrate({ only: ['wal'], regressions: { walWindowCutShort: true } });
  assert.deepEqual(failedCases(file), ['WAL per event']);
  assert.ok(Number(file.cases[0].figures.off) < -0.02, String(file.cases[0].figures.off));
});

test('a cluster logging in Europe/Berlin whose stamps are read as UTC: the time-zone case fails', async () => {
  const file = await calibrate({ only: ['zone'], regressions: { logTimeZoneRead: 'UTC' } });
  assert.deepEqual(failedCases(file), ['non-UTC zone']);
  assert.match(file.cases[0].problems.join('; '), /checkpoint marker is 3(599\.9|600\.0)\d* s off its true time/);
});

test('every run leaves the cluster as it found it: settings back, its database and role dropped', async () => {
  await withClient(cluster.url(), async (c) => {
    const s = (await c.query<{ tz: string; nap: string }>("SELECT current_setting('log_timezone') AS tz, current_setting('autovacuum_naptime') AS nap")).rows[0];
    assert.deepEqual(s, { tz: 'UTC', nap: '1min' });
    const left = (await c.query("SELECT 1 FROM pg_database WHERE datname = 'rig_dbcal' UNION ALL SELECT 1 FROM pg_roles WHERE rolname = 'rig_dbcal_request'")).rowCount;
    assert.equal(left, 0);
  });
});

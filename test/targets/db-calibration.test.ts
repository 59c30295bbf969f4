// The database side's calibration (issue 31, item 6) on a real cluster: every provoked event is found
// by the rig's own evidence code (CALIBRATED 5/5, through the campaign's calibrate-database activity), and each case fails when the regression it guards
// against is provoked: a sampler that counts every backend as a request, a WAL window cut short, and a
// cluster logging in Europe/Berlin whose stamps are read as UTC. One local rig for the file; each run
// drops its own database and puts the cluster's settings back, which the last test checks. pg_waldump,
// the fallback where pg_walinspect is missing, is checked to count a range as pg_walinspect does.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import { withClient } from '../../lib/targets/db';
import { dbCaseLine, dbVerdictLine, failedCases, type DbCalibrationFile } from '../../lib/protocol/db-calibration';
import type { RigHandle } from '../../lib/protocol/campaign-result';
import { dbCalibrationActivities } from '../../activities/db-calibrate';
import { DbCalibrationRefusal, runDbCalibration, type DbCalibrationOptions } from '../../lib/targets/db-calibration/run';
import { localWalDump } from '../../lib/targets/db-calibration/local';
import { rigDbUrls, type RigDbUrls } from '../../lib/targets/local/connection';
import { openLocalPostgresLog } from '../../lib/targets/local/postgres-log';
import { provisionLocal } from '../../lib/targets/local/provision';
import { targetFor } from '../../lib/targets/registry';
import { isolatedStateDir, testCampaign } from '../harness/local-rig';

// A real local rig (the local target's provisioning: its cluster, passwords, log and record), as a
// campaign's calibrate-database step meets it after bring-up.
isolatedStateDir();
const campaign = testCampaign('dbcal');
let urls: RigDbUrls;
let before0: { tz: string; nap: string };
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-dbcal-test-'));
const settingsNow = () => withClient(urls.superuserUrl, async (c) => (await c.query<{ tz: string; nap: string }>("SELECT current_setting('log_timezone') AS tz, current_setting('autovacuum_naptime') AS nap")).rows[0]);
before(async () => {
  await provisionLocal(campaign, {});
  urls = rigDbUrls(campaign);
  before0 = await settingsNow();
});

let n = 0;
async function calibrate(extra: Partial<DbCalibrationOptions> = {}): Promise<DbCalibrationFile> {
  const outFile = path.join(out, `run-${++n}.json`);
  const file = await runDbCalibration({
    superuserUrl: urls.superuserUrl,
    openLog: async () => openLocalPostgresLog(campaign),
    waldump: localWalDump(urls.clusterDir),
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

test('a healthy cluster, through the campaign\'s step: CALIBRATED 5/5, its evidence written once, the same judgement on a retry', async () => {
  process.env.RIG_RESULTS = path.join(out, 'results');
  // The worker's own targets (lib/targets/registry.ts): the local rig's superuser URL and server log.
  const { calibrateDatabase } = dbCalibrationActivities({ targetFor });
  const input = { campaignId: campaign, rig: { campaignId: campaign, target: 'local' } as RigHandle };
  const r = await calibrateDatabase(input);
  const file = JSON.parse(fs.readFileSync(path.join(out, 'results', campaign, 'calibration', 'database.json'), 'utf8')) as DbCalibrationFile;
  for (const c of file.cases) console.log(`  ${dbCaseLine(c)}`);
  assert.deepEqual(file.cases.map((c) => c.name), ['lock wait', 'WAL per event', 'vacuum marker', 'checkpoint marker', 'non-UTC zone']);
  assert.deepEqual(r, { summary: 'database CALIBRATED 5/5', path: 'calibration/database.json', calibrated: true, passed: 5, total: 5, failed: [] });
  assert.equal(file.cases[1].figures.truth_source, 'pg_walinspect');
  assert.equal(file.settings.log_timezone, 'UTC');
  // A retry (the worker lost after the file was written) provokes nothing again.
  const again = await calibrateDatabase(input);
  assert.equal(again.summary, 'database CALIBRATED 5/5 (recorded by an earlier attempt)');
});

test('pg_waldump, the fallback where pg_walinspect cannot be had, counts an LSN range as pg_walinspect does', async () => {
  await withClient(urls.superuserUrl, async (c) => {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    await c.query('CREATE TABLE IF NOT EXISTS waltest (id bigint, body text)');
    const lsn = async () => (await c.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0].l;
    const start = await lsn();
    for (let i = 0; i < 20; i++) await c.query("INSERT INTO waltest SELECT g, repeat('x', 100) FROM generate_series(1, 50) g");
    const end = await lsn();
    const inspected = (await c.query<{ n: string; b: string }>('SELECT sum(count)::text AS n, sum(combined_size)::text AS b FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, false)', [start, end])).rows[0];
    const dumped = await localWalDump(urls.clusterDir)(start, end);
    assert.deepEqual(dumped, { records: Number(inspected.n), bytes: Number(inspected.b) });
  });
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

test('a role that is not a superuser (an RDS-fidelity rig\'s admin) is refused before anything is made', async () => {
  await assert.rejects(
    runDbCalibration({ superuserUrl: urls.ownerUrl, openLog: async () => openLocalPostgresLog(campaign), outFile: path.join(out, 'refused.json') }),
    (err: Error) => err instanceof DbCalibrationRefusal && /needs a superuser .* hardcount_owner is not one/.test(err.message),
  );
  assert.ok(!fs.existsSync(path.join(out, 'refused.json')));
});

test('every run leaves the cluster as it found it: settings back, its database and role dropped', async () => {
  assert.deepEqual(await settingsNow(), before0);
  await withClient(urls.superuserUrl, async (c) => {
    const left = (await c.query("SELECT 1 FROM pg_database WHERE datname = 'rig_dbcal' UNION ALL SELECT 1 FROM pg_roles WHERE rolname = 'rig_dbcal_request'")).rowCount;
    assert.equal(left, 0);
  });
});

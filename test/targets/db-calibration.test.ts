// The database side's calibration (issue 31, item 6) on a real cluster: every provoked event is found
// by the rig's own evidence code (CALIBRATED 5/5, through the campaign's calibrate-database activity), and each case fails when the regression it guards
// against is provoked: a sampler that counts every backend as a request, a WAL window cut short, and a
// cluster logging in Europe/Berlin whose stamps are read as UTC. One local rig for the file; each run
// drops its own database and puts the cluster's settings back, which the last test checks, also after a
// run killed mid-case (issue 47, item 4: the retry puts back the settings recorded before the first
// change, not the killed run's). pg_waldump, the fallback where pg_walinspect is missing, is checked to
// count a range as pg_walinspect does. The zone case's expected error is Berlin's offset at the test's
// instant (1 h or 2 h), not a constant.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import { withClient } from '../../lib/targets/db';
import { dbCaseLine, dbVerdictLine, failedCases, type DbCalibrationFile } from '../../lib/protocol/db-calibration';
import type { RigHandle } from '../../lib/protocol/campaign-result';
import { dbCalibrationActivities } from '../../activities/db-calibrate';
import { CALIBRATION_LOG_ZONE, DbCalibrationRefusal, runDbCalibration, type DbCalibrationOptions } from '../../lib/targets/db-calibration/run';
import type { SettingsRecord } from '../../lib/targets/db-calibration/scratch-db';
import { localWalDump } from '../../lib/targets/db-calibration/local';
import { rigDbUrls, type RigDbUrls } from '../../lib/targets/local/connection';
import { openLocalPostgresLog } from '../../lib/targets/local/postgres-log';
import { postgresParameters, provisionLocal } from '../../lib/targets/local/provision';
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

test('a cluster logging in Europe/Berlin whose stamps are read as UTC: the time-zone case fails, off by the zone\'s offset at that instant', async () => {
  const at = Date.now();
  const file = await calibrate({ only: ['zone'], regressions: { logTimeZoneRead: 'UTC' } });
  assert.deepEqual(failedCases(file), ['non-UTC zone']);
  // Berlin's wall clock is 1 h ahead of UTC in winter, 2 h in summer: a stamp read as UTC is that much late.
  const offset = offsetSeconds(CALIBRATION_LOG_ZONE, at);
  assert.ok(offset === 3600 || offset === 7200, `Europe/Berlin is UTC+${offset} s`);
  assert.match(file.cases[0].problems.join('; '), new RegExp(`checkpoint marker is (${offset - 1}\\.9|${offset}\\.0)\\d* s off its true time`));
});

/** A zone's offset from UTC at an instant (s), from its wall clock there as Intl prints it. */
function offsetSeconds(timeZone: string, atMs: number): number {
  const f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const p = Object.fromEntries(f.formatToParts(atMs).map((x) => [x.type, Number(x.value)]));
  return (Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(atMs / 1000) * 1000) / 1000;
}

test('a calibration killed mid-case (log_timezone and autovacuum_naptime changed, nothing put back): the retry puts back the settings from before the first change', async () => {
  // The step in a child process, killed while the time-zone case holds the cluster in Europe/Berlin
  // with a 1-s naptime (test/harness/db-calibration-child.ts); then the retry, as Temporal would run
  // it, on the same evidence folder. The settings the measured repeats then read are the rig's own.
  const results = path.join(out, 'results-killed');
  fs.mkdirSync(results, { recursive: true });
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'harness', 'db-calibration-child.ts'), campaign], {
    env: { ...process.env, RIG_RESULTS: results },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  child.stderr.on('data', (d: Buffer) => (said += d.toString()));
  const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      said += d.toString();
      if (said.includes('holding\n')) resolve();
    });
    void ended.then((code) => reject(new Error(`the step ended (exit ${code}) before the time-zone case held:\n${said}`)));
  });
  child.kill('SIGKILL');
  await ended;
  // Killed mid-case: the calibration's own settings are in force, its database still there.
  assert.deepEqual(await settingsNow(), { tz: CALIBRATION_LOG_ZONE, nap: '1s' });
  const recordFile = path.join(results, campaign, 'calibration', 'database-settings-before.json');
  const recorded = fs.existsSync(recordFile) ? fs.readFileSync(recordFile, 'utf8') : null;

  // The retry: the settings back before it measures (database.json names them as the rig has them), and after it.
  process.env.RIG_RESULTS = results;
  const { calibrateDatabase } = dbCalibrationActivities({ targetFor });
  const r = await calibrateDatabase({ campaignId: campaign, rig: { campaignId: campaign, target: 'local' } as RigHandle });
  const file = JSON.parse(fs.readFileSync(path.join(results, campaign, 'calibration', 'database.json'), 'utf8')) as DbCalibrationFile;
  assert.equal(file.settings.log_timezone, 'UTC', `the retry measured with the rig's log_timezone: ${r.summary}`);
  assert.deepEqual(await settingsNow(), before0);
  // And those are the spec's: the rig was provisioned with its parameters ({}), log_timezone UTC (pg-cluster.ts).
  assert.deepEqual(before0, { tz: 'UTC', nap: String(postgresParameters({}).autovacuum_naptime) });
  // What the retry restored from: the killed attempt's record, written before its first change, which
  // the retry did not rewrite (evidence, written once).
  assert.ok(recorded !== null, `the killed attempt recorded the settings first: ${recordFile}`);
  const record = JSON.parse(recorded) as SettingsRecord;
  assert.deepEqual(Object.fromEntries(Object.entries(record.settings).map(([k, v]) => [k, v.shown])), { autovacuum_naptime: before0.nap, log_timezone: before0.tz });
  assert.equal(fs.readFileSync(recordFile, 'utf8'), recorded);
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

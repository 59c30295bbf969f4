// calibrateDatabase: after bring-up, the database side is calibrated on the rig's own cluster
// (lib/targets/db-calibration/run.ts: lock wait, WAL per event, vacuum and checkpoint markers, a
// non-UTC log), in a database of its own there, before the seed. It needs a superuser: on a rig whose
// admin is not one (RDS-fidelity mode) it says so and provokes nothing. A case that fails does not stop the
// campaign: the page then marks every database figure with the failed cases (report's db section).
//
// Evidence: calibration/database.json (every case, measured vs known) and the samplers' rows of the
// attempt that wrote it under calibration/database-a<A>/.
//
// Safe to run twice: database.json is written once per campaign; an attempt that finds it returns its
// judgement instead of provoking the events again. An attempt killed mid-way left the cluster's changed
// settings and its scratch database behind: the next attempt drops that database first and puts the
// settings back, before it measures and at its end, from calibration/database-settings-before.json,
// which the first attempt wrote before its first change (never from what the killed one left).
import fs from 'node:fs';
import { DB_CALIBRATION_FILE, DB_CALIBRATION_SETTINGS_FILE } from '../lib/evidence/layout';
import { EvidenceStore } from '../lib/evidence/store';
import { dbCaseLine, dbVerdictLine, failedCases, type DbCalibrationFile } from '../lib/protocol/db-calibration';
import { DbCalibrationRefusal, runDbCalibration } from '../lib/targets/db-calibration/run';
import type { DbCalibrateInput, DbCalibrateOutput } from './contract';
import { attempt, heartbeat } from './context';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';

/** The provocations wait on autovacuum and the statistics for seconds at a time: beat on a timer. */
const HEARTBEAT_EVERY_MS = 5000;

export function dbCalibrationActivities(deps: ActivityDeps) {
  return { calibrateDatabase: (input: DbCalibrateInput) => calibrateDatabaseWith(deps, input) };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { calibrateDatabase } = dbCalibrationActivities(defaultDeps);

function output(file: DbCalibrationFile, path: string, note = ''): DbCalibrateOutput {
  return { summary: `database ${dbVerdictLine(file)}${note}`, path, calibrated: file.calibrated, passed: file.passed, total: file.total, failed: failedCases(file) };
}

async function calibrateDatabaseWith(deps: ActivityDeps, input: DbCalibrateInput): Promise<DbCalibrateOutput> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  if (store.exists(DB_CALIBRATION_FILE)) {
    return output(JSON.parse(fs.readFileSync(store.path(DB_CALIBRATION_FILE), 'utf8')) as DbCalibrationFile, DB_CALIBRATION_FILE, ' (recorded by an earlier attempt)');
  }
  let dir = `calibration/database-a${attempt()}`;
  for (let k = 2; store.exists(dir); k++) dir = `calibration/database-a${attempt()}-${k}`;
  const target = rigTarget(deps, input.rig);
  const { superuserUrl } = await target.dbUrls(input.campaignId);
  let last = 'starting';
  const timer = setInterval(() => heartbeat(last), HEARTBEAT_EVERY_MS);
  heartbeat(last);
  try {
    const file = await runDbCalibration({
      superuserUrl,
      openLog: () => target.openPostgresLog(input.campaignId),
      outFile: store.path(`${dir}/database.json`),
      settingsRecord: store.path(DB_CALIBRATION_SETTINGS_FILE),
      onCase: (c) => {
        last = dbCaseLine(c);
        heartbeat(last);
        store.appendLog(c.ok ? 'info' : 'warning', `database calibration ${last}`);
      },
    });
    store.writeJson(DB_CALIBRATION_FILE, file);
    return output(file, DB_CALIBRATION_FILE);
  } catch (err) {
    // Not a superuser (an RDS-fidelity rig's admin): nothing was provoked, nothing is judged.
    if (!(err instanceof DbCalibrationRefusal)) throw err;
    store.logWarning(`database calibration not run: ${err.message}`);
    return { summary: `database calibration not run: ${err.message}`, path: '', calibrated: false, passed: 0, total: 0, failed: [] };
  } finally {
    clearInterval(timer);
  }
}

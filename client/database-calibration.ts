// `rig calibrate --database`: the database side's calibration (lib/targets/db-calibration/run.ts), on
// a cluster of its own unless --db names one. The throw-away cluster is the rig's own kind
// (lib/targets/local/pg-cluster.ts: the local target's settings and logging), in a temporary folder the
// cluster's OS user can reach, removed afterwards; --db is a superuser URL of a running cluster, whose
// server log --log names (without it no marker can be read, and the marker cases fail saying so).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openFileLogWindow } from '../lib/evidence/file-log-window';
import type { DbCalibrationFile, DbCaseResult } from '../lib/protocol/db-calibration';
import { localWalDump } from '../lib/targets/db-calibration/local';
import { runDbCalibration, settingsRecordBeside, type DbCalibrationPart } from '../lib/targets/db-calibration/run';
import { PgCluster } from '../lib/targets/local/pg-cluster';

export interface DatabaseCalibrationArgs {
  db?: string;
  log?: string;
  outFile: string;
  only?: DbCalibrationPart[];
  onCase: (c: DbCaseResult) => void;
  onNote: (line: string) => void;
}

export async function calibrateDatabase(a: DatabaseCalibrationArgs): Promise<DbCalibrationFile> {
  if (a.db) {
    const file = await runDbCalibration({ superuserUrl: a.db, openLog: async () => openFileLogWindow(a.log), outFile: a.outFile, onCase: a.onCase, only: a.only });
    // Put back, so its job is done: a later run with the same --out records the cluster afresh. A run
    // killed part-way keeps it, and the next run with the same --out puts the settings back from it.
    fs.rmSync(settingsRecordBeside(a.outFile), { force: true });
    return file;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-dbcal-pg-'));
  fs.chmodSync(dir, 0o755); // the cluster's OS user (not root) must reach it
  a.onNote(`a throw-away PostgreSQL cluster in ${dir} (the local target's settings and logging)`);
  const cluster = await PgCluster.create({ dir });
  const stopOnExit = () => cluster.stopSync();
  process.once('exit', stopOnExit);
  try {
    // The throw-away cluster's settings record goes with it.
    const settingsRecord = path.join(dir, 'settings-before.json');
    return await runDbCalibration({ superuserUrl: cluster.url(), openLog: async () => openFileLogWindow(cluster.logFile), waldump: localWalDump(cluster.info.dir), outFile: a.outFile, onCase: a.onCase, only: a.only, settingsRecord });
  } finally {
    await cluster.destroy();
    process.removeListener('exit', stopOnExit);
  }
}

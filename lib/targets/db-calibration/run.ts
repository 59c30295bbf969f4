// `rig calibrate --database` and the campaign's calibrate-database step: the database side's events
// provoked on a cluster (its own database there, scratch-db.ts) and each judged against its truth
// (lib/protocol/db-calibration.ts): lock wait, WAL per event, the vacuum and checkpoint markers, and
// both markers again with the cluster logging in Europe/Berlin. The cluster's settings the calibration
// changes (autovacuum_naptime, log_timezone, through ALTER SYSTEM: a superuser's) are recorded before
// the first change (scratch-db.ts SystemSettings) and put back from that record after it, and before it
// when a killed run left them; its database and role are dropped, whatever happened. The results are written as JSON (`outFile`)
// before anything is summarised from them.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { writeAtomic } from '../../evidence/atomic';
import { readSettings } from '../../evidence/db-sampler';
import { pgConfig } from '../../pg/connection';
import { caseError, judgeMarker, judgeZone, summarizeCases, type DbCalibrationFile, type DbCaseName, type DbCaseResult } from '../../protocol/db-calibration';
import type { PostgresLogWindow } from '../target';
import { lockCase } from './lock-case';
import { markerCase } from './marker-case';
import { makeScratchDb, SystemSettings } from './scratch-db';
import type { ProvokedRegressions } from './sampling';
import { walCase, type WalDump } from './wal-case';

/** The zone of the time-zone case: not UTC, with a daylight-saving rule (CET/CEST). */
export const CALIBRATION_LOG_ZONE = 'Europe/Berlin';

export interface DbCalibrationOptions {
  /** A superuser on the cluster (any database). */
  superuserUrl: string;
  /** A window of the cluster's server log, opened now. */
  openLog: () => Promise<PostgresLogWindow>;
  /** pg_waldump --stats, when pg_walinspect cannot be had (a local cluster). */
  waldump?: WalDump;
  /** The results (JSON); the samplers' rows go beside it. */
  outFile: string;
  onCase?: (c: DbCaseResult) => void;
  /** Deliberate regressions, for the calibration's own tests. */
  regressions?: ProvokedRegressions;
  /** Rows of the WAL case (default 5,000) and seconds the lock is held (default 3). */
  walRows?: number;
  lockHoldSeconds?: number;
  /** Only these parts (default all): a check of those cases, not a calibration. */
  only?: readonly DbCalibrationPart[];
  /**
   * Where the cluster's settings are recorded before the first change, kept across attempts (a
   * campaign's: calibration/database-settings-before.json); default beside outFile (settingsRecordBeside).
   */
  settingsRecord?: string;
}

/** The cluster settings the calibration changes (ALTER SYSTEM), all recorded before the first change. */
export const CALIBRATION_SETTINGS = ['autovacuum_naptime', 'log_timezone'] as const;

/** The settings record's default place: beside the results, `<name>.settings-before.json`. */
export function settingsRecordBeside(outFile: string): string {
  return path.join(path.dirname(outFile), `${path.basename(outFile, '.json')}.settings-before.json`);
}

/** The parts a run may be limited to: markers are the vacuum and checkpoint cases together. */
export const DB_CALIBRATION_PARTS = ['lock', 'wal', 'markers', 'zone'] as const;
export type DbCalibrationPart = (typeof DB_CALIBRATION_PARTS)[number];

/**
 * The calibration needs a superuser (ALTER SYSTEM, CREATE DATABASE, CHECKPOINT): an RDS master user or
 * a local cluster's RDS-fidelity admin is not one. Said before anything is made.
 */
export class DbCalibrationRefusal extends Error {}

export async function runDbCalibration(opts: DbCalibrationOptions): Promise<DbCalibrationFile> {
  const startedAt = new Date().toISOString();
  const who = await superuser(opts.superuserUrl);
  if (!who.super) throw new DbCalibrationRefusal(`the database calibration needs a superuser (it changes autovacuum_naptime and log_timezone with ALTER SYSTEM, and puts them back); ${who.role} is not one`);
  const dir = path.join(path.dirname(opts.outFile), `${path.basename(opts.outFile, '.json')}-samples`);
  fs.mkdirSync(dir, { recursive: true });
  const cases: DbCaseResult[] = [];
  const done = (c: DbCaseResult) => {
    cases.push(c);
    opts.onCase?.(c);
  };
  const system = new SystemSettings(opts.superuserUrl, CALIBRATION_SETTINGS, opts.settingsRecord ?? settingsRecordBeside(opts.outFile));
  // An earlier run killed mid-case left its settings in force: back as recorded before anything is read or measured.
  await system.begin();
  const db = await makeScratchDb(opts.superuserUrl);
  let settings: Record<string, string> = {};
  const want = (p: DbCalibrationPart) => !opts.only || opts.only.includes(p);
  // A case that throws is a case that failed, with its error: the others still run, the file is still written.
  const attempt = async (names: DbCaseName[], fn: () => Promise<DbCaseResult[]>) => {
    try {
      for (const c of await fn()) done(c);
    } catch (err) {
      for (const name of names) done(caseError(name, err));
    }
  };
  try {
    settings = await named(db.url);
    if (want('lock')) await attempt(['lock wait'], async () => [await lockCase(db, { dir, holdSeconds: opts.lockHoldSeconds, regressions: opts.regressions })]);
    if (want('wal')) await attempt(['WAL per event'], async () => [await walCase(db, { rows: opts.walRows, waldump: opts.waldump, regressions: opts.regressions })]);
    if (want('markers') || want('zone')) await system.set('autovacuum_naptime', '1s');
    if (want('markers')) {
      await attempt(['vacuum marker', 'checkpoint marker'], async () => {
        const utc = await markerCase(db, { openLog: opts.openLog, dir, label: 'utc', regressions: opts.regressions });
        return [judgeMarker(utc.vacuum), judgeMarker(utc.checkpoint)];
      });
    }
    if (want('zone')) {
      await attempt(['non-UTC zone'], async () => {
        await system.set('log_timezone', CALIBRATION_LOG_ZONE);
        const zoned = await markerCase(db, { openLog: opts.openLog, dir, label: 'zone', regressions: opts.regressions });
        return [judgeZone(CALIBRATION_LOG_ZONE, [zoned.vacuum, zoned.checkpoint])];
      });
    }
  } finally {
    await system.restore();
    await db.drop();
  }
  const file = summarizeCases(cases, settings, startedAt, new Date().toISOString());
  writeAtomic(opts.outFile, JSON.stringify(file, null, 2) + '\n');
  return file;
}

async function superuser(url: string): Promise<{ role: string; super: boolean }> {
  const c = new pg.Client(pgConfig(url, { application_name: 'rig-dbcal' }));
  await c.connect();
  try {
    const r = (await c.query<{ role: string; super: boolean }>('SELECT current_user AS role, rolsuper AS super FROM pg_roles WHERE rolname = current_user')).rows[0];
    return r;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** The settings every page names (log_timezone, server_version, ...), as the DB sampler reads them. */
async function named(url: string): Promise<Record<string, string>> {
  const c = new pg.Client(pgConfig(url, { application_name: 'rig-dbcal' }));
  await c.connect();
  try {
    return (await readSettings(c)).named;
  } finally {
    await c.end().catch(() => undefined);
  }
}

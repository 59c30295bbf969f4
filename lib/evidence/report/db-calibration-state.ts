// What the page says about the database side's calibration (issue 47, item 6). With
// calibration/database.json it is that file's verdict: a failed case marks every database figure. Without
// it the database was NOT calibrated, and the page says so and why, beside every database figure and in
// Conditions: a page whose calibration never ran must not look like one whose calibration passed. Why it
// did not run comes from the spec (plan.ts calibratesDatabase: only a local rig's own cluster, and only
// with calibrate: true), else from the calibrate-database step's own summary (an RDS-fidelity rig's
// admin is not a superuser: refused, nothing provoked), else the evidence simply holds no record. Pure.
import { dbCalibrationMark, failedCases } from '../../protocol/db-calibration';
import type { CampaignSpec } from '../../protocol/spec';
import type { DbCalibrationVerdict } from './load';
import type { ReportModel } from './model-types';

/** Why the database was not calibrated, in words, from the spec and the steps; null when it should have been and the step says nothing. */
export function dbNotCalibratedWhy(spec: Pick<CampaignSpec, 'calibrate' | 'target' | 'local'>, steps: ReadonlyArray<{ step: string; summary: string }>): { short: string; why: string } {
  if (!spec.calibrate) return { short: 'calibrate: false', why: 'the spec says calibrate: false, so the database side was not calibrated' };
  if (spec.target !== 'local') {
    return { short: `target "${spec.target}"`, why: `target "${spec.target}": the database calibration runs only on a local rig's own cluster (it needs a superuser and the cluster's own log), so it did not run` };
  }
  const step = [...steps].reverse().find((s) => s.step === 'calibrate-database');
  if (step) return { short: spec.local?.rdsFidelity ? 'RDS-fidelity rig' : 'not run', why: `the calibrate-database step: ${step.summary}` };
  if (spec.local?.rdsFidelity) return { short: 'RDS-fidelity rig', why: 'an RDS-fidelity rig: its admin is not a superuser, so the calibration provokes nothing' };
  return { short: 'no record', why: 'no calibration/database.json in the evidence (a campaign recorded before the database calibration, or its step did not finish)' };
}

/** The model's db_calibration: the file's verdict, or (no file) not calibrated with why. */
export function dbCalibrationState(file: DbCalibrationVerdict | null, spec: Pick<CampaignSpec, 'calibrate' | 'target' | 'local'>, steps: ReadonlyArray<{ step: string; summary: string }>): NonNullable<ReportModel['db_calibration']> {
  if (file) return { passed: file.passed, total: file.total, failed: failedCases(file), mark: dbCalibrationMark(file) };
  const { short, why } = dbNotCalibratedWhy(spec, steps);
  return { passed: 0, total: 0, failed: [], mark: `database not calibrated: ${short}`, not_run: why };
}

/** The Conditions row: CALIBRATED n/n, NOT CALIBRATED with the failed cases, or not calibrated and why. */
export function dbCalibrationText(m: Pick<ReportModel, 'db_calibration'>): string {
  const c = m.db_calibration;
  if (!c) return 'not in the model';
  if (c.not_run) return `NOT CALIBRATED: ${c.not_run}; no database figure on this page was checked against a provoked truth`;
  return c.mark ? `${c.mark}: ${c.passed}/${c.total} cases passed` : `CALIBRATED ${c.passed}/${c.total}`;
}

// calibrate: before anything is provisioned, the instrument measures a calibration server of known
// behaviour (lib/loadgen/calibrate.ts): its floor on this host, then eight cases judged against the
// server's own counts and times. If any case is off, or the floor is too coarse for the smallest p99
// limit the campaign will judge, nothing it would measure can be trusted: the campaign refuses.
//
// Evidence: calibration/calibration.json (the verdict per case, the floor, the per-case truth, the
// tolerances, and the host's CPU steal while the cases ran with the steal bound it sets) and, per attempt, calibration/a<A>/ with each case's sample stream and the server's
// per-request times, so every figure of the file can be re-derived.
//
// Safe to run twice: calibration.json is written once per campaign; an attempt that finds it (the
// earlier one judged, then its worker was lost) returns that judgement instead of measuring again,
// but only when the file covers this campaign (lib/protocol/calibration-record.ts: every case, this
// campaign's smallest p99 limit, this build's tolerances, a floor fine enough for it). Anything less is
// refused, naming what it lacks: a file written once cannot be replaced by measuring again.
//
// Tests that are not about the instrument (a calibration takes 1-2 min and the host to itself) ask
// for a stand-in: RIG_TEST_CALIBRATION_STAND_IN=<why> makes the campaign's own calibration (not a load
// node's) record a calibration.json that says `test_stand_in` and measured nothing
// (test/harness/calibration-stand-in.ts). The variable and such a file are honoured only under
// RIG_TESTING=1, and refused outside the test suite naming the variable (lib/tools/test-switch.ts).
import fs from 'node:fs';
import { CALIBRATION_FILE } from '../lib/evidence/layout';
import type { CalibrationFile } from '../lib/evidence/records';
import { watchSteal } from '../lib/evidence/steal-watch';
import { EvidenceStore } from '../lib/evidence/store';
import { runCalibration } from '../lib/loadgen/calibrate';
import { CALIBRATION_CASES } from '../lib/loadgen/calibration-cases';
import { recordedCalibrationGaps } from '../lib/protocol/calibration-record';
import { DEFAULT_CALIBRATION_P99_LIMIT_MS, floorLine } from '../lib/protocol/calibration-truth';
import { stealBoundFromCalibration } from '../lib/protocol/repeat-validity';
import { isTesting, testOnlySwitch, TestSwitchRefusal, TESTING_ENV } from '../lib/tools/test-switch';
import type { CalibrateInput, CalibrateOutput } from './contract';
import { attempt, heartbeat } from './context';
import { refusal } from './refusal';

export async function calibrateInstrument(input: CalibrateInput): Promise<CalibrateOutput> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  // A load node (issue 37) keeps its own calibration beside the control host's, and its refusal names it.
  const base = input.node === undefined ? 'calibration' : `calibration/nodes/n${input.node}`;
  const calibrationFile = input.node === undefined ? CALIBRATION_FILE : `${base}/calibration.json`;
  const who = input.node === undefined ? '' : `load node ${input.node}: `;
  if (store.exists(calibrationFile)) return recorded(fs.readFileSync(store.path(calibrationFile), 'utf8'), calibrationFile, input.p99LimitMs ?? DEFAULT_CALIBRATION_P99_LIMIT_MS, who);
  const standIn = input.node === undefined ? standInAsked() : undefined;
  if (standIn !== undefined) {
    store.writeJson(calibrationFile, standInCalibration(standIn));
    store.appendLog('warning', `calibration: a test's stand-in, nothing measured (${STAND_IN_ENV}: ${standIn})`);
    return standInOutput(standIn, who);
  }
  let dir = `${base}/a${attempt()}`;
  // `rig step` may run the same attempt number again: never write into an earlier run's folder.
  for (let k = 2; store.exists(dir); k++) dir = `${base}/a${attempt()}-${k}`;
  // The steal the cases run under: the bound the campaign's repeats are judged with (issue 34).
  const steal = watchSteal();
  let hostSteal: ReturnType<typeof steal.stop> = null;
  let res: Awaited<ReturnType<typeof runCalibration>>;
  try {
    res = await runCalibration({ p99LimitMs: input.p99LimitMs, outDir: store.path(dir), onCase: (c) => heartbeat(c.line) });
  } finally {
    hostSteal = steal.stop();
  }
  const stealBoundPct = stealBoundFromCalibration(hostSteal);
  const file: CalibrationFile = {
    calibrated: res.calibrated,
    cases: res.cases.map((c) => ({ id: c.id, name: c.name, passed: c.ok, detail: c.line, truth: c.truth })),
    floor: res.floor,
    p99_limit_ms: res.p99LimitMs,
    tolerances: { ...res.tolerances },
    host_steal: hostSteal,
    steal_bound_pct: stealBoundPct,
  };
  store.writeJson(calibrationFile, file);
  for (const c of res.cases) store.appendLog(c.ok ? 'info' : 'warning', `${who}calibration ${c.line}`);
  if (res.floor) store.appendLog('info', `calibration ${floorLine(res.floor)}`);
  store.appendLog('info', `calibration ${stealLine(hostSteal, stealBoundPct)}`);
  const floor = res.floor ? `; floor p50 ${res.floor.p50_ms.toFixed(2)} ms, p99 ${res.floor.p99_ms.toFixed(2)} ms` : '';
  const summary = `${res.calibrated ? 'CALIBRATED' : 'NOT CALIBRATED'} (${res.passed}/${res.total})${floor}`;
  if (!res.calibrated) {
    const off = res.cases.filter((c) => !c.ok).map((c) => `case ${c.id} ${c.name}: ${c.problems.join('; ')}`);
    throw refusal('CalibrationRefusal', `${who}the instrument is off, so nothing it measures can be published: ${off.join(' | ')}`);
  }
  return { summary: `${who}${summary}`, stealBoundPct };
}

/** The steal the instrument was proven under, and the bound it sets for the repeats. */
function stealLine(s: { max: number; median: number } | null, bound: number): string {
  const seen = s ? `host CPU steal up to ${s.max.toFixed(1)} % (median ${s.median.toFixed(1)} %) while the cases ran` : 'host CPU steal not read (no /proc/stat)';
  return `${seen}: a failed repeat is the host's when its steal reaches ${bound} % (issue 34)`;
}

/** The test-only hook: the campaign's own calibration recorded as a stand-in, nothing measured. */
export const STAND_IN_ENV = 'RIG_TEST_CALIBRATION_STAND_IN';

/** Why a test asked for a stand-in (RIG_TEST_CALIBRATION_STAND_IN), or undefined; refused outside the test suite. */
function standInAsked(): string | undefined {
  try {
    return testOnlySwitch(STAND_IN_ENV, "records a stand-in for the campaign's calibration and measures nothing, so its verdicts would rest on no calibration", process.env);
  } catch (err) {
    if (err instanceof TestSwitchRefusal) throw refusal('TestSwitchRefusal', err.message, { variable: err.variable });
    throw err;
  }
}

/** The stand-in calibration.json: one case that says it was not measured, and why. */
export function standInCalibration(why: string): CalibrationFile {
  return { calibrated: true, test_stand_in: why, cases: [{ name: 'test stand-in: not measured', passed: true, detail: why }] };
}

function standInOutput(why: string, who: string): CalibrateOutput {
  return { summary: `${who}CALIBRATED by a test's stand-in, nothing measured (${why})`, stealBoundPct: stealBoundFromCalibration(null) };
}

/**
 * A calibration.json found before measuring: a test's stand-in (honoured only under RIG_TESTING=1), or
 * an earlier attempt's judgement, believed only when it covers this campaign. Refused otherwise, naming why.
 */
function recorded(text: string, rel: string, p99LimitMs: number, who: string): CalibrateOutput {
  const fix = 'it is evidence, written once: remove it to calibrate again, or start the campaign under a new id';
  let file: CalibrationFile;
  try {
    file = JSON.parse(text) as CalibrationFile;
  } catch (err) {
    throw refusal('CalibrationRefusal', `${who}${rel}, found before this attempt measured, is not JSON (${(err as Error).message}): ${fix}`);
  }
  if (file.test_stand_in !== undefined) {
    if (!isTesting()) {
      throw refusal('CalibrationRefusal', `${who}${rel} is a test's stand-in, not a calibration (test_stand_in: ${JSON.stringify(file.test_stand_in)}): nothing was measured, and a stand-in is honoured only when ${TESTING_ENV}=1 (the test suite sets it); ${fix}`);
    }
    return standInOutput(String(file.test_stand_in), who);
  }
  const gaps = recordedCalibrationGaps(file, { cases: CALIBRATION_CASES, p99LimitMs });
  if (gaps.length) throw refusal('CalibrationRefusal', `${who}${rel}, found before this attempt measured, does not cover this campaign, so it is not believed: ${gaps.join('; ')}. ${fix[0].toUpperCase()}${fix.slice(1)}`);
  return judged(file, who);
}

/** The judgement an earlier attempt recorded: the same summary, or the same refusal. */
function judged(file: CalibrationFile, who = ''): CalibrateOutput {
  const passed = file.cases.filter((c) => c.passed).length;
  const floor = file.floor ? `; floor p50 ${file.floor.p50_ms.toFixed(2)} ms, p99 ${file.floor.p99_ms.toFixed(2)} ms` : '';
  if (!file.calibrated) {
    const off = file.cases.filter((c) => !c.passed).map((c) => c.detail);
    throw refusal('CalibrationRefusal', `${who}the instrument is off, so nothing it measures can be published (recorded by an earlier attempt): ${off.join(' | ')}`);
  }
  return { summary: `${who}CALIBRATED (${passed}/${file.cases.length})${floor} (recorded by an earlier attempt)`, stealBoundPct: file.steal_bound_pct ?? stealBoundFromCalibration(file.host_steal) };
}

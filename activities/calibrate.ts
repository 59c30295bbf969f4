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
// earlier one judged, then its worker was lost) returns that judgement instead of measuring again.
import fs from 'node:fs';
import { CALIBRATION_FILE } from '../lib/evidence/layout';
import type { CalibrationFile } from '../lib/evidence/records';
import { watchSteal } from '../lib/evidence/steal-watch';
import { EvidenceStore } from '../lib/evidence/store';
import { runCalibration } from '../lib/loadgen/calibrate';
import { floorLine } from '../lib/protocol/calibration-truth';
import { stealBoundFromCalibration } from '../lib/protocol/repeat-validity';
import type { CalibrateInput, CalibrateOutput } from './contract';
import { attempt, heartbeat } from './context';
import { refusal } from './refusal';

export async function calibrateInstrument(input: CalibrateInput): Promise<CalibrateOutput> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  // A load node (issue 37) keeps its own calibration beside the control host's, and its refusal names it.
  const base = input.node === undefined ? 'calibration' : `calibration/nodes/n${input.node}`;
  const calibrationFile = input.node === undefined ? CALIBRATION_FILE : `${base}/calibration.json`;
  const who = input.node === undefined ? '' : `load node ${input.node}: `;
  if (store.exists(calibrationFile)) return judged(JSON.parse(fs.readFileSync(store.path(calibrationFile), 'utf8')) as CalibrationFile, who);
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

// calibrate: before anything is provisioned, the instrument measures a calibration server of known
// behaviour in six cases (lib/loadgen/calibrate.ts). If any case is off, nothing it would measure can
// be trusted: the campaign refuses.
import { CALIBRATION_FILE } from '../lib/evidence/layout';
import type { CalibrationFile } from '../lib/evidence/records';
import { EvidenceStore } from '../lib/evidence/store';
import { runCalibration } from '../lib/loadgen/calibrate';
import type { CampaignRef, StepSummary } from './contract';
import { heartbeat } from './context';
import { refusal } from './refusal';

export async function calibrateInstrument(input: CampaignRef): Promise<StepSummary> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  const res = await runCalibration({ onCase: (c) => heartbeat(c.line) });
  const file: CalibrationFile = { calibrated: res.calibrated, cases: res.cases.map((c) => ({ name: c.name, passed: c.ok, detail: c.line })) };
  store.writeJson(CALIBRATION_FILE, file);
  for (const c of res.cases) store.appendLog(c.ok ? 'info' : 'warning', `calibration ${c.line}`);
  const summary = `${res.calibrated ? 'CALIBRATED' : 'NOT CALIBRATED'} (${res.passed}/${res.total})`;
  if (!res.calibrated) {
    const off = res.cases.filter((c) => !c.ok).map((c) => `${c.name}: ${c.problems.join('; ')}`);
    throw refusal('CalibrationRefusal', `the instrument is off, so nothing it measures can be published: ${off.join(' | ')}`);
  }
  return { summary };
}

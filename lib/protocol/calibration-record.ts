// Can a recorded calibration stand for this campaign? The calibrate step writes calibration.json once,
// and an attempt that finds it (the earlier one judged, then its worker was lost) returns that
// judgement instead of measuring again. A file is believed only when it holds what this campaign's
// calibration would have measured and judged: every case the campaign runs (by id and name, each with
// its truth), judged against this campaign's smallest p99 limit, by this build's tolerances, with a
// floor fine enough for that limit when it says calibrated, and a verdict that agrees with its own
// cases. Anything less (one case, no floor, another spec's limit) is not a calibration of this campaign,
// and a retry that believed it would publish verdicts the instrument was never proven for (issue 47,
// item 2). Pure: the caller reads the file and says which cases the campaign runs.
import { CALIBRATION_TOLERANCES } from './calibration-truth';

/** What a recorded calibration.json holds, as far as judging it needs (lib/evidence/records.ts CalibrationFile). */
export interface RecordedCalibration {
  calibrated: boolean;
  cases: ReadonlyArray<{ id?: number; name: string; passed: boolean; truth?: unknown }>;
  floor?: { samples: number; p99_ms: number; p99_limit_ms: number } | null;
  p99_limit_ms?: number;
  tolerances?: Readonly<Record<string, number>>;
}

/** What this campaign's calibration runs and judges against. */
export interface CalibrationNeeds {
  /** Every case a campaign's calibration runs (lib/loadgen/calibration-cases.ts), floor case first. */
  cases: ReadonlyArray<{ id: number; name: string }>;
  /** The campaign's smallest p99 limit (ms), as the calibrate step was given it. */
  p99LimitMs: number;
}

/** Why the record cannot stand for this campaign, one reason each; empty when it can. */
export function recordedCalibrationGaps(file: RecordedCalibration, need: CalibrationNeeds): string[] {
  const gaps: string[] = [];
  if (typeof file.calibrated !== 'boolean') gaps.push('it has no verdict (calibrated: true or false)');
  const cases = Array.isArray(file.cases) ? file.cases : [];
  if (!Array.isArray(file.cases)) gaps.push('it has no cases');
  const wanted = new Set(need.cases.map((c) => c.id));
  for (const c of need.cases) {
    const found = cases.filter((r) => r.id === c.id);
    if (found.length === 0) gaps.push(`case ${c.id} (${c.name}) is not in it`);
    else if (found.length > 1) gaps.push(`case ${c.id} is in it ${found.length} times`);
    else if (found[0].name !== c.name) gaps.push(`its case ${c.id} is "${found[0].name}", this campaign's is "${c.name}"`);
    else if (found[0].truth === undefined || found[0].truth === null) gaps.push(`its case ${c.id} (${c.name}) has no truth (the server's own figures it was judged by)`);
  }
  for (const r of cases) {
    if (typeof r.id !== 'number') gaps.push(`its case "${r.name}" has no id`);
    else if (!wanted.has(r.id)) gaps.push(`its case ${r.id} ("${r.name}") is not one this campaign runs`);
  }
  // The verdict must be its cases' (calibrated exactly when every case passed: lib/loadgen/calibrate.ts).
  const failed = cases.filter((r) => !r.passed);
  if (file.calibrated === true && failed.length) gaps.push(`it says calibrated, but case ${failed.map((r) => r.id ?? `"${r.name}"`).join(', ')} did not pass`);
  if (file.calibrated === false && cases.length && !failed.length) gaps.push('it says not calibrated, yet every case in it passed');

  const limit = need.p99LimitMs;
  if (file.p99_limit_ms === undefined) gaps.push(`it names no p99 limit (this campaign's smallest is ${limit} ms)`);
  else if (file.p99_limit_ms !== limit) gaps.push(`it was judged against a smallest p99 limit of ${file.p99_limit_ms} ms, this campaign's is ${limit} ms`);

  if (!file.tolerances) gaps.push('it names no tolerances');
  else {
    for (const [k, v] of Object.entries(CALIBRATION_TOLERANCES)) {
      if (file.tolerances[k] !== v) gaps.push(`its tolerance ${k} is ${file.tolerances[k] ?? 'absent'}, this build's is ${v}`);
    }
  }

  // A calibrated instrument has its floor, measured on enough requests and fine enough for the limit.
  if (file.calibrated === true) {
    const f = file.floor;
    const max = CALIBRATION_TOLERANCES.floorShareOfLimit * limit;
    if (!f) gaps.push('it says calibrated, but has no floor');
    else {
      if (f.p99_limit_ms !== limit) gaps.push(`its floor was judged against ${f.p99_limit_ms} ms, this campaign's smallest p99 limit is ${limit} ms`);
      if (!(f.samples >= CALIBRATION_TOLERANCES.floorMinSamples)) gaps.push(`its floor has ${f.samples} samples, a calibration needs >= ${CALIBRATION_TOLERANCES.floorMinSamples}`);
      if (!(f.p99_ms <= max)) gaps.push(`its floor p99 ${f.p99_ms} ms is over ${CALIBRATION_TOLERANCES.floorShareOfLimit * 100} % of the ${limit}-ms limit (${max} ms)`);
    }
  }
  return gaps;
}

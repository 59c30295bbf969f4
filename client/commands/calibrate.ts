// `rig calibrate`: the instrument measures a calibration server of known behaviour in six cases.
// Prints one line per case, then CALIBRATED (6/6) and exits 0; otherwise names each case that was
// off and exits 1. A rig whose instrument is not calibrated measures nothing.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runCalibration } from '../../lib/loadgen/calibrate';

export const summary = 'calibrate the instrument against a server of known behaviour (six cases)';

const HELP = `usage: rig calibrate [--out DIR] [--case N ...] [--json]

Runs the load generator against a local calibration server in six cases (constant 5 ms; one
1-second freeze; capacity below the offered rate; 1 % answered 500; one event in 1,000 not stored;
service time rising) and checks each report against the truth.

  --out DIR    keep the sample streams there (default: a temporary folder, removed)
  --case N     run only case N (repeatable)
  --json       print the results as JSON after the lines

exit: 0 CALIBRATED; 1 a case was off (named); 2 bad input.`;

export async function run(argv: string[]): Promise<number> {
  let values: { out?: string; case?: string[]; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { out: { type: 'string' }, case: { type: 'string', multiple: true }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (err) {
    console.error(`rig calibrate: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const cases = values.case?.map(Number);
  if (cases?.some((n) => !Number.isInteger(n) || n < 1 || n > 6)) {
    console.error(`rig calibrate: --case must be a case number 1..6, got ${values.case?.join(', ')}`);
    return 2;
  }
  const started = Date.now();
  const res = await runCalibration({ cases, outDir: values.out ? path.resolve(values.out) : undefined, onCase: (r) => console.log(r.line) });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (values.json) console.log(JSON.stringify(res.cases.map(({ report, ...r }) => ({ ...r, report })), null, 2));
  console.log(`(${secs} s)`);
  if (res.calibrated) {
    // Only the full set calibrates the instrument; a subset is a check of those cases.
    console.log(cases ? `cases ok (${res.passed}/${res.total}): not a full calibration` : `CALIBRATED (${res.passed}/${res.total})`);
    return 0;
  }
  for (const c of res.cases.filter((r) => !r.ok)) console.log(`OFF: case ${c.id} ${c.name}: ${c.problems.join('; ')}`);
  console.log(`NOT CALIBRATED (${res.passed}/${res.total})`);
  return 1;
}

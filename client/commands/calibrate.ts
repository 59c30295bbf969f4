// `rig calibrate`: the instrument measures a calibration server of known behaviour (its own process)
// in nine cases: the floor (what the instrument adds on this host) and eight behaviours. Prints one
// line per case and, under it, the server's own figures beside the client's; then the floor and
// CALIBRATED (9/9), exit 0; otherwise names each case that was off and exits 1. A rig whose
// instrument is not calibrated measures nothing.
import { defineCommand } from '../command';
import { UsageError } from '../parse-flags';
import path from 'node:path';
import { CALIBRATION_TOLERANCES, DEFAULT_CALIBRATION_P99_LIMIT_MS, floorLine } from '../../lib/protocol/calibration-truth';
import { runCalibration } from '../../lib/loadgen/calibrate';
import { CALIBRATION_CASES } from '../../lib/loadgen/calibration-cases';

export const summary = 'calibrate the instrument against a server of known behaviour (floor + eight cases)';

const IDS = CALIBRATION_CASES.map((c) => c.id);

const HELP = `usage: rig calibrate [--out DIR] [--case N ...] [--p99-limit-ms MS] [--json]

Runs the load generator against a local calibration server (a process of its own, which records
each request's arrival and answer times) in nine cases: 0 the instrument's floor (a 0-ms server:
what the client adds over the server's own time); 1 constant 5 ms, judged against the server's own
times and the floor; 2 one 1-second freeze; 3 capacity below the offered rate; 4 1 % answered 500;
5 one event in 1,000 not stored; 6 service time rising; 7 Poisson arrivals (the gaps the server saw
pass a KS test); 8 a spike to 5x (its edges seen by the server within 1 ms). Each report is checked
against the truth.

  --out DIR          keep the sample streams and the server's per-request times there
                     (default: a temporary folder, removed)
  --case N           run only case N (repeatable; case 1 brings case 0, its floor)
  --p99-limit-ms MS  the smallest p99 limit the instrument must be fine enough for: the floor's
                     p99 may be at most ${CALIBRATION_TOLERANCES.floorShareOfLimit * 100} % of it (default ${DEFAULT_CALIBRATION_P99_LIMIT_MS})
  --json             print the results as JSON after the lines

exit: 0 CALIBRATED; 1 a case was off (named); 2 bad input.`;

export const { run, actions } = defineCommand({
  summary,
  help: HELP,
  options: {
      out: { type: 'string' },
      case: { type: 'string', multiple: true },
      'p99-limit-ms': { type: 'string' },
      json: { type: 'boolean' },
    },
  async run({ values }) {
    const cases = values.case?.map((s) => (/^\d+$/.test(s.trim()) ? Number(s) : NaN));
    if (cases?.some((n) => !IDS.includes(n))) {
      throw new UsageError(`--case must be a case number ${IDS[0]}..${IDS.at(-1)}, got ${values.case?.join(', ')}`);
    }
    let p99LimitMs = DEFAULT_CALIBRATION_P99_LIMIT_MS;
    if (values['p99-limit-ms'] !== undefined) {
      p99LimitMs = Number(values['p99-limit-ms']);
      if (!(values['p99-limit-ms'].trim() !== '' && Number.isFinite(p99LimitMs) && p99LimitMs > 0)) {
        throw new UsageError(`--p99-limit-ms must be a positive number of milliseconds (the smallest p99 limit you will judge), got '${values['p99-limit-ms']}'`);
      }
    }
    const started = Date.now();
    const res = await runCalibration({
      cases,
      p99LimitMs,
      outDir: values.out ? path.resolve(values.out) : undefined,
      onCase: (r) => console.log(`${r.line}\n${r.truthLine}`),
    });
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    if (values.json) console.log(JSON.stringify(res.cases.map(({ report, ...r }) => ({ ...r, report })), null, 2));
    console.log(`(${secs} s)`);
    if (res.floor) console.log(floorLine(res.floor));
    else if (res.cases.some((c) => c.id === 0)) console.log('instrument floor: not measured (case 0 joined no request)');
    if (res.calibrated) {
      // Only the full set calibrates the instrument; a subset is a check of those cases.
      console.log(cases ? `cases ok (${res.passed}/${res.total}): not a full calibration` : `CALIBRATED (${res.passed}/${res.total})`);
      return 0;
    }
    for (const c of res.cases.filter((r) => !r.ok)) console.log(`OFF: case ${c.id} ${c.name}: ${c.problems.join('; ')}`);
    console.log(`NOT CALIBRATED (${res.passed}/${res.total})`);
    return 1;
  },
});

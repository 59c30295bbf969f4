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
import fs from 'node:fs';
import os from 'node:os';
import { dbCaseLine, dbVerdictLine } from '../../lib/protocol/db-calibration';
import { DB_CALIBRATION_PARTS, type DbCalibrationPart } from '../../lib/targets/db-calibration/run';
import { calibrateDatabase } from '../database-calibration';

export const summary = 'calibrate the instrument against a server of known behaviour (floor + eight cases), or with --database the database side';

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

usage: rig calibrate --database [--db URL [--log FILE]] [--part P ...] [--out FILE] [--json]

The database side: events of known truth provoked on a PostgreSQL cluster (a throw-away one of the
local target's kind, or --db), each required to be found by the rig's own evidence code: lock wait
(the DB sampler's requests' Lock waits within ±20 % of the seconds the request sessions were blocked),
WAL per event (the load bracket within ±2 % of pg_walinspect's, else pg_waldump's, count of the
inserts' LSN range), the vacuum and checkpoint markers (from the server log within 1 s of their true
time, and a freeze-second there classified as that event), and both markers again with the cluster
logging in Europe/Berlin. It works in a database of its own (rig_dbcal, dropped afterwards) and puts
back the settings it changes (autovacuum_naptime, log_timezone).

  --db URL           a superuser URL of a running cluster (default: a throw-away cluster)
  --log FILE         that cluster's server log file (the markers are read from it)
  --part P           only lock, wal, markers or zone (repeatable): a check, not a calibration
  --out FILE         the results as JSON (default: a new file under the temporary folder)

exit: 0 CALIBRATED; 1 a case was off (named); 2 bad input.`;

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: {
      out: { type: 'string' },
      case: { type: 'string', multiple: true },
      'p99-limit-ms': { type: 'string' },
      json: { type: 'boolean' },
      database: { type: 'boolean' },
      db: { type: 'string' },
      log: { type: 'string' },
      part: { type: 'string', multiple: true },
    },
  async run({ values }) {
    if (values.database) return runDatabase(values);
    for (const k of ['db', 'log', 'part'] as const) if (values[k] !== undefined) throw new UsageError(`--${k} goes with --database`);
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

/** `rig calibrate --database`: one line per case, the JSON evidence's path, then the verdict. */
async function runDatabase(values: { case?: string[]; 'p99-limit-ms'?: string; db?: string; log?: string; part?: string[]; out?: string; json?: boolean }): Promise<number> {
  if (values.case !== undefined || values['p99-limit-ms'] !== undefined) throw new UsageError('--case and --p99-limit-ms are the instrument\'s: with --database, use --part lock|wal|markers|zone');
  if (values.log !== undefined && values.db === undefined) throw new UsageError('--log names the server log of the cluster --db names; without --db the calibration makes its own cluster');
  if (values.db !== undefined && !/^postgres(ql)?:\/\//.test(values.db)) throw new UsageError(`--db must be a postgres:// URL of a superuser, got '${values.db}'`);
  const parts = values.part?.map((p) => p.trim());
  const bad = parts?.find((p) => !(DB_CALIBRATION_PARTS as readonly string[]).includes(p));
  if (bad !== undefined) throw new UsageError(`--part must be one of ${DB_CALIBRATION_PARTS.join(', ')}, got '${bad}'`);
  const outFile = path.resolve(values.out ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rig-calibrate-database-')), 'database-calibration.json'));
  const started = Date.now();
  const file = await calibrateDatabase({
    db: values.db,
    log: values.log,
    outFile,
    only: parts as DbCalibrationPart[] | undefined,
    onCase: (c) => console.log(dbCaseLine(c)),
    onNote: (l) => console.log(l),
  });
  if (values.json) console.log(JSON.stringify(file, null, 2));
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s; evidence ${outFile})`);
  const line = dbVerdictLine(file);
  console.log(parts && file.calibrated ? `cases ok (${file.passed}/${file.total}): not a full calibration` : line);
  return file.calibrated ? 0 : 1;
}

// Calibration: the instrument measures the calibration server in each case, and each case's report
// is compared with the truth: the server's exact counts and, per request, its own arrival and
// answer-written times (the server runs in a process of its own, calibration-server-main.ts).
// Case 0 measures the instrument's floor on this host; case 1 is judged against it, and the floor is
// judged against the smallest p99 limit the campaign will apply. `rig calibrate` and the campaign's
// calibrate step call it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CALIBRATION_TOLERANCES,
  DEFAULT_CALIBRATION_P99_LIMIT_MS,
  joinTruth,
  truthLine,
  type FloorFigures,
  type TruthFigures,
} from '../protocol/calibration-truth';
import { evaluateRun } from '../protocol/evaluate';
import { shapedSchedule } from '../protocol/stream-plan';
import type { RunReport } from '../protocol/run-report';
import { analyzeFile } from './analyze-file';
import { CALIBRATION_CASES, FLOOR_CASE, type CalibrationCase } from './calibration-cases';
import type { Tally, TruthRow } from './calibration-server';
import { CalibrationServerProcess } from './calibration-server-process';
import { runLoad } from './run-load';

export interface CaseResult {
  id: number;
  name: string;
  ok: boolean;
  /** One line: `case N name: facts -> ok` or `-> OFF: problems`. */
  line: string;
  /** One line: the server's own figures beside the client's (truthLine). */
  truthLine: string;
  problems: string[];
  stream: string;
  /** The server's per-request times, as CSV (request,arrival_ms,written_ms,status; server clock). */
  serverTruth: string;
  tally: Tally;
  truth: TruthFigures;
  report: RunReport;
}

export interface CalibrationResult {
  calibrated: boolean;
  passed: number;
  total: number;
  cases: CaseResult[];
  /** The instrument's floor (case 0), null when it did not run or joined nothing. */
  floor: FloorFigures | null;
  /** The smallest p99 limit the floor was judged against (ms). */
  p99LimitMs: number;
  tolerances: typeof CALIBRATION_TOLERANCES;
  /** Where the streams are (removed unless the caller gave outDir). */
  outDir: string;
}

export interface CalibrateOptions {
  /** Which cases (ids); default all. A case judged against the floor brings case 0 with it. */
  cases?: number[];
  /** The smallest p99 limit of what will be judged (ms); default 50. */
  p99LimitMs?: number;
  /** Keep the sample streams and the server's truth here; default a temporary folder, removed afterwards. */
  outDir?: string;
  onCase?: (r: CaseResult) => void;
}

/** The cases to run for a selection: in id order, with the floor case whenever a chosen case needs it. */
export function selectCases(ids?: number[]): CalibrationCase[] {
  const want = new Set(ids ?? CALIBRATION_CASES.map((c) => c.id));
  if (CALIBRATION_CASES.some((c) => c.needsFloor && want.has(c.id))) want.add(FLOOR_CASE);
  return CALIBRATION_CASES.filter((c) => want.has(c.id));
}

export async function runCalibration(opts: CalibrateOptions = {}): Promise<CalibrationResult> {
  const p99LimitMs = opts.p99LimitMs ?? DEFAULT_CALIBRATION_P99_LIMIT_MS;
  if (!(Number.isFinite(p99LimitMs) && p99LimitMs > 0)) throw new RangeError(`p99LimitMs must be a positive number of ms (the smallest p99 limit judged), got ${p99LimitMs}`);
  const cases = selectCases(opts.cases);
  const outDir = opts.outDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rig-calibrate-'));
  fs.mkdirSync(outDir, { recursive: true });
  const apiKey = `calib_${crypto.randomBytes(8).toString('hex')}`;
  const customers = Array.from({ length: 20 }, (_, i) => `cus_${String(i + 1).padStart(4, '0')}`);
  const results: CaseResult[] = [];
  let floor: FloorFigures | null = null;
  let server: CalibrationServerProcess | null = null;
  try {
    server = await CalibrationServerProcess.start({ apiKey, customers });
    await warmServer(server, apiKey, customers, outDir);
    for (const c of cases) {
      const { result, floor: measured } = await runCase(c, server, apiKey, outDir, floor, p99LimitMs);
      if (c.id === FLOOR_CASE) floor = measured ?? null;
      results.push(result);
      opts.onCase?.(result);
    }
  } finally {
    await server?.stop();
    if (!opts.outDir) fs.rmSync(outDir, { recursive: true, force: true });
  }
  const passed = results.filter((r) => r.ok).length;
  return {
    calibrated: passed === results.length && results.length > 0,
    passed,
    total: results.length,
    cases: results,
    floor,
    p99LimitMs,
    tolerances: CALIBRATION_TOLERANCES,
    outDir,
  };
}

/**
 * The server is as cold as the generator at first: its first second would measure the JIT, not the
 * behaviour programmed. A short unmeasured run warms it (the generator warms itself in its child,
 * see warmup.ts).
 */
async function warmServer(server: CalibrationServerProcess, apiKey: string, customers: string[], outDir: string): Promise<void> {
  await server.configure({ serviceMs: 1 });
  const out = path.join(outDir, 'warm-up.csv.gz');
  const runTag = `calib-warm-${crypto.randomBytes(4).toString('hex')}`;
  await runLoad({ url: server.url, apiKey, rate: 2000, batch: 5, seconds: 2, runTag, customers, out, warmupSeconds: 0.5 }, undefined, { preflight: false });
  await server.truth(runTag); // forgotten: not measured
  fs.rmSync(out, { force: true });
}

async function runCase(
  c: CalibrationCase,
  server: CalibrationServerProcess,
  apiKey: string,
  outDir: string,
  floor: FloorFigures | null,
  p99LimitMs: number,
): Promise<{ result: CaseResult; floor?: FloorFigures | null }> {
  await server.configure(c.behaviour);
  const runTag = `calib-${c.id}-${crypto.randomBytes(4).toString('hex')}`;
  const stream = path.join(outDir, `case-${c.id}.csv.gz`);
  const res = await runLoad(
    {
      url: server.url,
      apiKey,
      rate: c.load.rate,
      batch: c.load.batch,
      seconds: c.load.seconds,
      maxInFlight: c.load.maxInFlight,
      probeRate: c.load.probeRate ?? 0,
      arrivals: c.load.arrivals ?? null,
      runTag,
      out: stream,
      warmupSeconds: 0.5,
    },
    undefined,
    // the pre-flight runs too: calibration also checks that the key is accepted and customers listed
    { preflight: true },
  );
  const tally = await server.tally(runTag);
  // The server's truth is evidence: written beside the stream before anything is judged from it.
  const rows = await server.truth(runTag);
  const serverTruth = path.join(outDir, `case-${c.id}.server-truth.csv`);
  fs.writeFileSync(serverTruth, truthCsv(rows));
  const { analysis, columns } = await analyzeFile(stream, { durationS: c.load.seconds });
  // A shaped schedule (a Poisson or spike case) names each request by its own times; the constant one by its rate.
  const schedule = analysis.plan ? shapedSchedule(analysis.plan) : null;
  const truth = joinTruth(columns, schedule ?? res.options.requestRate, rows);
  const { verdict, report } = evaluateRun(analysis, {
    kind: 'sustained',
    p99LimitMs: c.p99LimitMs,
    reconciliation: { rows_written: tally.rows, quantity_gained: tally.quantity },
  });
  const out = c.check({ analysis, gate: verdict.ingest, probe: verdict.probe, tally, summary: res.summary, truth, floor, p99LimitMs, serverTruth: rows, schedule });
  if (res.interrupted) out.problems.push(`the run was cut short (${res.summary.reason})`);
  const ok = out.problems.length === 0;
  const result: CaseResult = {
    id: c.id,
    name: c.name,
    ok,
    line: `case ${c.id} ${c.name}: ${out.facts} -> ${ok ? 'ok' : `OFF: ${out.problems.join('; ')}`}`,
    truthLine: `  truth: ${truthLine(truth)}`,
    problems: out.problems,
    stream,
    serverTruth,
    tally,
    truth,
    report,
  };
  return { result, floor: out.floor };
}

function truthCsv(rows: readonly TruthRow[]): string {
  return `request,arrival_ms,written_ms,status\n${rows.map((r) => `${r.request},${r.arrival.toFixed(4)},${r.written.toFixed(4)},${r.status}`).join('\n')}\n`;
}

// Calibration: the instrument measures the calibration server in each of the six cases, and each
// case's report is compared with the truth. `rig calibrate` and the campaign's calibrate step call it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { evaluateRun } from '../protocol/evaluate';
import type { RunReport } from '../protocol/run-report';
import { analyzeFile } from './analyze-file';
import { CALIBRATION_CASES, type CalibrationCase } from './calibration-cases';
import { CalibrationServer, type Tally } from './calibration-server';
import { runLoad } from './run-load';

export interface CaseResult {
  id: number;
  name: string;
  ok: boolean;
  /** One line: `case N name: facts -> ok` or `-> OFF: problems`. */
  line: string;
  problems: string[];
  stream: string;
  tally: Tally;
  report: RunReport;
}

export interface CalibrationResult {
  calibrated: boolean;
  passed: number;
  total: number;
  cases: CaseResult[];
  /** Where the streams are (removed unless the caller gave outDir). */
  outDir: string;
}

export interface CalibrateOptions {
  /** Which cases (ids); default all six. */
  cases?: number[];
  /** Keep the sample streams here; default a temporary folder, removed afterwards. */
  outDir?: string;
  onCase?: (r: CaseResult) => void;
}

export async function runCalibration(opts: CalibrateOptions = {}): Promise<CalibrationResult> {
  const cases = CALIBRATION_CASES.filter((c) => !opts.cases || opts.cases.includes(c.id));
  const outDir = opts.outDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rig-calibrate-'));
  fs.mkdirSync(outDir, { recursive: true });
  const apiKey = `calib_${crypto.randomBytes(8).toString('hex')}`;
  const customers = Array.from({ length: 20 }, (_, i) => `cus_${String(i + 1).padStart(4, '0')}`);
  const server = new CalibrationServer({ apiKey, customers });
  const url = await server.start();
  const results: CaseResult[] = [];
  try {
    await warmServer(server, url, apiKey, customers, outDir);
    for (const c of cases) {
      const r = await runCase(c, server, url, apiKey, outDir);
      results.push(r);
      opts.onCase?.(r);
    }
  } finally {
    await server.stop();
    if (!opts.outDir) fs.rmSync(outDir, { recursive: true, force: true });
  }
  const passed = results.filter((r) => r.ok).length;
  return { calibrated: passed === results.length && results.length > 0, passed, total: results.length, cases: results, outDir };
}

/**
 * The server runs in this process and is as cold as the generator at first: its first second would
 * measure the JIT, not the behaviour programmed. A short unmeasured run warms it (the generator warms
 * itself in its child, see warmup.ts).
 */
async function warmServer(server: CalibrationServer, url: string, apiKey: string, customers: string[], outDir: string): Promise<void> {
  server.configure({ serviceMs: 1 });
  const out = path.join(outDir, 'warm-up.csv.gz');
  await runLoad({ url, apiKey, rate: 2000, batch: 5, seconds: 2, runTag: `calib-warm-${crypto.randomBytes(4).toString('hex')}`, customers, out, warmupSeconds: 0.5 }, undefined, { preflight: false });
  fs.rmSync(out, { force: true });
}

async function runCase(c: CalibrationCase, server: CalibrationServer, url: string, apiKey: string, outDir: string): Promise<CaseResult> {
  server.configure(c.behaviour);
  const runTag = `calib-${c.id}-${crypto.randomBytes(4).toString('hex')}`;
  const stream = path.join(outDir, `case-${c.id}.csv.gz`);
  const res = await runLoad(
    {
      url,
      apiKey,
      rate: c.load.rate,
      batch: c.load.batch,
      seconds: c.load.seconds,
      maxInFlight: c.load.maxInFlight,
      probeRate: c.load.probeRate ?? 0,
      runTag,
      out: stream,
      warmupSeconds: 0.5,
    },
    undefined,
    // the pre-flight runs too: calibration also checks that the key is accepted and customers listed
    { preflight: true },
  );
  const tally = server.tally(runTag);
  const { analysis } = await analyzeFile(stream, { durationS: c.load.seconds });
  const { verdict, report } = evaluateRun(analysis, {
    kind: 'sustained',
    p99LimitMs: c.p99LimitMs,
    reconciliation: { rows_written: tally.rows, quantity_gained: tally.quantity },
  });
  const out = c.check({ analysis, gate: verdict.ingest, probe: verdict.probe, tally, summary: res.summary });
  if (res.interrupted) out.problems.push(`the run was cut short (${res.summary.reason})`);
  const ok = out.problems.length === 0;
  return {
    id: c.id,
    name: c.name,
    ok,
    line: `case ${c.id} ${c.name}: ${out.facts} -> ${ok ? 'ok' : `OFF: ${out.problems.join('; ')}`}`,
    problems: out.problems,
    stream,
    tally,
    report,
  };
}

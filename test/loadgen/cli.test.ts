// test-mode: alone
// `rig measure` and `rig analyze` as a user runs them, against the calibration server. Alone: these
// runs' verdicts judge this host's timing (a PASS needs an on-time generator). The refusals and the
// analyses of a stream the test writes judge nothing of the host: test/loadgen/cli-refusals.test.ts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import zlib from 'node:zlib';
import { CalibrationServer } from '../../lib/loadgen/calibration-server';
import { readSampleFile } from '../../lib/loadgen/sample-reader';

const root = path.resolve(__dirname, '..', '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-cli-test-'));
let server: CalibrationServer;
let url = '';
before(async () => {
  server = new CalibrationServer({ apiKey: 'cli-key', customers: ['cus_1', 'cus_2'] });
  url = await server.start();
});
after(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

function rig(args: string[], o: { key?: string; onStderr?: (chunk: string, pid: number) => void } = {}): Promise<Ran> {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'rig.cjs'), ...args], {
    cwd: root,
    env: { ...process.env, RIG_API_KEY: o.key ?? 'cli-key' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    o.onStderr?.(d, child.pid as number);
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

// 500 requests/s for 3 s: thirds of 500 requests, enough to bound each third's p99 (a drift interval
// needs 435, lib/protocol/drift.ts), so a steady run is judged on drift
const load = (out: string, extra: string[] = []) => ['measure', '--url', url, '--rate', '2500', '--batch', '5', '--seconds', '3', '--out', out, '--quiet', ...extra];

test('measure writes the stream and verdict.json; analyze re-derives the same figures, and reconciles', async () => {
  server.configure({ serviceMs: 2 });
  const out = path.join(dir, 'good');
  const r = await rig(load(out, ['--run-tag', 'good-1', '--drift-limit', '1000', '--p99-limit-ms', '1000']));
  // every check that ran passed, but nothing counted the rows: UNRECONCILED, exit 3, never PASS
  assert.equal(r.code, 3, r.out + r.err);
  assert.match(r.out, /^UNRECONCILED: every check that ran passed \(threshold, delivered, dropped, failed, samples, drift, instrument\); not checked: rows, quantity: /m);
  assert.doesNotMatch(r.out, /^PASS/m);
  assert.match(r.err, /give --db URL .* or --reconcile rows=N,quantity=Q/);
  const verdict = JSON.parse(fs.readFileSync(path.join(out, 'verdict.json'), 'utf8')) as { run_tag: string; report: Record<string, unknown>; options: Record<string, unknown> };
  assert.equal(verdict.run_tag, 'good-1');
  assert.equal(verdict.options.customers, 2);
  assert.ok(!JSON.stringify(verdict).includes('cli-key'), 'the key is never written');
  const t = server.tally('good-1');

  const a = await rig(['analyze', path.join(out, 'samples.csv.gz'), '--json', '--reconcile', `rows=${t.rows},quantity=${t.quantity}`, '--drift-limit', '1000', '--p99-limit-ms', '1000']);
  assert.equal(a.code, 0, a.err);
  assert.equal((JSON.parse(a.out) as { verdict: { state: string } }).verdict.state, 'PASS');
  const j = JSON.parse(a.out) as Record<string, unknown> & { gate: { passed: boolean; reconciled: boolean; reasons: string[] }; probe: { verdict: string } };
  for (const k of ['samples', 'dropped', 'failed', 'delivered_rate', 'p50_ms', 'p99_ms', 'worst_10s_p99_ms', 'drift', 'freeze_seconds', 'freeze_cadence_s', 'windows', 'probe', 'gate']) assert.ok(k in j, k);
  assert.deepEqual([j.samples, j.dropped, j.failed, j.gate.passed, j.gate.reconciled], [1500, 0, 0, true, true]);
  assert.equal(j.delivered_rate, 2500);
  // the same stream gives the same figures as measure reported
  for (const k of ['samples', 'p50_ms', 'p99_ms', 'worst_10s_p99_ms', 'drift']) assert.equal(j[k], verdict.report[k], k);

  const off = await rig(['analyze', path.join(out, 'samples.csv.gz'), '--json', '--reconcile', `rows=${t.rows - 3},quantity=${t.quantity}`, '--drift-limit', '1000', '--p99-limit-ms', '1000']);
  assert.equal(off.code, 99, 'FAIL is a negative verdict: 99');
  assert.deepEqual((JSON.parse(off.out) as typeof j).gate.reasons, [`rows: rows written ${t.rows - 3} != events claimed ${t.rows} (missing 3)`]);

  // analyze without --reconcile: the same stream is UNRECONCILED (exit 3), with what ran and what did not
  const un = await rig(['analyze', path.join(out, 'samples.csv.gz'), '--drift-limit', '1000', '--p99-limit-ms', '1000']);
  assert.equal(un.code, 3, un.out + un.err);
  assert.match(un.out, /\nUNRECONCILED: every check that ran passed \(threshold, delivered, dropped, failed, samples, drift, instrument\); not checked: rows, quantity: .*\n$/);
  assert.match(un.err, /give --reconcile rows=N,quantity=Q/);
  // a failed check is FAIL (exit 99), reconciled or not
  const failed = await rig(['analyze', path.join(out, 'samples.csv.gz'), '--drift-limit', '1000', '--p99-limit-ms', '0.001']);
  assert.equal(failed.code, 99, failed.out + failed.err);
  assert.match(failed.out, /\nFAIL \(not checked: rows, quantity\): threshold: p99 [\d.]+ ms > limit 0\.001 ms/);
});

test('measure: a probe over budget fails the run while ingest holds, and both are printed', async () => {
  server.configure({ serviceMs: 1, probeMs: 40 });
  const r = await rig(load(path.join(dir, 'probe'), ['--probe-rate', '6', '--probe-p99-ms', '20', '--drift-limit', '1000']));
  assert.equal(r.code, 99, r.out + r.err);
  assert.match(r.out, /ok {3}dropped: 0 dropped/);
  assert.match(r.out, /ok {3}failed: 0 failed/);
  assert.match(r.out, /probe verdict: DEGRADED/);
  assert.match(r.out, /^FAIL .*probe probe:aggregate: p99 \d+(\.\d+)? ms > budget 20 ms/m);
  server.configure({ serviceMs: 1 });
});

test('measure --closed-loop: a ceiling', async () => {
  server.configure({ serviceMs: 1 });
  const r = await rig(['measure', '--url', url, '--closed-loop', '--workers', '4', '--batch', '10', '--seconds', '2', '--out', path.join(dir, 'ceiling'), '--quiet']);
  assert.match(r.out, /ok {3}failed: 0 failed/);
  assert.match(r.out, /note drift \(noted, not gated on a ceiling\)/);
  assert.doesNotMatch(r.out, /instrument/, 'a closed loop has no schedule: no instrument check');
  // not reconciled: never a PASS (exit 3), or FAIL (exit 1) when 2 s gave fewer than 1,000 samples
  assert.ok(r.code === 3 || (r.code === 1 && /fewer than the 1000 required/.test(r.out)), `${r.code}\n${r.out}`);
});

test('measure cut short by SIGINT: exit 130, a valid stream up to then, and it says so', async () => {
  server.configure({ serviceMs: 1 });
  const out = path.join(dir, 'cut');
  let signalled = false;
  const r = await rig(['measure', '--url', url, '--rate', '500', '--batch', '1', '--seconds', '60', '--out', out], {
    onStderr: (chunk, pid) => {
      if (!signalled && /\[\s+1s\]/.test(chunk)) {
        signalled = true;
        process.kill(pid, 'SIGINT');
      }
    },
  });
  assert.equal(r.code, 130, r.out + r.err);
  assert.match(r.out, /CUT SHORT/);
  const c = await readSampleFile(path.join(out, 'samples.csv.gz'));
  assert.ok(c.length > 0 && c.length < 30_000);
  const v = JSON.parse(fs.readFileSync(path.join(out, 'verdict.json'), 'utf8')) as { report: { verdict: { interrupted: boolean; passed: boolean } } };
  assert.deepEqual(v.report.verdict, { ...v.report.verdict, interrupted: true, passed: false });
});

test('analyze refuses a truncated or corrupt stream, naming the line', async () => {
  const good = path.join(dir, 'good', 'samples.csv.gz');
  const text = zlib.gunzipSync(fs.readFileSync(good)).toString('latin1');
  const cut = path.join(dir, 'cut-mid-row.csv.gz');
  // the stream's rows end on line 1502 (line 1 is its #plan, 2 the header); its #end (1503) is cut with them
  const rowsOnly = text.slice(0, text.lastIndexOf('#end '));
  fs.writeFileSync(cut, zlib.gzipSync(rowsOnly.slice(0, rowsOnly.length - 7)));
  const r1 = await rig(['analyze', cut]);
  assert.equal(r1.code, 2);
  assert.match(r1.err, /line 1502: truncated: the last line has no newline/);
  const lines = text.split('\n');
  lines[41] = 'ingest,12,oops,3,201,5,100';
  const bad = path.join(dir, 'corrupt.csv.gz');
  fs.writeFileSync(bad, zlib.gzipSync(lines.join('\n')));
  const r2 = await rig(['analyze', bad, '--json']);
  assert.equal(r2.code, 2);
  assert.match(r2.err, /line 42: sent_us is not an integer: 'oops'/);
  assert.equal(r2.out, '');
});

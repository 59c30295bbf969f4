// `rig calibrate` as a user runs it (node bin/rig.cjs calibrate): the generator against the
// calibration server in all six cases, one line per case, then CALIBRATED (6/6) and exit 0.
// Its --json results are then checked case by case against the server's own counts. Case 1's
// ±0.5 ms window is the command's own check; here its structure and counts are asserted.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import type { CaseResult } from '../../lib/loadgen/calibrate';

const root = path.resolve(__dirname, '..', '..');

test('rig calibrate: six cases, each judged against the truth, then CALIBRATED (6/6)', async () => {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'rig.cjs'), 'calibrate', '--json'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const lines = out.trim().split('\n');
  const start = lines.indexOf('[');
  const end = lines.lastIndexOf(']');
  assert.ok(start > 0 && end > start, `JSON results in the output:\n${out}\n${err}`);
  const cases = JSON.parse(lines.slice(start, end + 1).join('\n')) as CaseResult[];
  const byId = new Map(cases.map((c) => [c.id, c]));
  assert.deepEqual([...byId.keys()], [1, 2, 3, 4, 5, 6]);
  for (const c of cases) assert.equal(lines[c.id - 1], c.line, 'one line per case, in order');

  // 1. constant 5 ms: every request delivered, reconciled exactly, probe OK
  const c1 = byId.get(1)!;
  assert.deepEqual([c1.report.dropped, c1.report.failed, c1.report.offered, c1.report.ok], [0, 0, 1800, 1800]);
  assert.equal(c1.report.delivered_rate_rps, c1.report.offered_rate_rps);
  assert.ok((c1.report.p50_ms ?? 0) >= 5, 'no request is answered before its 5 ms');
  assert.equal(c1.tally.rows, c1.report.events_claimed);
  assert.equal(c1.tally.quantity, c1.report.quantity_claimed);
  for (const name of ['dropped', 'failed', 'rows', 'quantity', 'samples']) assert.equal(c1.report.gate.checks.find((k) => k.name === name)?.passed, true, name);
  assert.equal(c1.report.probe.verdict, 'OK');

  // 2. one 1-second freeze: exactly one freeze-second, at second 3
  assert.deepEqual(byId.get(2)!.report.freeze_seconds, [3]);
  assert.equal(byId.get(2)!.report.dropped, 0);

  // 3. capacity below the offered rate: drops counted, every sent request reached the server, the gate fails on drops
  const c3 = byId.get(3)!;
  assert.ok(c3.report.dropped > 0);
  assert.equal(c3.report.sent + c3.report.dropped, c3.report.offered);
  assert.equal(c3.tally.requests, c3.report.sent);
  assert.ok(c3.report.gate.reasons.some((r) => r.startsWith('dropped: ')));

  // 4. 1 % answered 500: failures counted exactly
  const c4 = byId.get(4)!;
  assert.equal(c4.report.failed, c4.tally.answered500);
  assert.equal(c4.report.failed, 20);
  assert.ok(c4.report.gate.reasons.some((r) => r.startsWith('failed: 20 of 2000')));

  // 5. one event in 1,000 not stored: the reconciliation gate names the exact missing count and quantity
  const c5 = byId.get(5)!;
  assert.equal(c5.tally.skippedRows, 16);
  assert.ok(c5.report.gate.reasons.includes(`rows: rows written ${c5.tally.rows} != events claimed ${c5.report.events_claimed} (missing 16)`));
  assert.ok(c5.report.gate.reasons.includes(`quantity: quantity gained ${c5.tally.quantity} != quantity sent (acknowledged) ${c5.report.quantity_claimed} (missing ${c5.tally.skippedQuantity})`));

  // 6. service time rising: drift over the limit, the gate fails on drift
  assert.ok((byId.get(6)!.report.drift ?? 0) > 1.5);
  assert.ok(byId.get(6)!.report.gate.reasons.some((r) => r.startsWith('drift: ')));

  // and the command's own verdict
  assert.equal(code, 0, `exit ${code}\n${out}\n${err}`);
  assert.equal(lines.at(-1), 'CALIBRATED (6/6)');
  assert.ok(cases.every((c) => c.ok));
});

// test-mode: alone
// `rig calibrate` as a user runs it (node bin/rig.cjs calibrate): the generator against the
// calibration server (its own process) in all nine cases, one line per case and under it the
// server's own figures beside the client's, then the instrument's floor and CALIBRATED (9/9), exit 0.
// Its --json results are then checked case by case against the server's own counts and times.
// Alone: CALIBRATED judges this host's timing. The refusals a user meets (a floor too coarse for the
// p99 limit given, bad input) judge nothing of the host: test/loadgen/calibrate-refusals.test.ts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import type { CaseResult } from '../../lib/loadgen/calibrate';

const root = path.resolve(__dirname, '..', '..');

async function rig(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'rig.cjs'), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, out, err };
}

test('rig calibrate: the floor and eight cases, each judged against the truth, then CALIBRATED (9/9)', async () => {
  const { code, out, err } = await rig(['calibrate', '--json']);
  const lines = out.trim().split('\n');
  const start = lines.indexOf('[');
  const end = lines.lastIndexOf(']');
  assert.ok(start > 0 && end > start, `JSON results in the output:\n${out}\n${err}`);
  const cases = JSON.parse(lines.slice(start, end + 1).join('\n')) as CaseResult[];
  const byId = new Map(cases.map((c) => [c.id, c]));
  assert.deepEqual([...byId.keys()], [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  for (const [k, c] of cases.entries()) {
    assert.equal(lines[2 * k], c.line, 'one line per case, in order');
    assert.equal(lines[2 * k + 1], c.truthLine, '... and under it the truth');
    assert.match(c.truthLine, /^ {2}truth: server p50 [\d.]+ ms p99 [\d.]+ ms; client p50 [\d.]+ ms p99 [\d.]+ ms; excess p50 -?[\d.]+ ms p99 -?[\d.]+ ms; schedule lag p99 -?[\d.]+ ms \(\d+ requests joined\)$/);
  }

  // 0. the floor: >= 2,000 requests, each joined to the server's own record; printed with its share of the limit
  const c0 = byId.get(0)!;
  assert.ok(c0.truth.joined >= 2000, `floor: ${c0.truth.joined} joined`);
  assert.deepEqual([c0.truth.client_only, c0.truth.server_only], [0, 0]);
  const floorLine = lines.find((l) => l.startsWith('instrument floor p50 '));
  assert.ok(floorLine, `the floor line:\n${out}`);
  assert.match(floorLine, new RegExp(`^instrument floor p50 ${c0.truth.excess_p50_ms!.toFixed(2)} ms, p99 ${c0.truth.excess_p99_ms!.toFixed(2)} ms = [\\d.]+ % of the smallest p99 limit 50 ms \\(at most 20 %; ${c0.truth.joined} requests\\)$`));

  // 1. constant 5 ms: judged by the server's own time and the client's excess; every request delivered, reconciled exactly, probe OK
  const c1 = byId.get(1)!;
  assert.deepEqual([c1.report.dropped, c1.report.failed, c1.report.offered, c1.report.ok], [0, 0, 1800, 1800]);
  assert.equal(c1.truth.joined, 1800);
  // It begins answering one measured answer cost early, so its own p50 sits either side of 5 ms.
  assert.ok(Math.abs(c1.truth.server_p50_ms! - 5) <= 0.2, `the server holds each request its 5 ms (p50 ${c1.truth.server_p50_ms} ms)`);
  assert.ok(c1.truth.client_p50_ms! > c1.truth.server_p50_ms!, 'the client sees the server time and more');
  assert.match(c1.line, /^case 1 constant 5 ms service time: server p50 [\d.]+ ms \(5 ± 0\.2\), client p50 [\d.]+ ms, excess p50 [\d.]+ ms p99 [\d.]+ ms \(floor [\d.]+ \/ [\d.]+ ms\)/);
  assert.equal(c1.report.delivered_rate_rps, c1.report.offered_rate_rps);
  assert.equal(c1.tally.rows, c1.report.events_claimed);
  assert.equal(c1.tally.quantity, c1.report.quantity_claimed);
  for (const name of ['dropped', 'failed', 'rows', 'quantity', 'samples']) assert.equal(c1.report.gate.checks.find((k) => k.name === name)?.passed, true, name);
  assert.equal(c1.report.probe.verdict, 'OK');

  // 2. one 1-second freeze: exactly one freeze-second, at second 3
  assert.deepEqual(byId.get(2)!.report.freeze_seconds, [3]);
  assert.equal(byId.get(2)!.report.dropped, 0);

  // 3. capacity below the offered rate: drops counted, every sent request reached the server, the gate fails on drops
  const c3 = byId.get(3)!;
  assert.ok(c3.report.dropped > 0, 'case 3 drops');
  assert.equal(c3.report.sent + c3.report.dropped, c3.report.offered);
  assert.equal(c3.tally.requests, c3.report.sent);
  assert.equal(c3.truth.joined, c3.report.sent, 'the server recorded every request sent');
  assert.ok(c3.report.gate.reasons.some((r) => r.startsWith('dropped: ')), c3.report.gate.reasons.join('; '));

  // 4. 1 % answered 500: failures counted exactly
  const c4 = byId.get(4)!;
  assert.equal(c4.report.failed, c4.tally.answered500);
  assert.equal(c4.report.failed, 20);
  assert.ok(c4.report.gate.reasons.some((r) => r.startsWith('failed: 20 of 2000')), c4.report.gate.reasons.join('; '));

  // 5. one event in 1,000 not stored: the reconciliation gate names the exact missing count and quantity
  const c5 = byId.get(5)!;
  assert.equal(c5.tally.skippedRows, 16);
  assert.ok(c5.report.gate.reasons.includes(`rows: rows written ${c5.tally.rows} != events claimed ${c5.report.events_claimed} (missing 16)`), c5.report.gate.reasons.join('; '));
  assert.ok(c5.report.gate.reasons.includes(`quantity: quantity gained ${c5.tally.quantity} != quantity sent (acknowledged) ${c5.report.quantity_claimed} (missing ${c5.tally.skippedQuantity})`), c5.report.gate.reasons.join('; '));

  // 6. service time rising: drift over the limit, the gate fails on drift
  assert.ok((byId.get(6)!.report.drift ?? 0) > 1.5, `case 6 drift ${byId.get(6)!.report.drift}`);
  assert.ok(byId.get(6)!.report.gate.reasons.some((r) => r.startsWith('drift: ')), byId.get(6)!.report.gate.reasons.join('; '));

  // 7. Poisson arrivals: the gaps the server saw pass the KS test; every request delivered
  const c7 = byId.get(7)!;
  assert.match(c7.line, /^case 7 Poisson arrivals: \d+ requests on a Poisson schedule \(seed \d+\); the server's gaps: KS D [\d.]+, within a 2-ms band [\d.]+, p [\d.]+ \(n \d+\) -> ok$/);
  assert.equal(c7.report.dropped, 0);
  assert.equal(c7.truth.joined, c7.report.offered, 'every request of the Poisson schedule joined to the server\'s record');

  // 8. a spike to 5x: both edges seen by the server within 1 ms, each phase's requests where the schedule put them
  const c8 = byId.get(8)!;
  assert.match(c8.line, /^case 8 a spike to 5x: edges seen at 2 s -?[\d.]+ ms\/-?[\d.]+ ms, 4 s -?[\d.]+ ms\/-?[\d.]+ ms \(before\/after, within 1 ms\); requests seen per phase \d+\/200, \d+\/1000, \d+\/200 -> ok$/);
  assert.equal(c8.report.offered, 1400);

  // and the command's own verdict
  assert.equal(code, 0, `exit ${code}\n${out}\n${err}`);
  assert.equal(lines.at(-1), 'CALIBRATED (9/9)');
  assert.ok(cases.every((c) => c.ok), 'every case ok');
});

// `rig calibrate`'s refusals as a user meets them: a floor too coarse for the p99 limit given (0.01 ms:
// refused on any host, so nothing here judges this host's timing and the file runs beside others), and
// bad input. The calibration that must pass is test/loadgen/calibrate-command.test.ts (alone).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rig as runRig } from '../harness/rig-cli';

/** `rig ARGS` as a user runs it (test/harness/rig-cli.ts). */
async function rig(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const r = await runRig(args);
  return { code: r.code, out: r.stdout, err: r.stderr };
}

test('rig calibrate --p99-limit-ms: a floor too coarse for the limit is NOT CALIBRATED, naming the case and the figure', async () => {
  const { code, out, err } = await rig(['calibrate', '--case', '0', '--p99-limit-ms', '0.01']);
  assert.equal(code, 1, `exit ${code}\n${out}\n${err}`);
  const lines = out.trim().split('\n');
  assert.match(lines.find((l) => l.startsWith('instrument floor ')) ?? '', /^instrument floor p50 [\d.]+ ms, p99 [\d.]+ ms = [\d.]+ % of the smallest p99 limit 0\.01 ms \(at most 20 %; \d+ requests\)$/);
  assert.ok(lines.some((l) => /^OFF: case 0 instrument floor \(0 ms service time\): floor p99 [\d.]+ ms is [\d.]+ % of the smallest p99 limit 0\.01 ms, over 20 %/.test(l)), out);
  assert.equal(lines.at(-1), 'NOT CALIBRATED (0/1)');
});

test('rig calibrate: bad input names the flag and the fix (exit 2)', async () => {
  for (const [args, message] of [
    [['--p99-limit-ms', '0'], /--p99-limit-ms must be a positive number of milliseconds/],
    [['--p99-limit-ms', 'fast'], /--p99-limit-ms must be a positive number of milliseconds .* got 'fast'/],
    [['--case', '9'], /--case must be a case number 0\.\.8, got 9/],
  ] as const) {
    const { code, err } = await rig(['calibrate', ...args]);
    assert.equal(code, 2, `${args.join(' ')}: ${err}`);
    assert.match(err, message);
  }
});

// `rig calibrate` itself, as a user runs it: six lines, then CALIBRATED (6/6), exit 0.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..');

test('node bin/rig.cjs calibrate prints one line per case and CALIBRATED (6/6)', async () => {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'rig.cjs'), 'calibrate'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const lines = out.trim().split('\n');
  for (let i = 1; i <= 6; i++) assert.ok(lines.some((l) => l.startsWith(`case ${i} `)), `a line for case ${i}:\n${out}`);
  assert.equal(code, 0, `exit ${code}\n${out}\n${err}`);
  assert.equal(lines.at(-1), 'CALIBRATED (6/6)');
});

// `npm test`'s runner (scripts/run-tests.cjs) on a folder of tiny test files: each file's own
// `// test-mode:` header decides how it runs, `--quick` takes the unit files alone, a failing file
// fails the run, and the run ends with the per-file table and the closing count CI reads.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..');
const runner = path.join(root, 'scripts', 'run-tests.cjs');

function folder(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-runner-'));
  for (const [name, body] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), body);
  return dir;
}

const passing = (mode: string, n: number) =>
  `${mode ? `// test-mode: ${mode}\n` : ''}import { test } from 'node:test';\n` +
  Array.from({ length: n }, (_, i) => `test('t${i}', () => { if (!process.env.RIG_STATE_DIR) throw new Error('no state dir'); });\n`).join('');

function run(args: string[]) {
  // RIG_TEST_CONCURRENCY=2 and no RIG_STATE_DIR from the outer run: each file must get its own.
  const env: NodeJS.ProcessEnv = { ...process.env, RIG_TEST_CONCURRENCY: '2' };
  delete env.RIG_STATE_DIR;
  return spawnSync(process.execPath, [runner, ...args], { cwd: root, encoding: 'utf8', env });
}

test('every mode runs, each file with its own state folder; the table and the closing line end the run', () => {
  const dir = folder({ 'a.test.ts': passing('unit', 2), 'b.test.ts': passing('alone', 1), 'c.test.ts': passing('', 3) });
  const r = run([dir]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /3 test files: 1 alone, 2 side by side \(2 at a time/);
  assert.match(r.stdout, /\| .*a\.test\.ts +\| unit +\| +2 \|/);
  assert.match(r.stdout, /\| .*b\.test\.ts +\| alone +\| +1 \|/);
  assert.match(r.stdout, /\| .*c\.test\.ts +\| shared +\| +3 \|/);
  assert.match(r.stdout.trimEnd().split('\n').pop()!, /^tests: 6 passed, 0 failed$/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('--quick runs the unit files only; a failing file fails the run and is named', () => {
  const dir = folder({
    'a.test.ts': passing('unit', 1),
    'b.test.ts': passing('', 1),
    'c.test.ts': `// test-mode: unit\nimport { test } from 'node:test';\ntest('fails', () => { throw new Error('boom'); });\n`,
  });
  const r = run(['--quick', dir]);
  assert.equal(r.status, 1);
  assert.doesNotMatch(r.stdout, /b\.test\.ts/);
  assert.match(r.stdout, /failed files:\n {2}.*c\.test\.ts/);
  assert.match(r.stdout.trimEnd().split('\n').pop()!, /^tests: 1 passed, 1 failed$/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('an unknown option or a missing path is a usage error (exit 2)', () => {
  assert.equal(run(['--bogus']).status, 2);
  const missing = run([path.join(os.tmpdir(), 'no-such-rig-tests')]);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /no such file or folder/);
});

test('a file that leaves a process running outside its process group: the process is killed and named; the table counts each file\'s CPU seconds', (t) => {
  // A sleeper in a session of its own, as pg_ctl's postgres is: the process-group kill does not reach it.
  const marker = `rig-leak-${process.pid}-${Date.now()}`;
  const dir = folder({
    'leak.test.ts': `import { test } from 'node:test';\nimport { spawn } from 'node:child_process';\ntest('leaks', () => { spawn(process.execPath, ['-e', 'setTimeout(() => {}, 300000) // ${marker}'], { detached: true, stdio: 'ignore' }).unref(); });\n`,
  });
  const r = run([dir]);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const counted = /^\| .*leak\.test\.ts +\| shared +\| +1 \| +[\d.]+ \| +[\d.]+% \| +([\d.]+|-) \|$/m.exec(r.stdout);
  assert.ok(counted, r.stdout);
  if (counted[1] === '-') {
    // No writable cgroup here (not root): nothing is counted or killed, and the column says so.
    t.skip('no writable cgroup on this machine: run as root (as CI does) to see the leftover killed');
    spawnSync('pkill', ['-f', marker]);
    return;
  }
  assert.match(r.stdout, new RegExp(`leak\\.test\\.ts left 1 process\\(es\\) running outside its process group, killed:\\n +\\d+ .*node -e setTimeout.*${marker}`));
  assert.equal(spawnSync('pgrep', ['-f', marker]).status, 1, 'no sleeper is left running');
});

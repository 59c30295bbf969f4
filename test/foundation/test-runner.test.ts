// `npm test`'s runner (scripts/run-tests.cjs) on a folder of tiny test files: each file's own
// `// test-mode:` header decides how it runs, `--quick` takes the unit files alone, a failing file
// fails the run, and the run ends with the per-file table, the skipped tests listed, and the closing
// count CI reads; scripts/check-skips.cjs (.ci/run) fails on a skip not on the allow-list.
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
  assert.match(r.stdout.trimEnd().split('\n').pop()!, /^tests: 6 passed, 0 failed, 0 skipped$/);
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
  assert.match(r.stdout.trimEnd().split('\n').pop()!, /^tests: 1 passed, 1 failed, 0 skipped$/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('skipped tests are counted and named per file and at the end; check-skips fails on one not allowed, naming it', () => {
  const dir = folder({
    'a.test.ts': `import { describe, test } from 'node:test';\ntest('runs', () => {});\ntest('needs x', { skip: 'no x here' }, () => {});\ndescribe('group', () => { test('inner # one', (t) => { t.skip('not today'); }); });\n`,
    'b.test.ts': passing('unit', 1),
  });
  const r = run([dir]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const a = path.relative(root, path.join(dir, 'a.test.ts'));
  assert.ok(r.stdout.includes(`skipped: 2 in ${a}\n  ﹣ needs x # SKIP no x here\n  ﹣ group › inner # one # SKIP not today\n`), r.stdout);
  const closing = r.stdout.trimEnd().split('\n').slice(-5);
  assert.deepEqual(closing, ['skipped: 2', `  ${a}: needs x # SKIP no x here`, `  ${a}: group › inner # one # SKIP not today`, '', 'tests: 2 passed, 0 failed, 2 skipped']);

  const log = path.join(dir, 'npm-test.log');
  fs.writeFileSync(log, r.stdout);
  const check = (allowList: string) => {
    fs.writeFileSync(path.join(dir, 'allowed'), allowList);
    return spawnSync(process.execPath, [path.join(root, 'scripts', 'check-skips.cjs'), log, path.join(dir, 'allowed')], { encoding: 'utf8' });
  };
  const none = check('# nothing allowed\n');
  assert.equal(none.status, 1, none.stdout + none.stderr);
  assert.match(none.stdout, /^== skipped tests: 2, 0 of them on /m);
  assert.ok(none.stdout.includes(`  ✖ not allowed: ${a}: needs x # SKIP no x here\n  ✖ not allowed: ${a}: group › inner # one # SKIP not today\n`), none.stdout);
  const one = check(`${a}: needs x  # x is not installed on CI\n`);
  assert.equal(one.status, 1, one.stdout);
  assert.ok(one.stdout.includes(`  allowed (x is not installed on CI): ${a}: needs x # SKIP no x here\n  ✖ not allowed: ${a}: group › inner # one # SKIP not today\n`), one.stdout);
  const both = check(`${a}: needs x  # x is not installed on CI\n${a}: group › inner # one  # not on CI's days\n`);
  assert.equal(both.status, 0, both.stdout);
  assert.match(both.stdout, /^== skipped tests: 2, 2 of them on /m);
  const noWhy = check(`${a}: needs x\n`);
  assert.equal(noWhy.status, 2);
  assert.match(noWhy.stderr, /allowed:1: each entry is `FILE: TEST NAME {2}# why`/);
  fs.writeFileSync(log, r.stdout.split('\nskipped: 2\n')[0]);
  const unfinished = check('');
  assert.equal(unfinished.status, 1);
  assert.match(unfinished.stdout, /has no `skipped: N` list: the test run did not finish/);
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

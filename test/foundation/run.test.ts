// runProgram (lib/tools/run.ts): execa, loaded by import() under tsx (a require of it fails there),
// gives back a program's output unchanged, and a failure or a timeout throws naming the program with
// its own words.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runProgram } from '../../lib/tools/run';

test('output comes back as written, trailing newline included; the environment is exactly the one given', async () => {
  const out = await runProgram('/bin/sh', ['-c', 'printf "%s\\n" "$GREETING"; printf "to stderr" >&2'], { env: { GREETING: 'hello', PATH: process.env.PATH } });
  assert.deepEqual(out, { stdout: 'hello\n', stderr: 'to stderr' });
  const env = await runProgram('/bin/sh', ['-c', 'echo "${HOME:-unset}"'], { env: { PATH: process.env.PATH } });
  assert.equal(env.stdout, 'unset\n');
});

test('a failing program throws with its name, arguments and stderr', async () => {
  await assert.rejects(runProgram('/bin/sh', ['-c', 'echo "the reason" >&2; exit 3']), /^Error: sh -c .* failed: the reason$/);
  await assert.rejects(runProgram('/nonexistent/pg_ctl', ['start']), /pg_ctl start failed: .*ENOENT/);
});

test('a program past its timeout is stopped and fails', async () => {
  const started = Date.now();
  await assert.rejects(runProgram('/bin/sleep', ['30'], { timeoutMs: 300 }), /sleep 30 failed: .*timed out/i);
  assert.ok(Date.now() - started < 10_000);
});

// reference/main.ts as the local target runs it: `node --import tsx reference/main.ts`, configured by
// HC_* variables, one JSON line on stdout when listening, a clean exit on SIGTERM, and never the
// database password in anything it prints.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { before, test } from 'node:test';
import { projectRoot } from '../../lib/tools/paths';
import { freePort } from '../../lib/tools/free-port';
import { hardcountDb, TEST_APP_PASSWORD, type HardcountDb } from '../harness/hardcount';

// Password authentication on TCP, so that a wrong password really fails.
const dbReady = hardcountDb({ superuserPassword: 'su-pw-main' });
let db: HardcountDb;
before(async () => {
  db = await dbReady;
});

interface Run {
  stdout: string;
  stderr: string;
  code: number | null;
}

function launch(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join('reference', 'main.ts')], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (b: Buffer) => (out.stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out.stderr += b.toString()));
  const exited = new Promise<Run>((resolve) => child.on('exit', (code) => resolve({ ...out, code })));
  const firstLine = new Promise<string>((resolve, reject) => {
    const onData = () => {
      const nl = out.stdout.indexOf('\n');
      if (nl >= 0) resolve(out.stdout.slice(0, nl));
    };
    child.stdout.on('data', onData);
    void exited.then((r) => reject(new Error(`exited ${r.code} before listening: ${r.stderr}`)));
  });
  firstLine.catch(() => undefined); // awaited only by the tests that expect a listening service
  return { child, exited, firstLine };
}

test('it listens on a free port, prints {"listening", "pid"}, serves, and exits 0 on SIGTERM', async () => {
  const p = launch({ HC_DATABASE_URL: db.appUrl, HC_PORT: '0', HC_INSERT: 'multi-row', HC_AGGREGATE: 'rollup' });
  db.defer(() => p.child.kill('SIGKILL'));
  const line = JSON.parse(await p.firstLine) as { listening: string; pid: number };
  assert.deepEqual(Object.keys(line).sort(), ['listening', 'pid']);
  assert.match(line.listening, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(line.pid, p.child.pid);
  const health = (await (await fetch(line.listening + '/healthz')).json()) as { db_role: string; rls: boolean };
  assert.deepEqual(health, { ok: true, db_role: 'hardcount_app', rls: true, livemode: false, settings: { lastUsed: 'per-minute', insert: 'multi-row', aggregate: 'rollup' } });
  p.child.kill('SIGTERM');
  const run = await p.exited;
  assert.equal(run.code, 0);
  assert.match(run.stderr, /insert multi-row, aggregate rollup/);
  assert.ok(!(run.stdout + run.stderr).includes(TEST_APP_PASSWORD), 'the password is never printed');
  assert.equal(run.stdout.trim().split('\n').length, 1, 'exactly one line on stdout');
});

test('HC_PORT and HC_HOST are honoured', async () => {
  const port = await freePort();
  const p = launch({ HC_DATABASE_URL: db.appUrl, HC_PORT: String(port), HC_HOST: '127.0.0.1', HC_POOL_SIZE: '3' });
  db.defer(() => p.child.kill('SIGKILL'));
  const line = JSON.parse(await p.firstLine) as { listening: string };
  assert.equal(line.listening, `http://127.0.0.1:${port}`);
  p.child.kill('SIGTERM');
  const run = await p.exited;
  assert.equal(run.code, 0, JSON.stringify(run));
});

test('a bad switch exits 2 naming the variable; a wrong password exits 1; neither prints the password', async () => {
  const bad = await launch({ HC_DATABASE_URL: db.appUrl, HC_LAST_USED: 'hourly' }).exited;
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /HC_LAST_USED/);
  assert.equal(bad.stdout, '');

  const wrongUrl = db.appUrl.replace(encodeURIComponent(TEST_APP_PASSWORD), 'not-the-password-xyz');
  assert.notEqual(wrongUrl, db.appUrl);
  const wrong = await launch({ HC_DATABASE_URL: wrongUrl }).exited;
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /password authentication failed/);
  assert.ok(!wrong.stderr.includes('not-the-password-xyz'));
  assert.equal(wrong.stdout, '', 'no listening line when the database is unreachable');

  for (const run of [bad, wrong]) assert.ok(!(run.stdout + run.stderr).includes(TEST_APP_PASSWORD));
});

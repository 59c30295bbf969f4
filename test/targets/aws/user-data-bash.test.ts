// The nodes' user data run, in pieces, by bash itself: the rendered text of retry() and the rendered S3
// fetch line with a fake `aws` on PATH that fails (AccessDenied, as a seconds-old instance profile
// does) and then succeeds; and the rendered deadline check (rig-deadline) with the real curl against a
// real HTTP server standing in for instance metadata (IMDSv2: token, then the rig:expires tag), a fake
// `systemctl` that records the poweroff it is asked for.
//
// Why: `bash -n` (user-data.test.ts) says the script parses, not that a failed fetch is tried again,
// nor that a node ends itself once past its deadline and is re-armed by a moved tag. No test reaches a
// real AL2023 node: these run the same text under this machine's bash.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { nodeUserDataInput } from '../../../lib/targets/aws/bootstrap';
import { renderUserData } from '../../../lib/targets/aws/user-data';
import { freePort } from '../../../lib/tools/free-port';
import { sampleBootstrap } from '../../harness/node-bootstrap';

const run = promisify(execFile);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-user-data-bash-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const boot = sampleBootstrap('udb', 'udb', 'b');
const script = renderUserData(nodeUserDataInput('udb', 'us-east-1', 'load', boot, { lifetimeMinutes: 90 }));

function between(text: string, start: string, end: string): string {
  const i = text.indexOf(start);
  const j = text.indexOf(end, i + start.length);
  assert.ok(i >= 0 && j > i, `the user data has ${start} ... ${end}`);
  return text.slice(i, j + end.length);
}
const retryFn = between(script, '# >>> retry', '# <<< retry');
const s3Line = script.split('\n').find((l) => l.startsWith('retry "s3 get-object $TARBALL_KEY" aws s3api get-object'))!;

/** A fake command on PATH: fails `failures` times (exit 254, AccessDenied on stderr), then runs `then`; each call appended to calls.log. */
function fakeCommand(dir: string, name: string, failures: number, then: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    `#!/bin/bash\necho "$*" >>"${dir}/calls.log"\nn=$(wc -l <"${dir}/calls.log")\nif [ "$n" -le ${failures} ]; then echo "An error occurred (AccessDenied) when calling the GetObject operation: Access Denied" >&2; exit 254; fi\n${then}\n`,
  );
  fs.chmodSync(file, 0o755);
}

test('the rendered S3 fetch is retried: AccessDenied twice, then the object; each failure said with its try', async () => {
  const bin = path.join(tmp, 's3-bin');
  // The fake writes the object to the path get-object is given as its last argument.
  fakeCommand(bin, 'aws', 2, 'for last; do :; done; echo package >"$last"');
  const body = [
    'set -euo pipefail',
    retryFn,
    `REGION=us-east-1 BUCKET=${boot.bucket} TARBALL_KEY=${boot.tarballKey}`,
    `tmp=${tmp}/fetched && mkdir -p "$tmp"`,
    s3Line,
    'cat "$tmp/rig.tgz"',
  ].join('\n');
  const r = await run('bash', ['-c', body], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, RETRY_BASE_S: '0' } });
  assert.equal(r.stdout, 'package\n');
  assert.equal(fs.readFileSync(path.join(bin, 'calls.log'), 'utf8').split('\n').filter(Boolean).length, 3, 'two failures and the success');
  assert.match(r.stderr, /^rig bootstrap: s3 get-object packages\/b{64}\/rig\.tgz failed \(exit 254, try 1 of 8\): again in 0s$/m);
  assert.match(r.stderr, /try 2 of 8/);
  assert.doesNotMatch(r.stderr, /try 3 of 8/);
});

test('a step that never succeeds gives up after its tries with its exit code, and set -e stops the script there', async () => {
  const bin = path.join(tmp, 'never-bin');
  fakeCommand(bin, 'aws', 99, 'exit 0');
  const body = ['set -euo pipefail', retryFn, `REGION=r BUCKET=b TARBALL_KEY=k tmp=${tmp}`, s3Line, 'echo NOT REACHED'].join('\n');
  await assert.rejects(run('bash', ['-c', body], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, RETRY_BASE_S: '0', RETRY_ATTEMPTS: '3' } }), (err: Error & { code?: number; stdout?: string; stderr?: string }) => {
    assert.equal(err.code, 254);
    assert.doesNotMatch(err.stdout ?? '', /NOT REACHED/);
    assert.match(err.stderr ?? '', /s3 get-object k failed 3 times \(last exit 254\): giving up/);
    return true;
  });
});

test('every network step of the user data goes through retry, and its output goes to the serial console too', () => {
  for (const step of ['role_credentials', 'dnf install -y nodejs22', 'aws s3api get-object --region "$REGION" --bucket "$BUCKET" --key "$TARBALL_KEY"', 'aws s3api get-object --region "$REGION" --bucket "$BUCKET" --key "$LOCK_KEY"', 'npm-22 ci', 'aws secretsmanager get-secret-value']) {
    const line = script.split('\n').find((l) => l.includes(step) && !l.trimStart().startsWith('#') && !l.includes('() {'));
    assert.match(line ?? '', /retry "[^"]+" /, `${step}: ${line}`);
  }
  assert.match(script, /^exec > >\(tee -a \/var\/log\/rig-bootstrap\.log \/dev\/console >\/dev\/null\) 2>&1$/m);
});

// --- the deadline check, against a real HTTP server in IMDSv2's shape -----------------------------
let imds: http.Server;
let imdsUrl = '';
let tag: string | undefined;
const deadlineCheck = between(script, "<<'DEADLINE'\n", '\nDEADLINE').replace(/^<<'DEADLINE'\n/, '').replace(/\nDEADLINE$/, '');
before(async () => {
  imds = http.createServer((req, res) => {
    if (req.method === 'PUT' && req.url === '/latest/api/token') return void res.end('TOKEN');
    if (req.headers['x-aws-ec2-metadata-token'] !== 'TOKEN') return void res.writeHead(401).end();
    if (req.url === '/latest/meta-data/tags/instance/rig:expires' && tag) return void res.end(tag);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => imds.listen(0, '127.0.0.1', () => r()));
  imdsUrl = `http://127.0.0.1:${(imds.address() as AddressInfo).port}`;
});
after(() => imds?.close());

async function check(state: string, url = imdsUrl): Promise<{ poweredOff: boolean; state: string; console: string }> {
  const dir = fs.mkdtempSync(path.join(tmp, 'deadline-'));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'systemctl'), `#!/bin/bash\necho "$*" >>"${dir}/systemctl.log"\n`);
  fs.chmodSync(path.join(bin, 'systemctl'), 0o755);
  const file = path.join(dir, 'rig-deadline');
  fs.writeFileSync(file, deadlineCheck, { mode: 0o755 });
  const stateFile = path.join(dir, 'state');
  if (state) fs.writeFileSync(stateFile, `${state}\n`);
  await run('bash', [file], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, IMDS_URL: url, DEADLINE_STATE: stateFile, RIG_CONSOLE: path.join(dir, 'console') } });
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
  return { poweredOff: /^poweroff$/m.test(read(path.join(dir, 'systemctl.log'))), state: read(stateFile).trim(), console: read(path.join(dir, 'console')) };
}
const epoch = (ms: number) => String(Math.floor(ms / 1000));

test('the deadline check: a tag in the future arms it; a later tag (an extend) re-arms it; past the tag it powers off, saying so', async () => {
  assert.ok(fs.existsSync('/usr/bin/curl') || fs.existsSync('/bin/curl'), 'curl is what the node\'s deadline check reads its metadata with: install it');
  const soon = Date.now() + 3600_000;
  tag = new Date(soon).toISOString();
  const armed = await check(epoch(Date.now() + 90 * 60_000));
  assert.equal(armed.poweredOff, false);
  assert.equal(armed.state, epoch(soon), 'the tag replaces the boot-time deadline');
  assert.match(armed.console, /^rig-deadline: rig:expires is \S+$/m);

  const later = soon + 2 * 3600_000;
  tag = new Date(later).toISOString();
  assert.equal((await check(epoch(soon))).state, epoch(later), 're-armed by the moved tag');

  tag = new Date(Date.now() - 60_000).toISOString();
  const past = await check(epoch(later));
  assert.equal(past.poweredOff, true);
  assert.match(past.console, /is past this node's deadline .*: powering off \(the instance terminates\)/);
});

test('the deadline check without metadata keeps the last deadline it read: before it nothing happens, after it the node powers off', async () => {
  const closed = `http://127.0.0.1:${await freePort()}`;
  const ahead = epoch(Date.now() + 3600_000);
  const kept = await check(ahead, closed);
  assert.deepEqual([kept.poweredOff, kept.state], [false, ahead]);
  const gone = await check(epoch(Date.now() - 1000), closed);
  assert.equal(gone.poweredOff, true);
  tag = undefined;
  assert.equal((await check(ahead)).state, ahead, 'no rig:expires tag (404): the deadline it had');
});

test('the user data arms the switch before any network step: boot + the spec\'s watchdog minutes, and a timer every minute', () => {
  const arm = script.indexOf('echo $(( $(date +%s) + 5400 )) >/var/lib/rig-deadline');
  assert.ok(arm > 0, 'boot + 90 min (lifetimeMinutes) into the state file');
  assert.ok(arm < script.indexOf('retry "the instance role'), 'before the first network step');
  assert.match(script, /^OnUnitActiveSec=1min$/m);
  assert.match(script, /^systemctl enable --now rig-deadline\.timer$/m);
});

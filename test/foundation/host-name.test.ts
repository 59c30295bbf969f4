// test-mode: unit
// The host identity (lib/tools/host-name.ts): RIG_HOST wins; else the first `rig worker` writes the
// OS's host name to state/host-id and every later start (and every reader) takes it from there, so a
// machine whose name changes (a container restarted) keeps its queues; a name a queue cannot carry is
// refused, naming where it came from and the fix.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { hostIdFile, hostName, workerHostIdentity } from '../../lib/tools/host-name';

const saved = { state: process.env.RIG_STATE_DIR, host: process.env.RIG_HOST };
let dir = '';
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-host-id-'));
  process.env.RIG_STATE_DIR = path.join(dir, 'state');
  delete process.env.RIG_HOST;
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [k, v] of [['RIG_STATE_DIR', saved.state], ['RIG_HOST', saved.host]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

test('the first worker writes the OS host name to state/host-id; later starts and readers take it from there', () => {
  assert.equal(hostName(), os.hostname(), 'before any worker started: the OS name (the queues keep their old names)');
  const first = workerHostIdentity();
  assert.equal(first.host, os.hostname());
  assert.match(first.from, /host-id \(written now, from the OS host name\)$/);
  assert.equal(fs.readFileSync(hostIdFile(), 'utf8'), `${os.hostname()}\n`);
  // The machine's name changes (a container restarted): the persisted identity stays.
  fs.writeFileSync(hostIdFile(), 'bench-1\n');
  assert.deepEqual(workerHostIdentity(), { host: 'bench-1', from: hostIdFile() });
  assert.equal(hostName(), 'bench-1');
});

test('RIG_HOST wins over the persisted identity and writes nothing', () => {
  process.env.RIG_HOST = 'alpha';
  assert.deepEqual(workerHostIdentity(), { host: 'alpha', from: 'RIG_HOST' });
  assert.equal(hostName(), 'alpha');
  assert.equal(fs.existsSync(hostIdFile()), false);
});

test('a name a task queue cannot carry is refused, naming where it came from', () => {
  process.env.RIG_HOST = 'my host';
  assert.throws(() => workerHostIdentity(), /^Error: the host identity "my host" \(from RIG_HOST\) is not usable in a task queue name: use letters, digits and \. _ @ : - \(set RIG_HOST, or edit .*host-id\)$/);
  delete process.env.RIG_HOST;
  fs.mkdirSync(path.dirname(hostIdFile()), { recursive: true });
  fs.writeFileSync(hostIdFile(), 'a/b\n');
  assert.throws(() => hostName(), /"a\/b" \(from .*host-id\)/);
});

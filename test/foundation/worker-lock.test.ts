// One rig worker per host name, Temporal address and namespace on a machine: a second `rig worker` is
// refused (exit 2, naming the first), `rig rehearse` uses the running one instead of starting its own,
// and a record whose process is gone is stale and taken over.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { rehearsalWorkers } from '../../client/rehearsal-workers';
import { claimWorker, runningWorker } from '../../lib/tools/worker-lock';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-worker-lock-'));
const saved = { ...process.env };
before(() => {
  process.env.RIG_STATE_DIR = dir;
});
after(() => {
  process.env = saved;
  fs.rmSync(dir, { recursive: true, force: true });
});

const where = { host: 'lock-host', address: '127.0.0.1:7233', namespace: 'default', queues: ['rig', 'rig-host-lock-host', 'rig-data-lock-host'] };

/** Another live process, standing in for a running worker. */
function otherProcess() {
  return spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
}

function recordAs(pid: number) {
  const file = path.join(dir, 'workers', 'lock-host@127.0.0.1_7233@default.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ ...where, pid, startedAt: '2026-12-01T00:00:00.000Z' }));
}

test('a worker claims its host; a second claim sees the first; released, the record is gone', () => {
  const first = claimWorker(where);
  assert.ok('release' in first);
  // The same process asking again is not "another worker"; another process's record is.
  const other = otherProcess();
  try {
    recordAs(other.pid!);
    const second = claimWorker(where);
    assert.ok('running' in second, 'the live worker is reported');
    assert.equal(second.running.pid, other.pid);
    assert.equal(runningWorker(where.host, where.address, where.namespace)?.pid, other.pid);
    // Another host name, address or namespace is another worker's business.
    const elsewhere = claimWorker({ ...where, namespace: 'nightly' });
    assert.ok('release' in elsewhere);
    elsewhere.release();
  } finally {
    other.kill('SIGKILL');
  }
});

test('a record whose process is gone is stale: the next worker takes it over', async () => {
  const gone = otherProcess();
  const pid = gone.pid!;
  gone.kill('SIGKILL');
  await new Promise((r) => gone.once('exit', r));
  recordAs(pid);
  assert.equal(runningWorker(where.host, where.address, where.namespace), undefined);
  const claim = claimWorker(where);
  assert.ok('release' in claim);
  claim.release();
  assert.equal(fs.readdirSync(path.join(dir, 'workers')).length, 0, 'released: no record left');
});

test('rig worker refuses to start beside a running one (exit 2), naming it and the way out', async () => {
  const other = otherProcess();
  const errors: string[] = [];
  const origError = console.error;
  process.env.RIG_HOST = where.host;
  process.env.TEMPORAL_ADDRESS = where.address;
  process.env.TEMPORAL_NAMESPACE = where.namespace;
  try {
    recordAs(other.pid!);
    console.error = (line: string) => errors.push(String(line));
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const worker = require('../../client/commands/worker') as { run(argv: string[]): Promise<number> };
    assert.equal(await worker.run([]), 2);
  } finally {
    console.error = origError;
    other.kill('SIGKILL');
    delete process.env.RIG_HOST;
  }
  assert.match(errors.join('\n'), new RegExp(`^rig worker: a rig worker \\(pid ${other.pid}, since 2026-12-01T00:00:00.000Z\\) already serves host lock-host on 127.0.0.1:7233 namespace default; stop it first, or give this one another host name \\(RIG_HOST\\)$`));
});

test('rig rehearse campaigns on the running worker and starts none of its own; with none running, a worker that cannot start leaves no claim behind', { timeout: 60_000 }, async () => {
  // Nothing answers here: had the rehearsal tried to start its own worker, it would fail to connect.
  const nowhere = { address: '127.0.0.1:1', namespace: 'default' };
  const other = otherProcess();
  const file = path.join(dir, 'workers', 'lock-host@127.0.0.1_1@default.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ ...where, ...nowhere, pid: other.pid, startedAt: '2026-12-01T00:00:00.000Z' }));
  try {
    const workers = await rehearsalWorkers(nowhere, 'lock-host');
    assert.equal(workers.reused?.pid, other.pid, 'the running worker is used');
    await workers.stop();
    assert.ok(fs.existsSync(file), "stopping the rehearsal leaves the running worker's record alone");
  } finally {
    other.kill('SIGKILL');
  }
  fs.rmSync(file);
  await assert.rejects(rehearsalWorkers(nowhere, 'lock-host'));
  assert.equal(fs.existsSync(file), false, 'a worker that could not start leaves no claim behind');
});

// One rig worker per build, host name, Temporal address and namespace on a machine: a second `rig
// worker` of the same build is refused (exit 2, naming the first), one of another build runs beside it
// (the old one drains while the new one serves), `rig rehearse` uses the running one instead of
// starting its own, and a record whose process is gone (killed, a zombie, its pid now another
// process's) is stale and taken over.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { notCurrentRefusal, rehearsalWorkers } from '../../client/rehearsal-workers';
import { deploymentName, routing } from '../../lib/temporal/deployment';
import { claimWorker, parseProcStat, runningWorker, runningWorkers, type WorkerRecord } from '../../lib/tools/worker-lock';
import { startCampaignServer } from '../harness/campaign-server';
import { spawnRigWorker } from '../harness/worker-process';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-worker-lock-'));
const saved = { ...process.env };
before(() => {
  process.env.RIG_STATE_DIR = dir;
});
after(() => {
  process.env = saved;
  fs.rmSync(dir, { recursive: true, force: true });
});

const where = { host: 'lock-host', address: '127.0.0.1:7233', namespace: 'default', queues: ['rig', 'rig-host-lock-host', 'rig-data-lock-host'], buildId: 'build-1' };
/** The test's own build id for `rig worker` children and the command run in this process. */
process.env.RIG_BUILD_ID = where.buildId;

/** Another live process, standing in for a running worker. */
function otherProcess() {
  return spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
}

function recordAs(pid: number, extra: Partial<WorkerRecord> = {}) {
  const file = path.join(dir, 'workers', 'lock-host@127.0.0.1_7233@default', `${extra.buildId ?? where.buildId}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ ...where, pid, startedAt: '2026-12-01T00:00:00.000Z', ...extra }));
}

const linux = process.platform === 'linux';
const procStat = (pid: number) => parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
const bootId = () => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

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
    assert.equal(runningWorker(where.host, where.address, where.namespace, where.buildId)?.pid, other.pid);
    // Another host name, address or namespace is another worker's business.
    const elsewhere = claimWorker({ ...where, namespace: 'nightly' });
    assert.ok('release' in elsewhere);
    elsewhere.release();
    // So is another build: the new build's worker starts beside the old one, which drains.
    const next = claimWorker({ ...where, buildId: 'build-2' });
    assert.ok('release' in next, 'another build claims the same host');
    assert.deepEqual(runningWorkers(where.host, where.address, where.namespace).map((r) => r.buildId), ['build-1'], 'the other live record (this process is not "another worker")');
    next.release();
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
  assert.equal(runningWorker(where.host, where.address, where.namespace, where.buildId), undefined);
  const claim = claimWorker(where);
  assert.ok('release' in claim);
  claim.release();
  assert.equal(fs.readdirSync(path.join(dir, 'workers', 'lock-host@127.0.0.1_7233@default')).length, 0, 'released: no record left');
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
  assert.match(errors.join('\n'), new RegExp(`^rig worker: a rig worker of build build-1 \\(pid ${other.pid}, since 2026-12-01T00:00:00.000Z\\) already serves host lock-host on 127.0.0.1:7233 namespace default; stop it first, or give this one another host name \\(RIG_HOST\\)$`));
});

test('rig rehearse campaigns on the running worker and starts none of its own; with none running, a worker that cannot start leaves no claim behind', { timeout: 60_000 }, async () => {
  // Nothing answers here: had the rehearsal tried to start its own worker, it would fail to connect.
  const nowhere = { address: '127.0.0.1:1', namespace: 'default' };
  const other = otherProcess();
  // A worker of another build than this tree's: rehearse uses whichever build serves the host.
  const file = path.join(dir, 'workers', 'lock-host@127.0.0.1_1@default', 'build-0.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ ...where, ...nowhere, buildId: 'build-0', pid: other.pid, startedAt: '2026-12-01T00:00:00.000Z' }));
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
  assert.deepEqual(fs.readdirSync(path.dirname(file)), [], 'a worker that could not start leaves no claim behind');
});

test('parseProcStat reads state and start time past a command name with spaces and parentheses', () => {
  const fields = (state: string) => [state, ...Array.from({ length: 18 }, (_, i) => String(i + 4)), '987654', '23', '24'].join(' ');
  assert.deepEqual(parseProcStat(`4242 (a) b (c)) ${fields('Z')}`), { state: 'Z', startTime: '987654' });
  assert.deepEqual(parseProcStat(`4242 (node) ${fields('S')}`), { state: 'S', startTime: '987654' });
  assert.equal(parseProcStat('4242 (node'), undefined);
  assert.equal(parseProcStat('4242 (node) S 1 2'), undefined, 'too short: no start time');
});

test('a record that claims the start time of our worker is honoured; a live pid with another start time or boot is stale and taken over', { skip: !linux && 'needs /proc' }, () => {
  const other = otherProcess();
  try {
    const real = procStat(other.pid!)!;
    recordAs(other.pid!, { procStart: real.startTime, bootId: bootId() });
    assert.equal(runningWorker(where.host, where.address, where.namespace, where.buildId)?.pid, other.pid, 'same process: still running');
    for (const wrong of [{ procStart: String(Number(real.startTime) + 1), bootId: bootId() }, { procStart: real.startTime, bootId: '00000000-0000-0000-0000-000000000000' }]) {
      recordAs(other.pid!, wrong);
      assert.equal(runningWorker(where.host, where.address, where.namespace, where.buildId), undefined);
      const claim = claimWorker(where);
      assert.ok('release' in claim, `taken over: ${JSON.stringify(wrong)}`);
      const mine = JSON.parse(fs.readFileSync(path.join(dir, 'workers', 'lock-host@127.0.0.1_7233@default', 'build-1.json'), 'utf8')) as WorkerRecord;
      assert.equal(mine.pid, process.pid);
      assert.equal(mine.procStart, procStat(process.pid)!.startTime, 'the claim records its start time');
      assert.equal(mine.bootId, bootId(), 'and its boot');
      claim.release();
    }
  } finally {
    other.kill('SIGKILL');
  }
});

test('a zombie holds no lock, in the old format (no start time) too', { skip: !linux && 'needs /proc' }, async () => {
  // sh forks a short sleep, prints its pid, then becomes `sleep 30`, which never reaps it: once the
  // short sleep ends it is a zombie whose parent lives on.
  const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()))));
    for (let i = 0; procStat(pid)?.state !== 'Z'; i++) {
      assert.ok(i < 100, `pid ${pid} never became a zombie`);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.doesNotThrow(() => process.kill(pid, 0), 'a zombie still answers kill(pid, 0): the pid alone would keep the lock');
    recordAs(pid); // the old format: pid only
    assert.equal(runningWorker(where.host, where.address, where.namespace, where.buildId), undefined);
    recordAs(pid, { procStart: procStat(pid)!.startTime, bootId: bootId() });
    assert.equal(runningWorker(where.host, where.address, where.namespace, where.buildId), undefined);
    const claim = claimWorker(where);
    assert.ok('release' in claim, 'the zombie\'s record is taken over');
    claim.release();
  } finally {
    parent.kill('SIGKILL');
  }
});

test('a rig worker killed with SIGKILL does not hold the lock, even while it is an unreaped zombie: another started at once claims it; another build runs beside it, the same build is refused', { timeout: 120_000 }, async () => {
  const server = await startCampaignServer('rig-worker-lock-kill-');
  process.env.RIG_STATE_DIR = dir; // startCampaignServer points this process at its own folder
  const children = new Set<ChildProcess>();
  const env = { ...process.env, RIG_STATE_DIR: path.join(server.dir, 'state'), RIG_HOST: 'kill-host', TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default' };
  const file = path.join(server.dir, 'state', 'workers', `kill-host@${server.address.replace(':', '_')}@default`, 'build-1.json');
  // The first worker's parent never reaps it (sh becomes `sleep`), so once killed it stays a zombie
  // that still answers kill(pid, 0), as under a supervisor that is slow to reap.
  const rig = path.resolve(__dirname, '..', '..', 'bin', 'rig.cjs');
  const parent = spawn('sh', ['-c', `"${process.execPath}" "${rig}" worker & echo "pid:$!"; exec sleep 120`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(parent);
  try {
    let out = '';
    const pid = await new Promise<number>((resolve, reject) => {
      parent.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /pid:(\d+)/.exec(out);
        if (m && out.includes('rig worker on')) resolve(Number(m[1]));
      });
      parent.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      parent.once('exit', () => reject(new Error(`first rig worker's parent exited:\n${out}`)));
    });
    const rec = JSON.parse(fs.readFileSync(file, 'utf8')) as WorkerRecord;
    assert.equal(rec.pid, pid);
    if (linux) assert.equal(rec.procStart, procStat(pid)!.startTime);
    process.kill(pid, 'SIGKILL'); // not waited for: the next one starts straight away
    const second = await spawnRigWorker({ env, children, name: 'second rig worker' });
    assert.equal((JSON.parse(fs.readFileSync(file, 'utf8')) as WorkerRecord).pid, second.pid, 'the second worker holds the record');
    if (linux) assert.equal(procStat(pid)?.state, 'Z', 'the first is still a zombie');
    // A deploy: the next build's worker starts beside it on the same host ...
    const next = await spawnRigWorker({ env: { ...env, RIG_BUILD_ID: 'build-2' }, children, name: 'build-2 rig worker' });
    assert.equal(next.exitCode, null);
    // ... but a second worker of build-1 would split its campaigns' steps: refused, naming the first.
    await assert.rejects(spawnRigWorker({ env, children, name: 'a second build-1 worker' }), new RegExp(`exited \\(2\\)[\\s\\S]*a rig worker of build build-1 \\(pid ${second.pid},`));
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await server.close();
  }
});

test("rig rehearse on this machine's own dev server makes its build current over an older one no worker serves; elsewhere it leaves the current build alone", { timeout: 180_000 }, async () => {
  // After a `git pull`, the dev server's current version is the previous commit's build, and its
  // worker is gone: a campaign started there would wait for ever (issue 38's docs:pictures found it).
  const server = await startCampaignServer('rig-rehearse-current-');
  process.env.RIG_STATE_DIR = dir; // startCampaignServer points this process at its own folder
  const env = { address: server.address, namespace: 'default' };
  const current = async () => (await routing(server.client.workflowService, 'default', deploymentName())).current;
  const saved = process.env.RIG_BUILD_ID;
  const logs: string[] = [];
  const origError = console.error;
  console.error = (line: string) => logs.push(String(line));
  try {
    process.env.RIG_BUILD_ID = 'build-old';
    const old = await rehearsalWorkers(env, 'rehearse-host');
    assert.equal(await current(), 'build-old', 'the first build on a fresh server becomes current');
    await old.stop();

    process.env.RIG_BUILD_ID = 'build-new';
    const elsewhere = await rehearsalWorkers(env, 'rehearse-host', false);
    assert.equal(await current(), 'build-old', 'not its own server: a deploy decides');
    assert.match(logs.join('\n'), /build build-old is the current version .*This worker \(build build-new\) serves only campaigns pinned to its build/);
    // ...so rehearse starts no campaign there (it would wait for ever on build-old): it refuses, naming the fix.
    assert.equal(!elsewhere.reused && elsewhere.current, false);
    assert.match(notCurrentRefusal(env.address), /not started: this tree's build is not the current version .*`npx rig deploy set-current`/);
    await elsewhere.stop();

    const own = await rehearsalWorkers(env, 'rehearse-host', true);
    assert.equal(await current(), 'build-new', "its own dev server: this tree's build is current");
    assert.equal(!own.reused && own.current, true);
    assert.match(logs.join('\n'), /build build-new is now the current version of deployment .* \(was build-old, which drains/);
    await own.stop();
  } finally {
    console.error = origError;
    if (saved === undefined) delete process.env.RIG_BUILD_ID;
    else process.env.RIG_BUILD_ID = saved;
    await server.close();
  }
});

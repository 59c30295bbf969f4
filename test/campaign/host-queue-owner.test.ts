// One machine per host queue, against a real dev server. A poller of another machine on a host's queue
// (here an SDK worker in this process that says it is `4242@other-machine`, as a clone or a machine
// given the same RIG_HOST would) makes `rig worker` for that host refuse to start, naming both; once
// that poller has stopped, the worker starts. And the set-current check: a host whose queues only the
// current build polls (idle: no backlog, so the server's own check lets it pass, shown here with the
// `temporal` CLI) makes `rig deploy set-current` refuse, naming the host's queues, until a worker of
// the new build polls there.
// The server's long poll is 2 s here (1 minute by default), so a live poller polls again within
// seconds; the workers are told so (RIG_POLLER_LIVE_SECONDS).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { NativeConnection, Worker } from '@temporalio/worker';
import '../harness/temporal';
import { startCampaignServer, type CampaignServer } from '../harness/campaign-server';
import { waitFor } from '../harness/campaign';
import { spawnRigWorker } from '../harness/worker-process';
import { runProgram } from '../../lib/tools/run';
import { toolPath } from '../../lib/tools/binaries';
import { routing } from '../../lib/temporal/deployment';

const root = path.resolve(__dirname, '..', '..');
const ACTIVITY = 2;
let server: CampaignServer;
const children = new Set<ChildProcess>();

before(async () => {
  server = await startCampaignServer('rig-owner-', { dynamicConfig: ['matching.longPollExpirationInterval="2s"'] });
});
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await server.close();
});

const env = (host: string, buildId: string): NodeJS.ProcessEnv => ({
  ...process.env,
  TEMPORAL_ADDRESS: server.address,
  TEMPORAL_NAMESPACE: 'default',
  RIG_HOST: host,
  RIG_BUILD_ID: buildId,
  RIG_POLLER_LIVE_SECONDS: '8',
});

async function pollers(queue: string): Promise<string[]> {
  const d = await server.client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: queue }, taskQueueType: ACTIVITY });
  return (d.pollers ?? []).map((p) => p.identity ?? '');
}

/** `rig <args>` to its end: exit code and everything it said. */
function rig(args: string[], childEnv: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'rig.cjs'), ...args], { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (out += d));
  return new Promise((resolve) => child.once('close', (code) => (children.delete(child), resolve({ code, out }))));
}

test('a worker refuses to start while another machine polls its host queue, naming both and the fix; it starts once that one is gone', { timeout: 180_000 }, async (t) => {
  const connection = await NativeConnection.connect({ address: server.address });
  const other = await Worker.create({ connection, namespace: 'default', taskQueue: 'rig-host-shared', identity: '4242@other-machine', activities: { noop: async () => undefined } });
  const running = other.run();
  try {
    await waitFor('the other machine to poll rig-host-shared', async () => (await pollers('rig-host-shared')).includes('4242@other-machine'), 30_000);
    const r = await rig(['worker'], env('shared', 'build-owner'));
    assert.equal(r.code, 2, r.out);
    assert.match(r.out, /another machine polls host shared's queues \(rig-host-shared\): 4242@other-machine, and this one is \d+@\S+ boot [0-9a-f]{8} rig-host shared/);
    assert.ok(r.out.includes(`@${os.hostname()} `), `it names itself by this machine's host name: ${r.out}`);
    assert.match(r.out, /own RIG_HOST/);
    assert.match(r.out, /own RIG_STATE_DIR/);
    assert.deepEqual(await pollers('rig-data-shared'), [], 'it never polled');
  } finally {
    other.shutdown();
    await running;
    await connection.close();
  }
  // Gone. A server that keeps its entry (up to 5 minutes, no longer moving) has the worker watch it
  // and pass it over; one that dropped it at the worker's shutdown has nothing to watch.
  const listed = (await pollers('rig-host-shared')).includes('4242@other-machine');
  t.diagnostic(`the stopped poller was ${listed ? 'still listed by the server: watched, then passed over' : 'dropped by the server at its shutdown'}`);
  const w = await rigWorkerUntilPolling(env('shared', 'build-owner'));
  try {
    if (listed) assert.match(w.out(), /4242@other-machine has not polled rig-host-shared since \S+: gone/);
    assert.doesNotMatch(w.out(), /another machine polls/);
  } finally {
    w.child.kill('SIGTERM');
  }
});

/** `rig worker` until it says it polls (rejects with its output if it exits first); its output so far. */
async function rigWorkerUntilPolling(childEnv: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; out: () => string }> {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'rig.cjs'), 'worker'], { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      if (out.includes('rig worker on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`rig worker exited (${code}) before it polled:\n${out}`)));
  });
  return { child, out: () => out };
}

test('rig deploy set-current refuses while an idle host queue has no poller of the new build (the server\'s own check lets it pass); it goes once one polls there', { timeout: 240_000 }, async () => {
  const cli = (buildId: string) => runProgram(toolPath('temporal'), ['worker', 'deployment', 'set-current-version', '--address', server.address, '--namespace', 'default', '--deployment-name', 'rig', '--build-id', buildId, '--yes'], { env: process.env, timeoutMs: 30_000 });
  const hostQueues = (h: string) => ['--task-queue', `rig-host-${h}`, '--task-queue', `rig-data-${h}`];
  // Build A on two hosts (h2 without the shared queue `rig`: only its own queues matter here); A is the first, so current.
  await spawnRigWorker({ env: env('h1', 'build-a'), children, name: 'A on h1' });
  await spawnRigWorker({ env: env('h2', 'build-a'), args: hostQueues('h2'), children, name: 'A on h2' });
  await waitFor('build A to be current', async () => (await routing(server.client.workflowService, 'default', 'rig')).current === 'build-a', 60_000);
  // Build B on h1 only: h2 is not upgraded yet, and idle.
  await spawnRigWorker({ env: env('h1', 'build-b'), children, name: 'B on h1' });

  const refused = await rig(['deploy', 'set-current', '--build-id', 'build-b', '--wait', '3'], env('h1', 'build-b'));
  assert.equal(refused.code, 1, refused.out);
  assert.match(refused.out, /build build-b is not made current: 2 of the \d+ queues build build-a has polled have no worker of it/);
  assert.match(refused.out, /rig-data-h2 \(activity tasks\): no poller of build build-b; polled by build-a/);
  assert.match(refused.out, /rig-host-h2 \(activity tasks\): no poller of build build-b; polled by build-a/);
  assert.doesNotMatch(refused.out, /rig-host-h1/);
  assert.equal((await routing(server.client.workflowService, 'default', 'rig')).current, 'build-a', 'nothing changed');
  const check = await rig(['deploy', 'check', '--build-id', 'build-b'], env('h1', 'build-b'));
  assert.equal(check.code, 1, check.out);

  // The gap this closes: the server's own check passes over the idle queues and makes B current.
  await cli('build-b');
  assert.equal((await routing(server.client.workflowService, 'default', 'rig')).current, 'build-b', "the server's check let B through with h2 unserved");
  await cli('build-a'); // back, as before the deploy

  // B on h2 too: now every queue A polled has a poller of B.
  await spawnRigWorker({ env: env('h2', 'build-b'), args: hostQueues('h2'), children, name: 'B on h2' });
  const made = await rig(['deploy', 'set-current', '--build-id', 'build-b'], env('h1', 'build-b'));
  assert.equal(made.code, 0, made.out);
  assert.match(made.out, /build build-b is the current version of deployment rig \(was build-a, which drains/);
  assert.equal((await routing(server.client.workflowService, 'default', 'rig')).current, 'build-b');
});

// Work that belongs to one machine runs on that machine. Two workers with different host names on one
// machine (as two `rig worker`s on two hosts would be) both poll the shared queue `rig`; a campaign's
// first step claims the host of whichever took it, and every machine-bound step (open, calibrate,
// clean-check, provision, teardown, clean-check after, report) and the data plane then run on that
// host's worker, never on the other. A kept rig's watchdog tears down on the same host. On the
// dev server with test-double activities (one set per host, each recording what it ran; host
// beta's worker runs in a process of its own, as the SDK allows one worker per task queue in a process).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { PROFILES, type CampaignSpecInput } from '../../lib/protocol/spec';
import { fireSignal } from '../../workflows/messages';
import { saveHistory } from '../harness/campaign';
import { localDevEnv } from '../harness/temporal';
import { activityDoubles, doubleWorker, type Call } from './doubles';

let env: TestWorkflowEnvironment;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-host-queues-'));
before(async () => {
  env = await localDevEnv();
});
after(async () => {
  await env?.teardown();
  fs.rmSync(dir, { recursive: true, force: true });
});

// Real time on the dev server (a worker in another process needs a server whose clock does not jump
// ahead of it): no cool-downs.
const quick: CampaignSpecInput = { ...PROFILES.rehearsal, sustained: { ...PROFILES.rehearsal.sustained!, cooldownSeconds: 0 } };

const MACHINE_BOUND = ['openCampaign', 'calibrateInstrument', 'cleanCheck', 'provisionRig', 'teardownRig', 'finishCampaign'];
/** Steps on the shared queue `rig` besides the claim: any host may take them. */
const SHARED = ['requestLease', 'campaignRunState'];
const DATA_PLANE = ['bringUp', 'calibrateDatabase', 'seedHistory', 'warmUp', 'runRepeat', 'runDenominator'];

/** Host beta's worker, in a process of its own; resolves once it polls, with the calls it has run so far. */
async function otherHostWorker(host: string): Promise<{ child: ChildProcess; calls: () => Call[] }> {
  const file = path.join(dir, `${host}.calls.jsonl`);
  fs.writeFileSync(file, '');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'helpers', 'double-worker.ts'), env.address, host, file], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (l) => l === 'ready' && resolve());
    child.once('exit', (code) => reject(new Error(`the ${host} worker exited (${code}) before it was ready`)));
  });
  const calls = () => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call);
  return { child, calls };
}

test('two workers on two host names: every machine-bound step of a campaign runs on the host that claimed it', { timeout: 240_000 }, async () => {
  // Host alpha in this process, host beta in another (one worker per task queue per process).
  const alpha = activityDoubles({ host: 'alpha', dataQueue: 'rig-data-alpha' });
  const beta = await otherHostWorker('beta');
  const hosts = [
    { host: 'alpha', calls: () => alpha.calls },
    { host: 'beta', calls: beta.calls },
  ];
  const workers = await Promise.all(
    ['rig', 'rig-host-alpha', 'rig-data-alpha'].map((taskQueue) =>
      doubleWorker(env.nativeConnection, taskQueue, alpha.activities),
    ),
  );
  const ids = ['hosts-1', 'hosts-2', 'hosts-3', 'hosts-4', 'hosts-kept'];
  const run = async () => {
    await Promise.all(
      ids.map((id) =>
        env.client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [{ ...quick, ...(id === 'hosts-kept' ? { end: 'keep' } : {}) }] }),
      ),
    );
    // The kept rig stays under its watchdog; told to fire, it tears down on the host that made it.
    const watchdog = env.client.workflow.getHandle('hosts-kept.watchdog');
    await watchdog.signal(fireSignal, 'test: tear the kept rig down now');
    await watchdog.result();
  };
  try {
    await workers.reduce<Promise<void>>((p, w) => w.runUntil(p), run());
  } finally {
    beta.child.kill('SIGKILL');
  }

  const of = (calls: Call[], workflowId: string) => calls.filter((c) => c.workflowId === workflowId);
  const claimedBy = new Set<string>();
  for (const id of ids) {
    const owner = hosts.find(({ calls }) => of(calls(), id).some((c) => c.name === 'claimHost'));
    assert.ok(owner, `${id}: some host claimed it`);
    claimedBy.add(owner.host);
    const other = hosts.find((h) => h !== owner)!;
    const ran = of(owner.calls(), id).map((c) => c.name);
    // (A kept rig is torn down by its watchdog, below, not by the campaign.)
    const expected = [...MACHINE_BOUND, ...DATA_PLANE].filter((n) => id !== 'hosts-kept' || n !== 'teardownRig');
    for (const name of expected) assert.ok(ran.includes(name), `${id}: ${name} ran on ${owner.host}, which claimed it`);
    // The shared queue's steps (the lease request) may run on either host; nothing else may.
    const strays = of(other.calls(), id).filter((c) => !SHARED.includes(c.name));
    assert.deepEqual(strays.map((c) => `${c.name} on ${c.taskQueue}`), [], `${id}: nothing machine-bound of it ran on ${other.host}`);
    for (const c of of(owner.calls(), id).filter((c) => MACHINE_BOUND.includes(c.name))) assert.equal(c.taskQueue, `rig-host-${owner.host}`, `${id}: ${c.name}`);
  }
  // The kept rig's watchdog tore down on the host that provisioned it, and only there.
  const keptOwner = hosts.find(({ calls }) => of(calls(), 'hosts-kept').some((c) => c.name === 'provisionRig'))!;
  const keptOther = hosts.find((h) => h !== keptOwner)!;
  const byWatchdog = of(keptOwner.calls(), 'hosts-kept.watchdog').filter((c) => c.name === 'teardownRig');
  assert.equal(byWatchdog.length, 1, 'the watchdog tore the kept rig down on its own host');
  assert.equal(byWatchdog[0].taskQueue, `rig-host-${keptOwner.host}`);
  assert.equal(of(keptOther.calls(), 'hosts-kept.watchdog').filter((c) => c.name === 'teardownRig').length, 0);
  await saveHistory(env.address, 'hosts-kept');
  await saveHistory(env.address, 'hosts-kept.watchdog');
  // (Which host claims a campaign is the shared queue's choice; the assertions above hold either way.)
  console.log(`claimed by: ${[...claimedBy].join(', ')}`);
});

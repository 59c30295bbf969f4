// A provision retried after a kill creates nothing new: a real moto 5.2.5, a provision of
// examples/aws.json's rig in a CHILD process (test/harness/provision-aws-child.ts) that is SIGKILLed
// part-way (once the RDS instance exists and no node does yet: provision packs the project with npm
// pack after the database, which leaves a window of seconds), then the provision again in this process,
// as Temporal's retry of the provision activity would run it.
//
// Why: a worker can die anywhere inside provisioning, and the retry must find what the dead attempt
// made (by its campaign tag, or the RDS identifier) instead of making a second one, or the rig leaks
// resources nobody tears down. What it asserts is the end state, whatever the kill interrupted:
// exactly one resource of each of the twelve kinds, every resource the killed attempt made kept its id
// (nothing re-made), and teardown by tag leaves nothing. moto ignores RunInstances' ClientToken (two
// calls, two instances): there it is the tag lookup alone that keeps a retry from launching a second
// node; moto applies an instance's tags in the RunInstances call itself, so a node that exists is
// always found by its tag. Two kill points: during the window after the database (npm pack), and
// as the child says it is launching the load node (the app node's RunInstances has returned: the case a
// ClientToken covers on AWS, and only the tag lookup here). The two kills are two campaigns in the same
// moto, run side by side (each looks only at what carries its own campaign tag).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { teardownAws } from '../../../lib/targets/aws/teardown';
import { exampleAws as aws, exampleSpec as spec, useMoto, MADE_KINDS } from '../../harness/aws-env';
import { waitFor } from '../../harness/campaign';

const root = path.resolve(__dirname, '..', '..', '..');
const KINDS = MADE_KINDS;

const children = new Set<ChildProcess>();
// A child still running at the end (a failed test) is killed before moto stops.
const env = useMoto({
  prefix: 'rig-aws-state-',
  beforeStop: () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  },
});

async function resources(campaignId: string): Promise<string[]> {
  return (await env.rigResources(campaignId)).sort();
}
const kinds = (list: string[]) => list.map((r) => r.split(' ')[0]);

type KillWhen = { resources: (now: string[]) => boolean } | { line: RegExp };

/**
 * Provisions `campaignId` in a child process, SIGKILLs it when `when` says so (what moto holds, looked
 * at every 100 ms; or a progress line the child printed, the moment it arrives), checks that the kill left a partial rig, then provisions again in
 * this process and checks the end state; tears down. Gives what the killed attempt left.
 */
async function killedThenRetried(campaignId: string, what: string, when: KillWhen): Promise<string[]> {
  const expiresAt = new Date(Date.now() + spec.watchdogMinutes * 60_000).toISOString();
  assert.deepEqual(await resources(campaignId), [], 'nothing of the campaign before');

  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test', 'harness', 'provision-aws-child.ts'), campaignId, expiresAt], {
    cwd: root,
    // A kill at a line: the child holds there until killed (provision-aws-child.ts HOLD_AT).
    env: { ...process.env, ...('line' in when ? { HOLD_AT: when.line.source } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  let out = '';
  let killed = false;
  proc.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    if ('line' in when && !killed && when.line.test(out)) killed = proc.kill('SIGKILL');
  });
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  let seenAtKill: string[] = [];
  await waitFor(
    what,
    async () => {
      if (proc.exitCode !== null) throw Object.assign(new Error(`the provision ended (${proc.exitCode}) before it could be killed part-way:\n${out}`), { fatal: true });
      if ('line' in when) return killed;
      const now = await resources(campaignId);
      if (!when.resources(now)) return false;
      killed = proc.kill('SIGKILL');
      seenAtKill = now;
      return true;
    },
    180_000,
    100,
  );
  const { signal } = await exited;
  assert.equal(signal, 'SIGKILL', `the child was killed, not finished:\n${out}`);
  assert.doesNotMatch(out, /^provisioned$/m);

  // What the dead attempt left (it may have made a little more between the last look and the kill).
  const leftByKill = await resources(campaignId);
  for (const r of seenAtKill) assert.ok(leftByKill.includes(r), `${r} was there at the kill and still is`);
  assert.ok(kinds(leftByKill).includes('db-instance'));
  assert.ok(leftByKill.length < KINDS.length, `the kill landed part-way: ${leftByKill.join(', ')}`);
  assert.equal(new Set(kinds(leftByKill)).size, leftByKill.length, `no kind twice after the kill: ${leftByKill.join(', ')}`);

  // The retry, in this process (as Temporal's retry of the provision activity): it finds what was made and makes only the rest.
  const retry = await provisionAws(campaignId, { db: { ...spec.database }, aws: { spec: aws, expiresAt } });
  assert.equal(retry.reused, true, 'the retry says it found an earlier attempt\'s rig');
  const end = await resources(campaignId);
  assert.deepEqual(kinds(end), KINDS, `exactly one of each kind: ${end.join(', ')}`);
  for (const r of leftByKill) assert.ok(end.includes(r), `${r}, made before the kill, kept its id (nothing re-made): ${end.join(', ')}`);

  // A third run changes nothing either.
  const again = await provisionAws(campaignId, { db: { ...spec.database }, aws: { spec: aws, expiresAt } });
  assert.equal(again.reused, true);
  assert.deepEqual(await resources(campaignId), end);

  const down = await teardownAws(campaignId);
  assert.equal(down.removed.length, KINDS.length);
  assert.deepEqual(await resources(campaignId), [], 'teardown by tag leaves nothing');
  return leftByKill;
}

describe('a provision killed part-way and retried', { concurrency: true }, () => {
  test('a provision retried after a kill creates nothing new (killed once the database exists, no node yet)', async (t) => {
    const left = await killedThenRetried('aws-killed-1', 'the killed attempt to have made the database and no node yet', {
      resources: (now) => kinds(now).includes('db-instance') && !kinds(now).some((k) => k === 'app-node' || k === 'load-node'),
    });
    t.diagnostic(`left by the killed attempt: ${kinds(left).join(', ')}`);
  });

  test('a provision retried after a kill creates nothing new (killed once the app node was launched, as it launches the load node: one app node, not two)', async (t) => {
    const left = await killedThenRetried('aws-killed-2', 'the killed attempt to be launching the load node', { line: /^launching load-node /m });
    // RunInstances for the app node had returned: moto ignores the ClientToken, only the tag lookup keeps the retry from a second one.
    assert.ok(kinds(left).includes('app-node'), `the app node was launched before the kill: ${left.join(', ')}`);
    t.diagnostic(`left by the killed attempt: ${kinds(left).join(', ')}`);
  });
});

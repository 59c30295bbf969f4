// A deploy with Worker Deployments: build A's `rig worker` serves a campaign; build B's worker starts
// beside it on the same host (one lock per build) and is made current the documented way (`temporal
// worker deployment set-current-version`). The campaign in flight finishes on A (PINNED: every one of
// its workflow tasks was completed by build A, and every one of its activities was started by A's
// worker), a campaign started after the switch runs on B, and A's worker exits by itself once drained
// (no open campaign pinned to it).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { campaignEnv, failIfClosed, tinySpec, waitFor } from '../harness/campaign';
import { spawnRigWorker } from '../harness/worker-process';
import { runProgram } from '../../lib/tools/run';
import { toolPath } from '../../lib/tools/binaries';
import { CONTROL_QUEUE, leaseWorkflowId } from '../../lib/temporal/queues';
import { routing } from '../../lib/temporal/deployment';

/** The server's drainage check, every 3 minutes by default, shortened so that A drains in seconds. */
const FAST_DRAINAGE = ['matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"', 'matching.wv.VersionDrainageStatusRefreshInterval="1s"'];

const spec = (name: string) => tinySpec({ name, sustained: { ...tinySpec().sustained!, repeats: 1, repeatSeconds: 3, cooldownSeconds: 1, warmupSeconds: 0 } });

/** The deployment version (build id) and versioning behaviour every WorkflowTaskCompleted of a workflow recorded. */
async function completedBy(handle: WorkflowHandle): Promise<Array<{ buildId: string; behavior: number }>> {
  const history = await handle.fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.workflowTaskCompletedEventAttributes)
    .map((e) => ({
      buildId: e.workflowTaskCompletedEventAttributes!.deploymentVersion?.buildId ?? '(none)',
      behavior: Number(e.workflowTaskCompletedEventAttributes!.versioningBehavior ?? 0),
    }));
}

/**
 * Who started each activity of a workflow: the worker's identity (the SDK's default, `<pid>@<host>`:
 * the pid of the \`rig worker\` process) and the version stamp, when the server fills it
 * (ActivityTaskStarted has no deployment field of its own).
 */
async function activitiesStartedBy(handle: WorkflowHandle): Promise<Array<{ activity: string; identity: string; buildId?: string }>> {
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  const typeOf = new Map(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!.activityType?.name ?? '?']));
  return events
    .filter((e) => e.activityTaskStartedEventAttributes)
    .map((e) => {
      const a = e.activityTaskStartedEventAttributes!;
      return { activity: typeOf.get(String(a.scheduledEventId)) ?? '?', identity: a.identity ?? '', ...(a.workerVersion?.buildId ? { buildId: a.workerVersion.buildId } : {}) };
    });
}

function output(child: ChildProcess): () => string {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return () => out;
}

test('a campaign started on build A finishes on A after B is made current; a new one runs on B; A exits once drained', { timeout: 300_000 }, async () => {
  const env = await campaignEnv({ dynamicConfig: FAST_DRAINAGE });
  const children = new Set<ChildProcess>();
  const workerEnv = (buildId: string) => ({ ...env.childEnv, RIG_HOST: 'deploy-host', RIG_BUILD_ID: buildId, RIG_DRAIN_CHECK_SECONDS: '1' });
  try {
    const a = await spawnRigWorker({ env: workerEnv('build-a'), children, name: 'worker A' });
    const aOut = output(a);
    const aExit = new Promise<number | null>((resolve) => a.once('exit', (code) => resolve(code)));
    // The first build of a fresh deployment makes itself current.
    await waitFor('build A to be current', async () => (await routing(env.client.workflowService, 'default', 'rig')).current === 'build-a', 60_000);

    // B beside A on the same host (its own lock, not refused), started as a deploy starts it: A stays
    // current until someone switches, so B takes nothing yet.
    const b = await spawnRigWorker({ env: workerEnv('build-b'), children, name: 'worker B' });
    const bOut = output(b);
    await waitFor('B to see that A is current', async () => /build build-a is the current version of deployment rig/.test(bOut()), 60_000);

    const first = await env.client.workflow.start('benchCampaign', { taskQueue: CONTROL_QUEUE, workflowId: 'deploy-first', args: [spec('deploy-first')] });
    // Its first workflow task completed on A: from now on it is pinned there.
    await waitFor('the first campaign to be pinned to A', async () => {
      await failIfClosed(first, 'it was pinned');
      return (await completedBy(first)).length > 0;
    });
    // The deploy's last step, as docs/deploying.md gives it (after `rig replay` passed).
    await runProgram(toolPath('temporal'), ['worker', 'deployment', 'set-current-version', '--address', env.address, '--namespace', 'default', '--deployment-name', 'rig', '--build-id', 'build-b', '--yes'], { env: process.env, timeoutMs: 30_000 });
    assert.equal((await first.describe()).status.name, 'RUNNING', 'the first campaign was still in flight when B became current (else this shows nothing)');

    const second = await env.client.workflow.start('benchCampaign', { taskQueue: CONTROL_QUEUE, workflowId: 'deploy-second', args: [spec('deploy-second')] });
    const r1 = await first.result();
    const r2 = await second.result();
    const PINNED = 1; // temporal.api.enums.v1.VersioningBehavior
    const AUTO_UPGRADE = 2;
    // calibrate: false, so at best uncalibrated: what matters is that each ran to its end.
    assert.equal(r1.status, 'uncalibrated', JSON.stringify(r1).slice(0, 1000));
    assert.equal(r2.status, 'uncalibrated', JSON.stringify(r2).slice(0, 1000));
    // The first campaign's watchdog is AUTO_UPGRADE: it started on A with its campaign and moved to B.
    const w1 = await completedBy(env.client.workflow.getHandle('deploy-first.watchdog'));
    assert.deepEqual(w1.filter((t) => t.behavior !== AUTO_UPGRADE), [], 'every watchdog task ran AUTO_UPGRADE');
    assert.equal(w1[0]?.buildId, 'build-a');
    assert.equal(w1.at(-1)?.buildId, 'build-b', 'its last tasks ran on the new current build');
    // So is the host's lease, which both campaigns took in turn.
    const lease = await completedBy(env.client.workflow.getHandle(leaseWorkflowId('deploy-host')));
    assert.deepEqual(lease.filter((t) => t.behavior !== AUTO_UPGRADE), [], 'every lease task ran AUTO_UPGRADE');
    assert.equal(lease.at(-1)?.buildId, 'build-b');

    const t1 = await completedBy(first);
    assert.ok(t1.length > 5);
    assert.deepEqual(t1.filter((t) => t.buildId !== 'build-a' || t.behavior !== PINNED), [], 'every workflow task of the first campaign was completed by build A, pinned');
    const t2 = await completedBy(second);
    assert.deepEqual(t2.filter((t) => t.buildId !== 'build-b' || t.behavior !== PINNED), [], 'every workflow task of the second campaign was completed by build B, pinned');
    // And every activity: a pinned campaign's activities go to its build's worker too (A and B poll the
    // same queues on the same host, so only the identity, A's pid, tells them apart).
    const byA = (who: { identity: string; buildId?: string }) => who.identity.startsWith(`${a.pid}@`) && (who.buildId === undefined || who.buildId === 'build-a');
    const byB = (who: { identity: string; buildId?: string }) => who.identity.startsWith(`${b.pid}@`) && (who.buildId === undefined || who.buildId === 'build-b');
    const a1 = await activitiesStartedBy(first);
    assert.ok(a1.length > 5, JSON.stringify(a1));
    assert.deepEqual(a1.filter((w) => !byA(w)), [], `every activity of the first campaign was started by build A's worker (pid ${a.pid})`);
    const a2 = await activitiesStartedBy(second);
    assert.deepEqual(a2.filter((w) => !byB(w)), [], `every activity of the second campaign was started by build B's worker (pid ${b.pid})`);

    // Drained: A stops by itself, exit 0, saying why; B goes on.
    // Bounded, and named: a worker that never sees itself drained would otherwise hold the file to its timeout.
    const exited = await Promise.race([aExit, new Promise<'still running'>((r) => setTimeout(() => r('still running'), 120_000).unref())]);
    assert.equal(exited, 0, `worker A after its drain (RIG_DRAIN_CHECK_SECONDS 1): ${exited}; its output:\n${aOut()}`);
    assert.match(aOut(), /build build-a is drained \(not current, no open campaign pinned to it\): stopping/);
    assert.equal(b.exitCode, null, 'B still serves');
    await env.assertClean();
  } finally {
    for (const c of children) c.kill('SIGKILL');
  }
});

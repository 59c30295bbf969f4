// The rainbow deploy of deploy/rig-worker@.service, run as that file gives it: the unit's own [Service]
// lines (test/harness/systemd-unit.ts: systemd is not PID 1 here, so its rules are applied to the real
// worker processes, from the unit, never restated) and the deploy steps of its header, line by line
// (docs/deploying.md points there). Two builds on one host: build A deployed first, a campaign started on A,
// build B deployed beside it and made current with `rig deploy set-current`. The campaign finishes on
// A (every workflow task completed by build A, pinned), A's worker exits 0 once drained, the unit's
// rule leaves it down (and `systemctl is-active` says inactive), and B serves on; a B killed with
// SIGKILL is started again.
// Both builds are this checkout (a tree per build is a `git clone`; here RIG_BUILD_ID names the build,
// as the tree's commit would); the worker runs as the test, not as User=rig.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { campaignEnv, failIfClosed, tinySpec, waitFor } from '../harness/campaign';
import { parseServiceUnit, UnitInstance } from '../harness/systemd-unit';
import { CONTROL_QUEUE } from '../../lib/temporal/queues';
import { routing } from '../../lib/temporal/deployment';

const root = path.resolve(__dirname, '..', '..');
const unitFile = path.join(root, 'deploy', 'rig-worker@.service');
/** The server's drainage check, every 3 minutes by default, shortened so that A drains in seconds. */
const FAST_DRAINAGE = ['matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"', 'matching.wv.VersionDrainageStatusRefreshInterval="1s"'];

/** The deploy's command lines: `#   $ ...` in the unit's header, in order. */
function recipe(text: string): string[] {
  return text.split('\n').flatMap((l) => {
    const m = /^#\s+\$ (.+)$/.exec(l);
    return m ? [m[1].trim()] : [];
  });
}

/** The deployment version (build id) and versioning behaviour every WorkflowTaskCompleted of a workflow recorded. */
async function completedBy(handle: WorkflowHandle): Promise<Array<{ buildId: string; behavior: number }>> {
  const history = await handle.fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.workflowTaskCompletedEventAttributes)
    .map((e) => ({ buildId: e.workflowTaskCompletedEventAttributes!.deploymentVersion?.buildId ?? '(none)', behavior: Number(e.workflowTaskCompletedEventAttributes!.versioningBehavior ?? 0) }));
}

function sh(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const child = spawn('sh', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (out += d));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out })));
}

test('rainbow deploy with rig-worker@.service: a pinned campaign finishes on the old build, whose worker exits once drained and stays down', { timeout: 420_000 }, async () => {
  const env = await campaignEnv({ dynamicConfig: FAST_DRAINAGE });
  const unitText = fs.readFileSync(unitFile, 'utf8');
  const steps = recipe(unitText);
  assert.ok(steps.length >= 6, `the unit's header gives the deploy's steps:\n${steps.join('\n')}`);

  // The machine's paths in the unit and the recipe, on this test's folders.
  const workerEnvFile = path.join(env.dir, 'worker.env');
  const fromHarness = Object.entries(process.env).filter(([k]) => k.startsWith('RIG_') && k !== 'RIG_BUILD_ID' && k !== 'RIG_STATE_DIR');
  fs.writeFileSync(
    workerEnvFile,
    [`TEMPORAL_ADDRESS=${env.address}`, 'TEMPORAL_NAMESPACE=default', 'RIG_HOST=rainbow-host', 'RIG_DRAIN_CHECK_SECONDS=1', ...fromHarness.map(([k, v]) => `${k}=${v}`)].join('\n') + '\n',
  );
  const map = (p: string) =>
    p
      .replace(/^\/opt\/rig-builds\/[^/]+/, root)
      .replace(/^\/var\/lib\/rig$/, process.env.RIG_STATE_DIR!)
      .replace(/^\/etc\/rig\/worker\.env$/, workerEnvFile)
      .replace(/^-\/etc\/rig\/worker\.env$/, `-${workerEnvFile}`);
  const units = new Map<string, UnitInstance>();
  const unit = (build: string) => {
    if (!units.has(build)) units.set(build, new UnitInstance(parseServiceUnit(unitText, build), map, { RIG_BUILD_ID: build }));
    return units.get(build)!;
  };
  after(() => units.forEach((u) => u.kill()));
  const polling = (u: UnitInstance, nth: number) => waitFor(`the worker of ${u.unit.get('Unit', 'Description')} (start ${nth})`, async () => {
    if (u.isActive() === 'inactive') throw Object.assign(new Error(`it exited:\n${u.output}`), { fatal: true });
    return u.output.split('rig worker on').length - 1 >= nth;
  }, 120_000);

  /** One deploy: every step of the recipe, NEW and OLD given; `before` and `after` run around a step. */
  async function deploy(NEW: string, OLD: string | undefined, hooks: { before?: (step: string) => Promise<void>; after?: (step: string) => Promise<void> } = {}) {
    let cwd = root;
    for (const line of steps) {
      if (line.includes('$OLD') && !OLD) continue; // the first deploy has no old build
      await hooks.before?.(line);
      for (const cmd of line.split(' && ').map((c) => c.trim().replaceAll('$NEW', NEW).replaceAll('$OLD', OLD ?? ''))) {
        let m: RegExpExecArray | null;
        if (/^git (clone|-C \S+ checkout) /.test(cmd) || cmd === 'npm ci') continue; // the tree: this checkout, RIG_BUILD_ID its build
        if ((m = /^cd (\S+)$/.exec(cmd))) cwd = map(m[1]);
        else if ((m = /^runuser -u rig -- sh -c '(.+)'$/.exec(cmd))) {
          const script = m[1].replace('. /etc/rig/worker.env', `. ${workerEnvFile}`);
          const r = await sh(script, cwd, { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', RIG_BUILD_ID: NEW, RIG_STATE_DIR: process.env.RIG_STATE_DIR });
          assert.equal(r.code, 0, `${cmd}:\n${r.out}`);
        } else if ((m = /^systemctl enable --now rig-worker@(\S+)$/.exec(cmd))) {
          unit(m[1]).enabled = true;
          unit(m[1]).start();
          await polling(unit(m[1]), 1);
        } else if ((m = /^systemctl is-active rig-worker@(\S+)$/.exec(cmd))) assert.equal(unit(m[1]).isActive(), 'inactive', `${cmd}; its output:\n${unit(m[1]).output}`);
        else if ((m = /^systemctl disable rig-worker@(\S+)$/.exec(cmd))) unit(m[1]).enabled = false;
        else if (/^rm -rf \/opt\/rig-builds\/\S+$/.test(cmd)) continue; // this checkout is both trees
        else assert.fail(`a deploy step this test does not know how to run: ${cmd} (teach it, or the recipe is no longer the one tested)`);
      }
      await hooks.after?.(line);
    }
  }

  // The first deploy: A alone, current.
  await deploy('build-a', undefined);
  assert.equal((await routing(env.client.workflowService, 'default', 'rig')).current, 'build-a');
  const a = unit('build-a');

  let campaign: WorkflowHandle | undefined;
  await deploy('build-b', 'build-a', { before: async (step) => {
    if (/rig deploy set-current/.test(step)) {
      // B runs beside A and takes nothing yet: a campaign started now runs on A, pinned there.
      campaign = await env.client.workflow.start('benchCampaign', { taskQueue: CONTROL_QUEUE, workflowId: 'rainbow', args: [tinySpec({ name: 'rainbow', sustained: { ...tinySpec().sustained!, repeats: 1, repeatSeconds: 3, cooldownSeconds: 1, warmupSeconds: 0 } })] });
      await waitFor('the campaign to be pinned to A', async () => {
        await failIfClosed(campaign!, 'it was pinned');
        return (await completedBy(campaign!)).length > 0;
      });
    }
    if (/systemctl is-active rig-worker@/.test(step)) {
      // "once its worker has exited": the campaign ends on A, then A drains and exits.
      const r = await campaign!.result();
      assert.equal(r.status, 'uncalibrated', JSON.stringify(r).slice(0, 1000)); // calibrate: false: at best uncalibrated
      const exit = await Promise.race([a.starts[0].decided, new Promise<'still running'>((r) => setTimeout(() => r('still running'), 120_000).unref())]);
      assert.notEqual(exit, 'still running', `A never exited after its campaign ended:\n${a.output}`);
    }
  }, after: async (step) => {
    if (/rig deploy set-current/.test(step)) {
      assert.equal((await routing(env.client.workflowService, 'default', 'rig')).current, 'build-b');
      assert.equal((await campaign!.describe()).status.name, 'RUNNING', 'the campaign was still in flight when B became current (else this shows nothing)');
    }
  } });

  const tasks = await completedBy(campaign!);
  assert.ok(tasks.length > 5);
  assert.deepEqual(tasks.filter((t) => t.buildId !== 'build-a' || t.behavior !== 1 /* PINNED */), [], 'every workflow task of the campaign was completed by build A, pinned');
  assert.equal((await routing(env.client.workflowService, 'default', 'rig')).current, 'build-b');
  // A: one start, ended 0 once drained, and left down by the unit's rule.
  assert.equal(a.starts.length, 1);
  assert.deepEqual(await a.starts[0].decided, { end: { code: 0 }, restart: false });
  assert.match(a.output, /build build-a is drained \(not current, no open campaign pinned to it\): stopping/);
  assert.equal(a.enabled, false, 'disabled by the recipe once drained');

  // B serves on; killed (an OOM, a kill -9), it is started again.
  const b = unit('build-b');
  assert.equal(b.isActive(), 'active');
  b.starts[0].child.kill('SIGKILL');
  assert.deepEqual(await b.starts[0].decided, { end: { signal: 'SIGKILL' }, restart: true });
  await polling(b, 2);
  assert.equal(b.starts.length, 2);
  await env.assertClean();
});

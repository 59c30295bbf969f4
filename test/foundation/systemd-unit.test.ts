// test-mode: unit
// deploy/rig-worker@.service, the worker of one build under systemd (a rainbow deploy: one instance per
// build). Its restart rule, read from the unit as systemd.service(5) states it: a drained worker
// (exit 0) and a stopped one (SIGTERM) stay down, a refused set-up (exit 2) stays down, a crash, a kill
// and an unreachable Temporal (69) are restarted, never rate-limited out of it. It stops with SIGTERM
// and a stop timeout past the worker's own shutdown grace (client/commands/worker.ts), only the worker
// signalled (a local rig's processes live on), and it runs `rig worker` from its build's own tree.
// systemd-analyze verify, where it is installed. test/campaign/rainbow-deploy.test.ts runs it.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { SHUTDOWN_GRACE } from '../../client/commands/worker';
import { EXIT } from '../../client/exit-codes';
import { parseServiceUnit, restartsAfter } from '../harness/systemd-unit';

const file = path.resolve(__dirname, '..', '..', 'deploy', 'rig-worker@.service');
const unit = parseServiceUnit(fs.readFileSync(file, 'utf8'), '0a1b2c3d4e5f');

test('a drained or stopped worker stays down; a crashed, killed or unreachable one is restarted; a refused set-up stays down', () => {
  assert.equal(restartsAfter(unit, { code: EXIT.OK }), false, 'drained: exit 0');
  assert.equal(restartsAfter(unit, { signal: 'SIGTERM' }), false, 'stopped by a SIGTERM from outside systemd');
  assert.equal(restartsAfter(unit, { code: EXIT.USAGE }), false, 'refused: another machine on the host queue, a worker of this build already running');
  assert.equal(restartsAfter(unit, { code: EXIT.FAILED }), true, 'a crash');
  assert.equal(restartsAfter(unit, { code: EXIT.UNREACHABLE }), true, 'Temporal unreachable at start');
  assert.equal(restartsAfter(unit, { signal: 'SIGKILL' }), true, 'kill -9, the OOM killer');
  assert.equal(restartsAfter(unit, { signal: 'SIGSEGV' }), true);
  assert.equal(unit.get('Unit', 'StartLimitIntervalSec'), '0', 'never rate-limited out of restarting');
});

test("the rule is the unit's: Restart=always would start a drained worker again", () => {
  const always = parseServiceUnit(fs.readFileSync(file, 'utf8').replace(/^Restart=on-failure$/m, 'Restart=always'), 'x');
  assert.equal(restartsAfter(always, { code: EXIT.OK }), true);
});

test("one tree per build: the instance names the build's tree, every build shares the state folder, and it outwaits the worker's shutdown grace", () => {
  assert.equal(unit.get('Service', 'WorkingDirectory'), '/opt/rig-builds/0a1b2c3d4e5f');
  assert.equal(unit.get('Service', 'ExecStart'), '/usr/bin/env node /opt/rig-builds/0a1b2c3d4e5f/bin/rig.cjs worker');
  assert.deepEqual(unit.all('Service', 'Environment').filter((e) => e.startsWith('RIG_STATE_DIR=')), ['RIG_STATE_DIR=/var/lib/rig'], 'not per build: the same host-id, the same queues');
  assert.equal(unit.get('Service', 'KillSignal'), 'SIGTERM');
  assert.equal(unit.get('Service', 'KillMode'), 'process');
  const grace = Number(/^(\d+) minutes$/.exec(SHUTDOWN_GRACE)![1]);
  assert.ok(Number(/^(\d+)min$/.exec(unit.get('Service', 'TimeoutStopSec') ?? '')?.[1]) > grace, `TimeoutStopSec past the ${SHUTDOWN_GRACE} grace`);
});

test('systemd-analyze accepts the unit, as an instance (where systemd is installed)', (t) => {
  let analyze: string;
  try {
    analyze = execFileSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' }).trim();
  } catch {
    t.skip('systemd-analyze is not installed here');
    return;
  }
  // An instance's name: verify reads %i from the file name.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-unit-'));
  try {
    const instance = path.join(dir, 'rig-worker@0a1b2c3d4e5f.service');
    fs.copyFileSync(file, instance);
    // A warning (an unknown key, a value it cannot parse) goes to stderr with exit 0: both must be empty.
    const r = spawnSync(analyze, ['verify', instance], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(`${r.stdout}${r.stderr}`.trim(), '');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

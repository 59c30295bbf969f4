// test-mode: unit
// deploy/rig-worker.service, the control worker's systemd unit: restarted whatever ended it, never
// rate-limited out of restarting, stopped with SIGTERM and a stop timeout past the worker's own
// shutdown grace (client/commands/worker.ts), only the worker signalled (a local rig's processes live
// on), and it starts `rig worker` from the repository. systemd-analyze verify, where it is installed.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SHUTDOWN_GRACE } from '../../client/commands/worker';

const unit = path.resolve(__dirname, '..', '..', 'deploy', 'rig-worker.service');

function keys(text: string): Map<string, string> {
  const m = new Map<string, string>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const s = /^\[(.+)\]$/.exec(line);
    if (s) section = s[1];
    else m.set(`${section}.${line.slice(0, line.indexOf('='))}`, line.slice(line.indexOf('=') + 1));
  }
  return m;
}

test('the worker unit restarts always, never stops restarting, and outwaits the worker\'s shutdown grace', () => {
  const k = keys(fs.readFileSync(unit, 'utf8'));
  assert.equal(k.get('Service.Restart'), 'always');
  assert.equal(k.get('Unit.StartLimitIntervalSec'), '0');
  assert.match(k.get('Service.ExecStart') ?? '', /\/bin\/rig\.cjs worker$/);
  assert.equal(k.get('Service.KillSignal'), 'SIGTERM');
  assert.equal(k.get('Service.KillMode'), 'process');
  const grace = Number(/^(\d+) minutes$/.exec(SHUTDOWN_GRACE)![1]);
  assert.ok(Number(/^(\d+)min$/.exec(k.get('Service.TimeoutStopSec') ?? '')?.[1]) > grace, `TimeoutStopSec past the ${SHUTDOWN_GRACE} grace`);
});

test('systemd-analyze accepts the unit (where systemd is installed)', (t) => {
  let analyze: string;
  try {
    analyze = execFileSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' }).trim();
  } catch {
    t.skip('systemd-analyze is not installed here');
    return;
  }
  // A warning (an unknown key, a key in the wrong section) goes to stderr with exit 0: both must be empty.
  const r = spawnSync(analyze, ['verify', unit], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(`${r.stdout}${r.stderr}`.trim(), '');
});

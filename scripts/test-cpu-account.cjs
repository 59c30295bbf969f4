// The CPU a test file costs, counted by the kernel, and whatever it left running, found and ended.
//
// On CI's 2 cores the suite side by side is bound by CPU, not by waits: a file's wall time says little
// about what it costs its neighbours, its CPU seconds do. Each file runs in a cgroup of its own
// (cgroup v1 cpuacct, or v2's cpu.stat), entered by the file's first process before it execs node, so
// every process it starts is counted, also those that leave its process group (pg_ctl's postgres
// starts a session of its own) or are re-parented to init. When the file ends, anything still in its
// group is killed, so a leaked server cannot slow every file after it.
//
// Needs a writable cgroup hierarchy (root here and on CI). Elsewhere `available` is false, the
// files run as before, and the table's CPU column reads "-".
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/**
 * This process's own cgroup in the hierarchy of `controller` (v1), or its v2 group (controller ''), as
 * /proc/self/cgroup names it: the run's groups are made under it, not at the hierarchy's root, so that
 * a limit on the runner's group (`npm run test:starved`'s CPU quota, where cpu and cpuacct share a
 * hierarchy, or on cgroup v2) holds for every file too.
 */
function ownCgroup(controller) {
  try {
    for (const line of fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const m = /^\d+:([^:]*):(.*)$/.exec(line);
      if (m && (controller === '' ? m[1] === '' : m[1].split(',').includes(controller))) return m[2];
    }
  } catch {
    // no /proc: the root
  }
  return '/';
}

/** The writable cgroup folder this run's groups go under, and how to read a group's CPU, or null. */
function findHierarchy(runName) {
  const candidates = [
    // cgroup v1: the cpuacct controller's own hierarchy.
    { dir: path.join('/sys/fs/cgroup/cpuacct', ownCgroup('cpuacct')), usage: (g) => Number(fs.readFileSync(path.join(g, 'cpuacct.usage'), 'utf8')) / 1e9 },
    // cgroup v2, unified: cpu.stat's usage_usec is there without enabling any controller.
    { dir: path.join('/sys/fs/cgroup/unified', ownCgroup('')), usage: usageV2 },
    { dir: path.join('/sys/fs/cgroup', ownCgroup('')), usage: usageV2, v2Root: true },
  ];
  for (const c of candidates) {
    if (c.v2Root && !fs.existsSync('/sys/fs/cgroup/cgroup.controllers')) continue;
    const base = path.join(c.dir, runName);
    try {
      fs.mkdirSync(base);
      const probe = path.join(base, 'probe');
      fs.mkdirSync(probe);
      c.usage(probe);
      // A process must be able to enter a group (wrap's first step): a hierarchy that lets root make
      // folders but not move processes (no delegation) would otherwise fail every file at its start.
      const entered = spawnSync('/bin/sh', ['-c', 'echo $$ > "$0/cgroup.procs"', probe], { stdio: 'ignore' });
      if (entered.status !== 0) throw new Error('cannot enter a group here');
      removeGroup(probe);
      return { base, usage: c.usage };
    } catch {
      for (const dir of [path.join(base, 'probe'), base]) {
        try {
          fs.rmdirSync(dir);
        } catch {
          // not made, or still busy
        }
      }
    }
  }
  return null;
}

/** rmdir of a group whose last process has just exited: the kernel may hold it a moment longer. */
function removeGroup(dir) {
  for (let i = 0; ; i++) {
    try {
      return fs.rmdirSync(dir);
    } catch (err) {
      if (err.code !== 'EBUSY' || i >= 50) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

function usageV2(group) {
  const m = /^usage_usec (\d+)$/m.exec(fs.readFileSync(path.join(group, 'cpu.stat'), 'utf8'));
  if (!m) throw new Error('no usage_usec');
  return Number(m[1]) / 1e6;
}

/** `pid command…` of a process, for naming what a file left behind. */
function commandOf(pid) {
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 160);
    if (cmd) return `${pid} ${cmd}`;
    // No command line: a zombie (its parent has not reaped it) or one exiting; its name and state say which.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return `${pid} ${stat.slice(stat.indexOf('('), stat.lastIndexOf(')') + 1)} state ${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]}`;
  } catch {
    return `${pid} (gone)`;
  }
}

/** Whether a process is alive (not a zombie) and in another process group than `processGroup`. */
function outsideAndAlive(pid, processGroup) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, , pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state !== 'Z' && state !== 'X' && Number(pgid) !== processGroup;
  } catch {
    return false; // gone
  }
}

function pidsIn(group) {
  try {
    return fs.readFileSync(path.join(group, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * One run's accounting. `wrap(name, cmd, args)` gives the command to spawn so that the file's first
 * process enters its group before it execs; `finish(name)` kills what is left there and returns the
 * group's CPU seconds (null when unavailable); `close()` removes the run's folder.
 */
function cpuAccount(runName) {
  const h = process.env.RIG_TEST_CPU === 'off' ? null : findHierarchy(runName);
  const groups = new Map();
  return {
    available: h !== null,
    wrap(name, cmd, args) {
      if (!h) return { cmd, args };
      const group = path.join(h.base, name);
      try {
        fs.mkdirSync(group);
      } catch {
        return { cmd, args };
      }
      groups.set(name, group);
      // sh enters the group, then becomes the file's process (exec keeps the pid the runner holds).
      return { cmd: '/bin/sh', args: ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', group, cmd, ...args] };
    },
    /** Kills what the file left in its group (it has ended) and returns its CPU seconds and what was left (`pid command`). */
    async finish(name, processGroup) {
      const group = groups.get(name);
      if (!h || !group) return { cpuSeconds: null, leftover: [] };
      let leftover = [];
      for (let round = 0; round < 20; round++) {
        const pids = pidsIn(group);
        if (pids.length === 0) break;
        // Named: only what left the file's process group and still runs (the group itself was just
        // killed by the runner, and its members may linger a moment as zombies).
        if (round === 0) leftover = pids.filter((pid) => outsideAndAlive(pid, processGroup)).map(commandOf);
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      let cpuSeconds = null;
      try {
        cpuSeconds = h.usage(group);
      } catch {
        // unreadable: no figure rather than a wrong one
      }
      try {
        fs.rmdirSync(group);
        groups.delete(name);
      } catch {
        // a zombie not yet reaped keeps it; close() tries again
      }
      return { cpuSeconds, leftover };
    },
    close() {
      if (!h) return;
      for (const group of groups.values()) {
        try {
          fs.rmdirSync(group);
        } catch {
          // still busy: the kernel frees it with its last process
        }
      }
      try {
        fs.rmdirSync(h.base);
      } catch {
        // a group left busy
      }
    },
  };
}

module.exports = { cpuAccount };

#!/usr/bin/env node
// `npm test` and `npm run test:quick`: node's own test runner over test/**/*.test.ts, TypeScript loaded
// through tsx, one node process per file, several files side by side.
//
//   npm test                      every file (CI's command)
//   npm test -- test/protocol     the files under that folder (or any file path given)
//   npm run test:quick            the unit files only (no servers): the loop for every edit
//
// How a file runs is said by the file itself, in a header comment within its first 40 lines:
//   // test-mode: unit    pure and unit tests, no servers or child processes: side by side, and in test:quick
//   // test-mode: alone   measures, or takes the host's measuring lease, or judges timing against the
//                        host: runs with no other test file beside it
//   (none)               starts its own servers (Temporal, PostgreSQL, moto): side by side with others
// The files side by side follow the machine: RIG_TEST_CONCURRENCY, else one and a half per core (CI's
// 2 cores, so 3, are the design point), and up to two per core while the CPU stands idle. The `alone` files run first, one at a time, then the rest fill the pool, the
// longest first by the last run's times (kept in .venv/test-times.json), else by the times committed in
// test/test-times.json (a fresh clone's order; refresh it with the table of a full run on CI's kind of
// machine), else by a guess from the file's mode.
//
// Each file gets its own RIG_STATE_DIR (a test that sets its own keeps it), so that files side by side
// never share a ledger, a worker lock or a dev-server database. PostgreSQL clusters are made by one
// initdb per kind for the whole run, each later one a copy of its data folder (RIG_PG_INITDB_CACHE,
// lib/targets/local/pg-cluster.ts), still one cluster per rig and per test that asks for one. Each
// file's output is printed whole when it ends, so files side by side do not interleave, followed by
// its skipped tests (`skipped: N` and their names and reasons, read from a TAP copy of its report).
// The run ends with a table of every file's wall time and its share of the whole, every skipped test
// (`skipped: N` and the list, which .ci/run checks against .ci/allowed-skips with
// scripts/check-skips.cjs), and one closing line `tests: N passed, N failed, N skipped`.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { cpuAccount } = require('./test-cpu-account.cjs');

const root = path.resolve(__dirname, '..');
const timesFile = path.join(root, '.venv', 'test-times.json');
const committedTimesFile = path.join(root, 'test', 'test-times.json');
// TypeScript in the test file's main thread only (the file says why).
const tsxMainThread = pathToFileURL(path.join(__dirname, 'tsx-main-thread.mjs')).href;
// A file that runs longer than this is killed and counted as failed: one hung file must not eat CI's
// 90 minutes (node's own per-test timeouts come first; this is the backstop).
const fileTimeoutMs = Number(process.env.RIG_TEST_FILE_TIMEOUT_S ?? 900) * 1000;

function walk(dir) {
  if (!fs.existsSync(dir)) return [];
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(p));
    else if (entry.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** The file's own word on how it runs (see the top comment). */
function modeOf(file) {
  const head = fs.readFileSync(file, 'utf8').split('\n', 40).join('\n');
  const m = /^\s*\/\/\s*test-mode:\s*(unit|alone)\b/m.exec(head);
  return m ? m[1] : 'shared';
}

function usage(msg) {
  console.error(`${msg}\nusage: node scripts/run-tests.cjs [--quick] [PATH ...]`);
  process.exit(2);
}

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
for (const a of argv) if (a.startsWith('--') && a !== '--quick') usage(`unknown option ${a}`);
const args = argv.filter((a) => !a.startsWith('--'));
const roots = args.length ? args.map((a) => path.resolve(a)) : [path.join(root, 'test')];
for (const r of roots) if (!fs.existsSync(r)) usage(`no such file or folder: ${path.relative(root, r) || r}`);
let files = roots
  .flatMap((r) => (fs.statSync(r).isFile() ? [r] : walk(r)))
  .sort()
  .map((f) => ({ file: f, rel: path.relative(root, f), mode: modeOf(f) }));
if (quick) files = files.filter((f) => f.mode === 'unit');
if (files.length === 0) {
  console.error(`no test files under ${roots.map((r) => path.relative(root, r) || '.').join(', ')}${quick ? ' marked `// test-mode: unit`' : ''}`);
  process.exit(1);
}

function readTimes(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return {}; // none yet (a fresh clone has no .venv copy): the order falls back
  }
}
// This clone's own last run wins over the committed times: it was measured on this host.
const lastTimes = { ...readTimes(committedTimesFile), ...readTimes(timesFile) };
// A file not timed yet is guessed by its mode: one that starts servers takes about a minute, a unit file
// a second. Longest first, so that the last file to finish is a short one.
const guess = { shared: 60, alone: 60, unit: 1 };
const expected = (f) => lastTimes[f.rel] ?? guess[f.mode];
const byLongest = (a, b) => expected(b) - expected(a) || a.rel.localeCompare(b.rel);
const alone = files.filter((f) => f.mode === 'alone').sort(byLongest);
const pooled = files.filter((f) => f.mode !== 'alone').sort(byLongest);
const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
// The files side by side mostly wait (on servers, timers, a campaign's fixed-length repeats), not
// compute: one and a half per core keeps both of CI's cores busy without starving a file.
const concurrency = Math.max(1, Number(process.env.RIG_TEST_CONCURRENCY) || Math.round(cores * 1.5));
// Beyond those, up to two files per core while the CPU stands idle: a lane past `concurrency` starts
// its next file only when at least IDLE_TO_GROW of the machine's CPU was idle over the last look (as
// make -l starts no job above a load). Files that wait (heartbeat timeouts after a killed worker, a
// campaign's timers) then leave no core unused, and files that compute never get a fifth beside them.
// RIG_TEST_CONCURRENCY fixes the width and turns this off.
const maxWidth = process.env.RIG_TEST_CONCURRENCY ? concurrency : Math.max(concurrency, cores * 2);
const IDLE_TO_GROW = 0.35;
const LOOK_MS = 3000;

const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-tests-'));
// Each file's CPU seconds, counted by the kernel (scripts/test-cpu-account.cjs), and what it left running.
const cpu = cpuAccount(path.basename(runDir));
// The unprivileged PostgreSQL user must be able to reach clusters made under a file's state folder.
fs.chmodSync(runDir, 0o755);
// One initdb per kind of cluster for the whole run: every later cluster, in any file, copies the data
// folder the first one made (lib/targets/local/pg-cluster.ts), and starts as initdb's own would (its
// statistics file is initdb's, so autovacuum keeps initdb's schedule: restoreTemplateStats says why
// that matters to the WAL tests). Each file still has its own clusters.
// RIG_PG_INITDB_CACHE=off: an initdb for every cluster, as the rig itself does; =DIR: that folder.
const initdbCache = process.env.RIG_PG_INITDB_CACHE ?? path.join(runDir, 'initdb');
if (initdbCache !== 'off') {
  fs.mkdirSync(initdbCache, { recursive: true, mode: 0o755 });
  fs.chmodSync(initdbCache, 0o755);
}

/**
 * The tests node's runner skipped (or marked todo) in one file, from its TAP report: each with its full
 * name (a nested test after its parents, joined by ' › '), the kind and the reason given.
 */
function skippedIn(tap) {
  const found = [];
  const names = []; // names[depth]: the test being reported at that depth
  for (const line of tap.split('\n')) {
    const depth = Math.floor(/^ */.exec(line)[0].length / 4);
    const sub = /^ *# Subtest: (.*)$/.exec(line);
    if (sub) {
      names.length = depth;
      names[depth] = unescapeTap(sub[1]);
      continue;
    }
    const m = /^ *(?:not )?ok \d+ - ((?:[^#\\]|\\.)*?) # (SKIP|TODO)\b ?(.*)$/i.exec(line);
    if (m) found.push({ name: [...names.slice(0, depth), unescapeTap(m[1])].join(' › '), kind: m[2].toUpperCase(), reason: m[3] });
  }
  return found;
}
// TAP escapes \ and # in names (and newlines); the list shows the names as the tests spell them.
const unescapeTap = (s) => s.replace(/\\(.)/g, (_, c) => ({ n: '\n', t: '\t' })[c] ?? c);
/** One skipped test as the run's list prints it; scripts/check-skips.cjs reads these lines back. */
const skipLine = (rel, s) => `${rel ? `${rel}: ` : ''}${s.name} # ${s.kind}${s.reason ? ` ${s.reason}` : ''}`;

function counts(out) {
  const num = (label) => {
    const all = [...out.matchAll(new RegExp(`^ℹ ${label} (\\d+)$`, 'gm'))];
    return all.length ? Number(all[all.length - 1][1]) : 0;
  };
  return { tests: num('tests'), pass: num('pass'), fail: num('fail'), skipped: num('skipped') + num('todo'), cancelled: num('cancelled') };
}

// Ctrl-C (or CI's end) takes every running file's process group with it: each file runs detached so
// that what it started can be killed as a group when it ends.
const running = new Set();
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const pid of running) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    process.exit(130);
  });
}

function runFile(f) {
  return new Promise((resolve) => {
    const started = Date.now();
    const stateDir = path.join(runDir, f.rel.replace(/[^A-Za-z0-9._-]/g, '_'));
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o755 });
    fs.chmodSync(stateDir, 0o755);
    console.log(`▶ ${f.rel} (${f.mode})`);
    const group = f.rel.replace(/[^A-Za-z0-9._-]/g, '_');
    // The spec report for people; a TAP copy beside it, for the names and reasons of skipped tests.
    const tapFile = path.join(runDir, `${group}.tap`);
    const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tapFile}`];
    const cmd = cpu.wrap(group, process.execPath, ['--import', tsxMainThread, '--test', '--test-force-exit', ...reporters, f.rel]);
    const child = spawn(
      cmd.cmd,
      cmd.args,
      {
        cwd: root,
        env: {
          ...process.env,
          // A runner started from inside a test (test/foundation/test-runner.test.ts) must not report to
          // that test's runner: node's test runner marks its children with NODE_TEST_CONTEXT.
          NODE_TEST_CONTEXT: undefined,
          RIG_TESTING: '1',
          RIG_STATE_DIR: process.env.RIG_STATE_DIR ?? stateDir,
          RIG_PG_INITDB_CACHE: initdbCache,
          // Side by side, another file's live rig is not this file's leftover: the local clean check
          // looks at this file's state folder only (lib/targets/local/clean-check.ts). Alone, the machine.
          ...(f.mode === 'alone' ? {} : { RIG_CLEAN_CHECK_SCOPE: 'state' }),
          FORCE_COLOR: '0',
        },
        detached: true,
      },
    );
    running.add(child.pid);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, fileTimeoutMs);
    child.on('close', async (code, signal) => {
      clearTimeout(timer);
      running.delete(child.pid);
      const seconds = (Date.now() - started) / 1000;
      // Whatever the file left running in its process group (servers it started) goes with it, and
      // so does anything of its that left the group (its cgroup's processes).
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // nothing left
      }
      const { cpuSeconds, leftover } = await cpu.finish(group, child.pid);
      const c = counts(out);
      let skips = [];
      try {
        skips = skippedIn(fs.readFileSync(tapFile, 'utf8'));
      } catch {
        // no report (the file was killed before node's runner wrote one): nothing listed
      }
      // A skip the count has but the list lacks is still named, as its file's, so that no skip goes unseen.
      for (let i = skips.length; i < c.skipped; i++) skips.push({ name: '(a test not named in its report)', kind: 'SKIP', reason: '' });
      const ok = code === 0 && !timedOut && c.fail === 0 && c.cancelled === 0;
      if (!ok && c.fail === 0 && c.cancelled === 0) c.fail = Math.max(1, c.tests - c.pass);
      process.stdout.write(`\n━━ ${f.rel} (${f.mode}) ${ok ? 'ok' : 'FAILED'} in ${seconds.toFixed(1)} s${cpuSeconds == null ? '' : ` (${cpuSeconds.toFixed(1)} s of CPU)`}\n${out}`);
      if (timedOut) console.log(`✖ ${f.rel} was killed after ${fileTimeoutMs / 1000} s (RIG_TEST_FILE_TIMEOUT_S)`);
      else if (!ok) console.log(`✖ ${f.rel} exited with ${signal ?? code}`);
      if (skips.length > 0) console.log(`skipped: ${skips.length} in ${f.rel}\n${skips.map((s) => `  ﹣ ${skipLine(null, s)}`).join('\n')}`);
      if (leftover.length > 0) console.log(`⚠ ${f.rel} left ${leftover.length} process(es) running outside its process group, killed:\n${leftover.map((p) => `    ${p}`).join('\n')}`);
      resolve({ ...f, seconds, cpuSeconds, ok, ...c, skips });
    });
  });
}

/** The fraction of all cores' time that was idle over the next `ms`. */
async function idleFraction(ms) {
  const sum = () => os.cpus().reduce((a, c) => ({ idle: a.idle + c.times.idle, all: a.all + Object.values(c.times).reduce((x, y) => x + y, 0) }), { idle: 0, all: 0 });
  const a = sum();
  await new Promise((r) => setTimeout(r, ms));
  const b = sum();
  return b.all > a.all ? (b.idle - a.idle) / (b.all - a.all) : 0;
}

let grown = 0;
/** `width` lanes always run; up to `max` when the CPU stands idle (see maxWidth). */
async function pool(list, width, max = width) {
  const results = [];
  let next = 0;
  async function lane(extra) {
    while (next < list.length) {
      if (extra) {
        // An extra lane waits for idle CPU before each file it takes.
        while (next < list.length && (await idleFraction(LOOK_MS)) < IDLE_TO_GROW);
        if (next >= list.length) break;
        grown++;
      }
      results.push(await runFile(list[next++]));
    }
  }
  const lanes = Math.min(max, list.length);
  await Promise.all(Array.from({ length: lanes }, (_, i) => lane(i >= width)));
  return results;
}

function table(results, wallSeconds) {
  const total = results.reduce((s, r) => s + r.seconds, 0);
  const rows = [...results].sort((a, b) => b.seconds - a.seconds);
  const w = Math.max(...rows.map((r) => r.rel.length), 4);
  // CPU seconds: what the file and everything it started used (the kernel's count); on CI's 2 cores the
  // side-by-side phase is bound by their sum, not by the files' wall times.
  const cpuCell = (r) => (r.cpuSeconds == null ? '-' : r.cpuSeconds.toFixed(1)).padStart(5);
  const lines = [
    `| ${'file'.padEnd(w)} | mode   | tests | wall s | share | cpu s |`,
    `| ${'-'.repeat(w)} | ------ | ----: | -----: | ----: | ----: |`,
    ...rows.map(
      (r) =>
        `| ${r.rel.padEnd(w)} | ${r.mode.padEnd(6)} | ${String(r.tests).padStart(5)} | ${r.seconds.toFixed(1).padStart(6)} | ${((100 * r.seconds) / total).toFixed(1).padStart(4)}% | ${cpuCell(r)} |`,
    ),
  ];
  const counted = results.filter((r) => r.cpuSeconds != null);
  const cpuTotal = counted.reduce((s, r) => s + r.cpuSeconds, 0);
  lines.push('', `${results.length} files; ${total.toFixed(0)} s of file time in ${wallSeconds.toFixed(0)} s of wall time (${concurrency} side by side${maxWidth > concurrency ? `, up to ${maxWidth} while the CPU stood idle: ${grown} file(s) so` : ''}; alone files one at a time)`);
  if (counted.length) lines.push(`${cpuTotal.toFixed(0)} CPU seconds in all (${(cpuTotal / wallSeconds).toFixed(2)} of ${cores} cores busy on average)`);
  return lines.join('\n');
}

(async () => {
  const started = Date.now();
  console.log(`${files.length} test files: ${alone.length} alone, ${pooled.length} side by side (${concurrency} at a time, up to ${maxWidth} while the CPU stands idle, ${cores} cores)${quick ? ', unit files only (--quick)' : ''}`);
  const results = [...(await pool(alone, 1)), ...(await pool(pooled, concurrency, maxWidth))];
  const wall = (Date.now() - started) / 1000;
  fs.rmSync(runDir, { recursive: true, force: true });
  cpu.close();
  try {
    const times = { ...lastTimes };
    for (const r of results) times[r.rel] = Math.round(r.seconds * 10) / 10;
    fs.mkdirSync(path.dirname(timesFile), { recursive: true });
    fs.writeFileSync(timesFile, JSON.stringify(times, null, 1) + '\n');
  } catch {
    // no .venv: ordering hints are only a convenience
  }
  console.log(`\n== per-file wall time\n${table(results, wall)}`);
  const failed = results.filter((r) => !r.ok);
  if (failed.length) console.log(`\nfailed files:\n${failed.map((r) => `  ${r.rel}`).join('\n')}`);
  const pass = results.reduce((s, r) => s + r.pass, 0);
  const fail = results.reduce((s, r) => s + r.fail + r.cancelled, 0);
  const skips = results.flatMap((r) => r.skips.map((s) => skipLine(r.rel, s)));
  // Every skipped test, whatever its file's fate: CI (.ci/run) fails on any not on .ci/allowed-skips.
  console.log(`\nskipped: ${skips.length}${skips.map((l) => `\n  ${l}`).join('')}`);
  console.log(`\ntests: ${pass} passed, ${fail} failed, ${skips.length} skipped`);
  process.exit(failed.length ? 1 : 0);
})();

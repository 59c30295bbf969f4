#!/usr/bin/env node
// `npm test`: node's own test runner over every test/**/*.test.ts, TypeScript loaded through tsx.
// Node 20's runner does not expand globs, so the files are listed here. Arguments narrow the run:
// `npm test -- test/protocol` runs the files under that folder (or any file path given).
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
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
const args = process.argv.slice(2);
const roots = args.length ? args.map((a) => path.resolve(a)) : [path.join(root, 'test')];
const files = roots.flatMap((r) => (fs.existsSync(r) && fs.statSync(r).isFile() ? [r] : walk(r))).sort();
if (files.length === 0) {
  console.error(`no test files under ${roots.join(', ')}`);
  process.exit(1);
}
// One file at a time: most suites start real servers (Temporal, PostgreSQL) and the machine has 2 cores.
// --test-force-exit: a file whose tests are done exits even if something it started still holds the
// event loop (a worker left polling by a test that timed out would otherwise hang the whole run).
const res = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-force-exit', '--test-reporter=spec', ...files.map((f) => path.relative(root, f))],
  { cwd: root, stdio: 'inherit', env: { ...process.env, RIG_TESTING: '1' } },
);
process.exit(res.status ?? 1);

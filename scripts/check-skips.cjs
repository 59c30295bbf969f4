#!/usr/bin/env node
// CI's check of skipped tests (.ci/run, issue 47): reads the list `npm test` ends with (scripts/run-tests.cjs:
// a line `skipped: N`, then one line per skipped test, `  FILE: TEST NAME # SKIP reason`) and fails on any
// test not on the allow-list, naming it. A skip CI does not see is a test CI claims and never ran.
//
//   node scripts/check-skips.cjs LOG ALLOW-LIST
//
// The allow-list (.ci/allowed-skips): one test a line, `FILE: TEST NAME  # why it may skip on CI` (the
// why is required, after two spaces and #); lines starting with # are comments. Exit 0: every skip is
// listed; 1: a skip is not (or the log has no list: the run did not finish); 2: usage or a bad list.
'use strict';
const fs = require('node:fs');

function usage(msg) {
  console.error(`check-skips: ${msg}\nusage: node scripts/check-skips.cjs LOG ALLOW-LIST`);
  process.exit(2);
}

/** The allow-list's entries: `FILE: TEST NAME` to why. A line without a why is refused, naming it. */
function readAllowList(file) {
  const allowed = new Map();
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/^\s*(#|$)/.test(line)) return;
      const m = /^(\S.*?) {2,}# *(\S.*)$/.exec(line);
      if (!m) usage(`${file}:${i + 1}: each entry is \`FILE: TEST NAME  # why\` (the why after two spaces and #): ${line}`);
      allowed.set(m[1], m[2]);
    });
  return allowed;
}

/** The skipped tests the log's last `skipped: N` list names: `FILE: TEST NAME` and the line itself. */
function readSkips(log) {
  const lines = fs.readFileSync(log, 'utf8').split('\n');
  const at = lines.findLastIndex((l) => /^skipped: \d+$/.test(l));
  if (at < 0) return null;
  const count = Number(/\d+/.exec(lines[at])[0]);
  const listed = lines.slice(at + 1, at + 1 + count).map((l) => {
    const m = /^ {2}(.*?) # (SKIP|TODO)(?: .*)?$/.exec(l);
    return m ? { key: m[1], line: l.trim() } : { key: null, line: l.trim() };
  });
  return { count, listed };
}

const [log, allowFile, ...rest] = process.argv.slice(2);
if (!log || !allowFile || rest.length) usage('two arguments');
for (const f of [log, allowFile]) if (!fs.existsSync(f)) usage(`no such file: ${f}`);
const allowed = readAllowList(allowFile);
const skips = readSkips(log);
if (!skips) {
  console.log(`✖ ${log} has no \`skipped: N\` list: the test run did not finish, so its skips are unknown`);
  process.exit(1);
}
const notAllowed = skips.listed.filter((s) => !s.key || !allowed.has(s.key));
console.log(`== skipped tests: ${skips.count}, ${skips.count - notAllowed.length} of them on ${allowFile}`);
for (const s of skips.listed) console.log(notAllowed.includes(s) ? `  ✖ not allowed: ${s.line}` : `  allowed (${allowed.get(s.key)}): ${s.line}`);
if (skips.listed.length < skips.count) console.log(`  ✖ ${skips.count - skips.listed.length} skipped test(s) the list does not name`);
if (notAllowed.length || skips.listed.length < skips.count) {
  console.log(`✖ a test CI skips is a test CI did not run: make it run here (RIG_REQUIRE_TOOLS=1 fails a missing tool or root), or add it to ${allowFile} saying why`);
  process.exit(1);
}

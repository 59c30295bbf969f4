// The tests of the peers (Apache Otava, k6), which `npm run setup:peers` installs apart from `npm ci`
// (issue 51): where the peers are missing, a newcomer's run skips them naming that command, and under
// RIG_REQUIRE_TOOLS=1 (CI, .ci/run, which runs setup:peers) they FAIL, so CI cannot pass having
// skipped them. "Missing" is provoked for real in a child run of each file: RIG_OTAVA and RIG_K6 name
// a file that does not exist, so the resolver the tests use (lib/tools/binaries.ts) finds no peer.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..');
// Every file with a test that runs a peer. The guard below finds any other.
const PEER_FILES = ['test/loadgen/k6-peer.test.ts', 'test/protocol/change-points-otava-orig.test.ts', 'test/protocol/change-points-otava.test.ts'];

function runWithoutPeers(file: string, requireTools: boolean): Promise<{ code: number | null; out: string }> {
  const missing = path.join(root, 'no-such-dir', 'peer');
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_TEST_CONTEXT: undefined, RIG_OTAVA: missing, RIG_K6: missing, RIG_REQUIRE_TOOLS: requireTools ? '1' : undefined };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', file], { cwd: root, env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
}

const count = (out: string, what: string) => Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(out)?.[1]);
const reason = /^.+ \(\.venv\/bin\/(otava|k6)\) is missing \(not found\): run `npm run setup:peers` to install it, then run this test again/;

for (const file of PEER_FILES) {
  test(`${file}, without the peers: under RIG_REQUIRE_TOOLS=1 it fails naming npm run setup:peers; without, its tests are skipped`, { timeout: 120_000 }, async () => {
    const required = await runWithoutPeers(file, true);
    assert.notEqual(required.code, 0, required.out);
    assert.equal(count(required.out, 'skipped'), 0, required.out);
    assert.match(required.out, /is missing \(not found\): run `npm run setup:peers` to install it, then run this test again \(RIG_REQUIRE_TOOLS=1: required here\)/);
    const free = await runWithoutPeers(file, false);
    assert.equal(free.code, 0, free.out);
    assert.ok(count(free.out, 'skipped') >= 1, free.out);
    assert.equal(count(free.out, 'pass'), 0, free.out);
    const reasons = [...free.out.matchAll(/# SKIP (.*)$/gm)].map((m) => m[1]);
    assert.equal(reasons.length, count(free.out, 'skipped'), free.out);
    for (const r of reasons) assert.match(r, reason);
  });
}

test('every test that runs a peer asks the harness (peerIfInstalled), so CI fails where it would skip', () => {
  const walk = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []));
  const files = walk(path.join(root, 'test')).map((f) => ({ rel: path.relative(root, f), text: fs.readFileSync(f, 'utf8') }));
  const direct = files.filter((f) => /toolPath\(\s*'(otava|k6)'/.test(f.text)).map((f) => f.rel);
  assert.deepEqual(direct, [], "these resolve a peer themselves: use peerIfInstalled and skipUnless (test/harness/needs-tool.ts)");
  const asking = files.filter((f) => /\bpeerIfInstalled\(/.test(f.text) && f.rel !== 'test/foundation/peer-skips.test.ts').map((f) => f.rel).sort();
  assert.deepEqual(asking, PEER_FILES, 'PEER_FILES above lists every file that runs a peer');
});

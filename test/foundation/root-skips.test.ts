// Tests that need root (issue 47, item 8): not root, they are skipped on a newcomer's machine, and under
// RIG_REQUIRE_TOOLS=1 (CI, .ci/run) they FAIL, naming root and the variable, so that CI cannot pass
// having skipped them. The decision (test/harness/needs-tool.ts) is judged for a made-up uid; then each
// root-only file is run for real as nobody (uid 65534; as this user when not root) both ways; and no
// test file decides on root by itself, past the harness.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { skipUnlessRoot } from '../harness/needs-tool';

const root = path.resolve(__dirname, '..', '..');
// Every file with a test that needs root. The guard below finds any other that reads the uid itself.
const ROOT_ONLY = [
  'test/campaign/load-node-calibration.test.ts',
  'test/campaign/load-node-lost.test.ts',
  'test/campaign/load-nodes-campaign.test.ts',
  'test/targets/clone-anywhere.test.ts',
  'test/targets/load-netns.test.ts',
];

function withRequire<T>(value: string | undefined, f: () => T): T {
  const was = process.env.RIG_REQUIRE_TOOLS;
  if (value === undefined) delete process.env.RIG_REQUIRE_TOOLS;
  else process.env.RIG_REQUIRE_TOOLS = value;
  try {
    return f();
  } finally {
    if (was === undefined) delete process.env.RIG_REQUIRE_TOOLS;
    else process.env.RIG_REQUIRE_TOOLS = was;
  }
}

test('the decision: root runs; not root is a skip naming root, and under RIG_REQUIRE_TOOLS=1 an error', () => {
  for (const req of [undefined, '1']) assert.equal(withRequire(req, () => skipUnlessRoot('ip netns', 0)), false);
  assert.equal(withRequire(undefined, () => skipUnlessRoot('ip netns', 1000)), 'needs root (ip netns): this runs as uid 1000; run it as root, as CI does');
  assert.throws(() => withRequire('1', () => skipUnlessRoot('ip netns', 1000)), { message: 'needs root (ip netns): this runs as uid 1000; run it as root, as CI does (RIG_REQUIRE_TOOLS=1: required here)' });
});

/**
 * Whether another user can load `files` from this checkout: each readable by others, and every folder
 * above it (symlinks resolved) searchable by others. CI clones where it likes, and a `mktemp -d` folder
 * is 0700: there uid 65534 cannot even open the test file.
 */
function othersCanRead(files: readonly string[]): boolean {
  return files.every((f) => {
    const real = fs.realpathSync(f);
    if (!(fs.statSync(real).mode & 0o004)) return false;
    for (let d = path.dirname(real); ; d = path.dirname(d)) {
      if (!(fs.statSync(d).mode & 0o001)) return false;
      if (d === path.dirname(d)) return true;
    }
  });
}

/**
 * Runs `file` with node's test runner as nobody; its TAP output. As root, the child really is uid 65534
 * when it can read the checkout; in a checkout only root can read, it runs as root with process.getuid
 * reporting 65534 (a preload), which is the one thing the skip decision reads (skipUnlessRoot). Not
 * root: as this user, who is not root either.
 */
function runAsNobody(file: string, requireTools: boolean): Promise<{ code: number | null; out: string; realUid: boolean }> {
  const asRoot = process.getuid?.() === 0;
  const realUid = asRoot && othersCanRead([path.join(root, file), path.join(root, 'node_modules', 'tsx', 'package.json')]);
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_TEST_CONTEXT: undefined, HOME: '/tmp', RIG_REQUIRE_TOOLS: requireTools ? '1' : undefined };
  const preload = asRoot && !realUid ? ['--import', 'data:text/javascript,process.getuid=()=>65534'] : [];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...preload, '--import', 'tsx', '--test', '--test-reporter=tap', file], {
      cwd: root,
      env,
      ...(realUid ? { uid: 65534, gid: 65534 } : {}),
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out, realUid: !asRoot || realUid }));
  });
}

const count = (out: string, what: string) => Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(out)?.[1]);

for (const file of ROOT_ONLY) {
  test(`${file}, not root: under RIG_REQUIRE_TOOLS=1 it fails naming root; without, its tests are skipped`, { timeout: 120_000 }, async () => {
    const required = await runAsNobody(file, true);
    assert.notEqual(required.code, 0, required.out);
    assert.equal(count(required.out, 'skipped'), 0, required.out);
    assert.match(required.out, /needs root \([^)]+\): this runs as uid \d+; run it as root, as CI does \(RIG_REQUIRE_TOOLS=1: required here\)/);
    const free = await runAsNobody(file, false);
    // Its other tests pass as a real non-root user. With only the reported uid changed (a checkout only
    // root can read), those that check real permissions (clone-anywhere's) see root's access with a
    // non-root uid, a state no machine is in, so the file's exit code says nothing there: its skips do.
    if (free.realUid) assert.equal(free.code, 0, free.out);
    assert.ok(count(free.out, 'skipped') >= 1, free.out);
    const reasons = [...free.out.matchAll(/# SKIP (.*)$/gm)].map((m) => m[1]);
    assert.equal(reasons.length, count(free.out, 'skipped'), free.out);
    for (const r of reasons) assert.match(r, /^needs root \([^)]+\): this runs as uid \d+; run it as root, as CI does$/);
  });
}

test('no test file decides on root by itself: each asks the harness (skipUnlessRoot), so CI fails where it would skip', () => {
  const walk = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []));
  const own = walk(path.join(root, 'test'))
    .filter((f) => /getuid[^;\n]*[!=]==? *0\b/.test(fs.readFileSync(f, 'utf8')))
    .map((f) => path.relative(root, f))
    .filter((f) => f !== 'test/foundation/root-skips.test.ts');
  assert.deepEqual(own, [], 'these read the uid themselves: use skipUnlessRoot (test/harness/needs-tool.ts)');
  const asking = walk(path.join(root, 'test'))
    .filter((f) => /\bskipUnlessRoot\(/.test(fs.readFileSync(f, 'utf8')))
    .map((f) => path.relative(root, f))
    .filter((f) => f !== 'test/foundation/root-skips.test.ts')
    .sort();
  assert.deepEqual(asking, ROOT_ONLY, 'ROOT_ONLY above lists every file that needs root');
});

// test-mode: unit
// The workflow bundle kept on disk (worker/workflow-bundle-cache.ts): made once for a tree, reused by
// the next worker, and made again after any edit to the sources it is made from or to the lockfile,
// so no worker is ever handed another tree's code.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { bundleKey, cachedWorkflowBundle } from '../../worker/workflow-bundle-cache';

function tree(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-bundle-cache-'));
  for (const [f, text] of Object.entries({
    'workflows/index.ts': 'export * from "./campaign";',
    'workflows/campaign.ts': 'export async function benchCampaign() {}',
    'lib/protocol/spec.ts': 'export const A = 1;',
    'activities/contract.ts': 'export interface X {}',
    'package-lock.json': '{"lockfileVersion": 3}',
  })) {
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    fs.writeFileSync(path.join(root, f), text);
  }
  return root;
}

test('a bundle is made once per tree and reused; any edit to its sources or the lockfile makes it again', async () => {
  const root = tree();
  process.env.RIG_BUNDLE_CACHE_DIR = path.join(root, 'cache');
  try {
    let made = 0;
    const make = async () => ({ code: `bundle ${++made} of ${bundleKey(root, 'sdk-1')}` });
    const first = await cachedWorkflowBundle(make, root);
    assert.equal(first.cached, false);
    const second = await cachedWorkflowBundle(make, root);
    assert.deepEqual([second.cached, second.code, made], [true, first.code, 1], 'the second worker reads the first one\'s bundle');

    for (const f of ['lib/protocol/spec.ts', 'workflows/campaign.ts', 'activities/contract.ts', 'package-lock.json']) {
      const before = bundleKey(root, 'sdk-1');
      fs.appendFileSync(path.join(root, f), '\n// edited');
      assert.notEqual(bundleKey(root, 'sdk-1'), before, `an edit to ${f} is another key`);
      const after = await cachedWorkflowBundle(make, root);
      assert.equal(after.cached, false, `after an edit to ${f} the bundle is made again`);
    }
    fs.writeFileSync(path.join(root, 'lib', 'new-file.ts'), 'export {};');
    assert.equal((await cachedWorkflowBundle(make, root)).cached, false, 'a new file is another key');
    assert.notEqual(bundleKey(root, 'sdk-1'), bundleKey(root, 'sdk-2'), 'another bundler version is another key');
  } finally {
    delete process.env.RIG_BUNDLE_CACHE_DIR;
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('RIG_BUNDLE_CACHE=off bundles every time, and a cache that cannot be written costs only the reuse', async () => {
  const root = tree();
  try {
    let made = 0;
    const make = async () => ({ code: `bundle ${++made}` });
    process.env.RIG_BUNDLE_CACHE = 'off';
    process.env.RIG_BUNDLE_CACHE_DIR = path.join(root, 'cache');
    await cachedWorkflowBundle(make, root);
    await cachedWorkflowBundle(make, root);
    assert.equal(made, 2);
    assert.equal(fs.existsSync(path.join(root, 'cache')), false, 'nothing written');
    delete process.env.RIG_BUNDLE_CACHE;
    // A file where the folder should be: the write fails, the worker still gets its bundle.
    fs.writeFileSync(path.join(root, 'blocked'), '');
    process.env.RIG_BUNDLE_CACHE_DIR = path.join(root, 'blocked', 'cache');
    const r = await cachedWorkflowBundle(make, root);
    assert.deepEqual([r.cached, r.code], [false, 'bundle 3']);
  } finally {
    delete process.env.RIG_BUNDLE_CACHE;
    delete process.env.RIG_BUNDLE_CACHE_DIR;
    fs.rmSync(root, { recursive: true, force: true });
  }
});

// test-mode: unit
// The target is the seam (issue 11): activities reach a rig only through the Target that
// createActivities is given, the registry names one Target per spec `target`, and no file in
// activities/ or workflows/ imports a target's folder. No server: a fake target stands in.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createActivities } from '../../activities/factory';
import * as boundActivities from '../../activities';
import { localTarget } from '../../lib/targets/local';
import { targetFor } from '../../lib/targets/registry';
import type { Target } from '../../lib/targets/target';
import { projectRoot } from '../../lib/tools/paths';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-seam-'));
const saved = { ...process.env };
before(() => {
  process.env.RIG_RESULTS = dir;
});
after(() => {
  process.env = saved;
  fs.rmSync(dir, { recursive: true, force: true });
});

function sourcesUnder(sub: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) out.push(p);
    }
  };
  walk(path.join(projectRoot, sub));
  return out;
}

test('no activity or workflow imports a target folder', () => {
  const hits = [...sourcesUnder('activities'), ...sourcesUnder('workflows')].filter((f) => fs.readFileSync(f, 'utf8').includes('targets/local'));
  assert.deepEqual(hits.map((f) => path.relative(projectRoot, f)), []);
});

test("the registry gives the local target for 'local', and refuses a name it does not know", () => {
  assert.equal(targetFor('local'), localTarget);
  assert.equal(localTarget.name, 'local');
  assert.ok(localTarget.leftoverKinds.includes('postmaster'));
  assert.throws(() => targetFor('mars' as never), /unknown target 'mars'/);
});

test('the factory builds the same activities that workflows proxy, by name', () => {
  assert.deepEqual(Object.keys(createActivities({ targetFor })).sort(), Object.keys(boundActivities).sort());
});

test('activities act on the target they are given: clean-check and teardown reach the fake, never the machine', async () => {
  const calls: string[] = [];
  const fake = {
    ...localTarget,
    cleanCheck: async () => {
      calls.push('cleanCheck');
      return { status: 'dirty' as const, looked: ['the fake'], leftovers: [{ kind: 'fake-thing', campaignId: 'seam-1', detail: 'left by the fake' }] };
    },
    teardown: async (campaignId: string) => {
      calls.push(`teardown ${campaignId}`);
      return { campaignId, removed: ['fake-thing'], alreadyGone: [] };
    },
  } satisfies Target;
  const acts = createActivities({ targetFor: () => fake });
  const after = await acts.cleanCheck({ campaignId: 'seam-1', target: 'local', phase: 'after' });
  assert.equal(after.clean, false);
  assert.match(after.summary, /fake-thing of seam-1: left by the fake/);
  await assert.rejects(acts.cleanCheck({ campaignId: 'seam-1', target: 'local', phase: 'before' }), /the local target is not clean/);
  assert.match((await acts.teardownRig({ campaignId: 'seam-1', target: 'local', by: 'operator' })).summary, /^removed 1 \(fake-thing\); by the worker of host \S+$/);
  assert.deepEqual(calls, ['cleanCheck', 'cleanCheck', 'teardown seam-1']);
});

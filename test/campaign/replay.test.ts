// Determinism: histories recorded from real campaigns (the rehearsal, a crash-and-resume run) are
// replayed against today's workflow code. A change that breaks determinism fails here, in CI, before
// it can strand a running overnight series. Refresh the fixtures from test-output/histories/ when a
// workflow change is deliberate (and patched with workflow.patched for running campaigns).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import '../harness/temporal';

const dir = path.resolve(__dirname, '..', 'fixtures', 'histories');

test('recorded campaign histories replay without a nondeterminism error', async () => {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  assert.ok(files.length >= 2, `histories to replay in ${dir}`);
  const histories = files.map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))) }));
  const replayed: string[] = [];
  for await (const r of Worker.runReplayHistories({ workflowsPath: require.resolve('../../workflows') }, histories)) {
    assert.equal(r.error, undefined, `${r.workflowId}: ${r.error?.message}`);
    replayed.push(r.workflowId);
  }
  assert.deepEqual(replayed.sort(), histories.map((h) => h.workflowId).sort());
});

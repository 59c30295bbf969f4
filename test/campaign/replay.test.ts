// Determinism: every accumulated history is replayed against today's workflow code. Recorded from
// campaigns: the rehearsal and a crash-and-resume run, a cancel and a bring-up refusal (dev server, real
// rig); an abort, a ladder, a watchdog that fired first, a teardown that gave up, a watchdog that tore
// down a terminated campaign, a kept rig on a claimed host and its watchdog, a campaign that waited for
// the host lease and the lease itself (time-skipping and dev servers, test doubles); today's path:
// interleaved variants, a teardown retried without a cap, an AWS campaign and a watchdog torn down by
// another host's worker after the claimed host's died. A change that
// breaks determinism fails here, in CI, before it can strand a running overnight series. Each file is
// named by the workflow id it was recorded under. The fixtures accumulate: when a workflow change is
// deliberate (and patched with workflow.patched for running campaigns), add the new path's history
// from test-output/histories/ and keep the old ones.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Worker } from '@temporalio/worker';
import '../harness/temporal';
import { rigWorkflowBundle } from '../../worker/workflow-bundle-cache';

const dir = path.resolve(__dirname, '..', 'fixtures', 'histories');

test('recorded campaign histories replay without a nondeterminism error', async () => {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  assert.ok(files.length >= 2, `histories to replay in ${dir}`);
  const histories = files.map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as unknown }));
  const replayed: string[] = [];
  for await (const r of Worker.runReplayHistories({ workflowBundle: await rigWorkflowBundle() }, histories)) {
    assert.equal(r.error, undefined, `${r.workflowId}: ${r.error?.message}`);
    replayed.push(r.workflowId);
  }
  assert.deepEqual(replayed.sort(), histories.map((h) => h.workflowId).sort());
});

test('the replay check does catch a workflow that no longer matches its history', async () => {
  // The same history under another workflow id makes the watchdog's child id differ: a real
  // nondeterminism error, as a code change that reorders or renames commands would produce.
  const history = JSON.parse(fs.readFileSync(path.join(dir, 'crash-resume.json'), 'utf8')) as unknown;
  await assert.rejects(Worker.runReplayHistory({ workflowBundle: await rigWorkflowBundle() }, history, 'not-the-recorded-id'), /[Nn]ondeterminism/);
});

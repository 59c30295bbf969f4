// Determinism: every accumulated history is replayed against today's workflow code. Kept: the
// campaign's histories that took today's path (interleaved variants, a teardown retried without a cap),
// every watchdog's (a watchdog that tore down a terminated campaign, a kept rig's, one that retagged its
// expiry, ten kept days continued-as-new, one torn down by another host's worker after the claimed
// host's died), a host's lease (time-skipping and dev servers, test doubles), and an AWS campaign
// recorded before AWS had its own plan (aws-lacking, by 6672f30's aws-campaign-iam test: it keeps
// the old plan through workflows/campaign.ts AWS_PLAN_PATCH; without the patch it fails to replay). The campaign's
// fixtures that took a branch its deprecated patches dropped were removed with them (issue 24,
// docs/architecture.md "Retiring the campaign's patches"); the main paths' fresh histories are
// replayed by the tests that record them (test/harness/recorded-replay.ts). A change that breaks
// determinism fails here, in CI, before it can strand a running overnight series. Each file is named
// by the workflow id it was recorded under. The fixtures accumulate: when a change to the watchdog or
// the lease is deliberate (and patched with workflow.patched for those in flight: they move to each
// new build), add the new path's history from test-output/histories/ and keep the old ones.
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
  const history = JSON.parse(fs.readFileSync(path.join(dir, 'variants-interleaved.json'), 'utf8')) as unknown;
  await assert.rejects(Worker.runReplayHistory({ workflowBundle: await rigWorkflowBundle() }, history, 'not-the-recorded-id'), /[Nn]ondeterminism/);
});

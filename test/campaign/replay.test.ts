// Determinism: every accumulated history is replayed against today's workflow code. Kept: every
// watchdog's (a watchdog that tore down a terminated campaign, a kept rig's, one that retagged its
// expiry, ten kept days continued-as-new, one torn down by another host's worker after the claimed
// host's died), a host's lease (time-skipping and dev servers, test doubles), and an AWS campaign
// recorded before AWS had its own plan (aws-lacking, by 6672f30's aws-campaign-iam test: it keeps
// the old plan through workflows/phases/spec.ts AWS_PLAN_PATCH; without the patch it fails to replay;
// its other markers are flagged deprecated, so it also shows that such a history replays once the
// deprecated calls are gone), and an AWS campaign on two load nodes recorded before they were made
// early (aws-nodes-2, by bd858e0's aws-load-nodes test: its nodes made at the first repeat, after
// bring-up and seed; it replays through workflows/phases/load-nodes.ts LOAD_NODES_EARLY_PATCH and the
// old history count, workflows/phases/spec.ts HISTORY_NODES_PATCH), and the second run of a workflow id
// whose evidence folder was the first run's (one-id-two-runs, by test/campaign/evidence-one-run.test.ts:
// refused at openCampaign, no report, workflows/phases/report.ts EVIDENCE_OF_ONE_RUN_PATCH). The campaign's own paths recorded just before its split into phases
// are replayed by replay-pre-phases.test.ts; the main paths' fresh histories by the tests that record
// them (test/harness/recorded-replay.ts). A change that breaks determinism fails here, in CI, before
// it can strand a running overnight series. Each file is named by the workflow id it was recorded
// under. The fixtures accumulate: when a change to the watchdog or the lease is deliberate (and
// patched with workflow.patched for those in flight: they move to each new build), add the new
// path's history from test-output/histories/ and keep the old ones.
//
// before-deprecation/ holds two campaigns recorded before step one of issue 24's retirement, their
// patch markers not flagged deprecated (teardown-uncapped, variants-interleaved). With the deprecated
// calls gone (step two, issue 37) they no longer replay, and the third test says so: the SDK refuses a
// marker that is not flagged deprecated once no code asks for it. Such a campaign still open (unpinned,
// started before workers were versioned) is what `rig replay --open` names before a deploy.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Worker } from '@temporalio/worker';
import '../harness/temporal';
import { replayFolder } from '../harness/recorded-replay';
import { rigWorkflowBundle } from '../../worker/workflow-bundle-cache';

const dir = path.resolve(__dirname, '..', 'fixtures', 'histories');

test('recorded campaign histories replay without a nondeterminism error', async () => {
  for (const [workflowId, error] of await replayFolder(dir, 2)) assert.equal(error, undefined, `${workflowId}: ${error?.message}`);
});

test('the replay check does catch a workflow that no longer matches its history', async () => {
  // The same history under another workflow id makes the watchdog's child id differ: a real
  // nondeterminism error, as a code change that reorders or renames commands would produce.
  const history = JSON.parse(fs.readFileSync(path.join(dir, 'aws-lacking.json'), 'utf8')) as unknown;
  await assert.rejects(Worker.runReplayHistory({ workflowBundle: await rigWorkflowBundle() }, history, 'not-the-recorded-id'), /[Nn]ondeterminism/);
});

test('a campaign whose patch markers are not flagged deprecated no longer replays once the calls are gone', async () => {
  const before = path.join(dir, 'before-deprecation');
  const files = fs.readdirSync(before).filter((f) => f.endsWith('.json')).sort();
  assert.deepEqual(files, ['teardown-uncapped.json', 'variants-interleaved.json']);
  for (const f of files) {
    const history = JSON.parse(fs.readFileSync(path.join(before, f), 'utf8')) as unknown;
    await assert.rejects(
      Worker.runReplayHistory({ workflowBundle: await rigWorkflowBundle() }, history, f.replace(/\.json$/, '')),
      /Non-deprecated patch marker encountered for change spec-resolved-by-activity/,
      f,
    );
  }
});

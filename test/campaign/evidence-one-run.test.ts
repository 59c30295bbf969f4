// Evidence belongs to one run (issue 47 item 3). A workflow id can be started again once its run has
// closed (`temporal workflow start --workflow-id nightly-2` twice: Temporal's default reuse policy
// allows it), and the campaign's folder is named by the workflow id alone. On the dev server, against
// a running cluster and reference service (target "existing": its rig.json is the same bytes in both
// runs, so before the fix nothing stopped the second run: its repeat measured under the first run's
// run tag into the first run's folder, beside the first run's verdict): a one-repeat campaign writes
// its verdict; a second run under the same id is refused when it opens the folder (it names the first
// run and the fix), measures nothing, takes nothing from the first run's folder and writes nothing
// into it, which stays byte for byte as it was.
// lib/evidence/folder-owner.ts's rules, one by one: test/evidence/folder-owner.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { RUN_FILE } from '../../lib/evidence/layout';
import type { CampaignSpecInput } from '../../lib/protocol/spec';
import { startService } from '../../reference/service';
import { campaignEnv, saveHistory } from '../harness/campaign';
import { hardcountDb } from '../harness/hardcount';

// The deployment both runs measure: made at the top level so that it ends with the file.
const dbReady = hardcountDb();

/** Every file under the folder with its bytes. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (f.isFile()) out[path.relative(dir, path.join(f.parentPath, f.name))] = fs.readFileSync(path.join(f.parentPath, f.name)).toString('base64');
  }
  return out;
}

test('a second run under one workflow id is refused at the folder and never takes the first run\'s verdict as its own', async () => {
  const db = await dbReady;
  const svc = await startService({ databaseUrl: db.appUrl });
  db.defer(() => svc.close());
  process.env.RIG_TEST_EVIDENCE_DB_URL = db.ownerUrl;
  process.env.RIG_TEST_EVIDENCE_APP_URL = db.appUrl;
  const env = await campaignEnv();
  const stop = await env.inProcessWorker();
  const id = 'one-id-two-runs';
  const spec: CampaignSpecInput = {
    name: 'one-id-two-runs',
    target: 'existing',
    calibrate: false,
    watchdogMinutes: 60,
    existing: { serviceUrl: svc.url, databaseUrlFrom: { env: 'RIG_TEST_EVIDENCE_DB_URL' }, appDatabaseUrlFrom: { env: 'RIG_TEST_EVIDENCE_APP_URL' } },
    seed: { customers: 20, historyRows: 0 },
    sustained: { repeats: 1, repeatSeconds: 3, cooldownSeconds: 1, warmupSeconds: 0, configurations: [{ name: 'single', eventsPerSecond: 100, batch: 1, p99LimitMs: 1000 }] },
  };

  const firstRun = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] });
  const first = (await firstRun.result()) as CampaignResult;
  const dir = first.resultsDir;
  assert.ok(fs.existsSync(path.join(dir, 'repeats/single/r1-a1/verdict.json')), 'the first run wrote its verdict');
  assert.equal(first.repeats.length, 1);
  const before = snapshot(dir);

  // As `temporal workflow start --workflow-id one-id-two-runs` does once the first run has closed.
  const secondRun = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec], workflowIdReusePolicy: 'ALLOW_DUPLICATE' });
  assert.notEqual(secondRun.firstExecutionRunId, firstRun.firstExecutionRunId);
  const failure = await secondRun.result().then(
    (r) => assert.fail(`the second run ended ${(r as CampaignResult).status} with ${(r as CampaignResult).repeats.length} repeat(s): ${JSON.stringify((r as CampaignResult).repeats)}`),
    (err: unknown) => err,
  );
  assert.ok(failure instanceof WorkflowFailedError, String(failure));
  const second = (failure.cause as { details?: CampaignResult[] }).details?.[0];
  assert.ok(second, `the second run's result is in its failure: ${String(failure.cause?.message)}`);
  assert.deepEqual(second.repeats, [], `nothing measured, nothing taken from the first run's folder: ${JSON.stringify(second.repeats)}`);
  assert.equal(
    second.error,
    `the evidence folder ${dir} belongs to run ${firstRun.firstExecutionRunId} of workflow ${id}; this is run ${secondRun.firstExecutionRunId} of workflow ${id}, which never takes another run's evidence as its own: ` +
      'a workflow id names one campaign and its evidence: start this one under another id (rig campaign start --id NEW, or temporal workflow start --workflow-id NEW), or move the earlier folder out of the results folder first',
  );
  assert.equal(second.rig, 'not-provisioned', 'nothing was provisioned (on "existing": nothing connected to)');
  assert.equal(second.resultsDir, '');
  assert.deepEqual(
    second.steps.map((s) => [s.step, s.status]),
    [['report', 'skipped']],
    'nothing ran after the refusal, and the report was not written into the first run\'s folder',
  );
  assert.deepEqual(snapshot(dir), before, 'the first run\'s folder is byte for byte as it was');
  // The folder names its run (written when the first run made it).
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, RUN_FILE), 'utf8')), { workflow_id: id, run_id: firstRun.firstExecutionRunId });
  await saveHistory(env.address, id, `${id}-second`, secondRun.firstExecutionRunId);
  await stop();
});

// Nothing waits forever: with no worker on the rig's data-plane queue, bring-up fails after its
// schedule-to-start timeout (the spec's workerWaitSeconds, default 600) with a reason that names the queue and how to start a worker, and teardown
// (on the host queue) still runs. On the time-skipping server with test-double activities.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { PROFILES } from '../../lib/protocol/spec';
import { timeSkippingEnv } from '../harness/temporal';
import { activityDoubles, doubleWorker } from './doubles';

// Each test has a timeout: a workflow that never closes fails it, never hangs the suite.
let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

/**
 * The rehearsal with workerWaitSeconds 5, only the control queues polled (nothing takes work from the
 * rig's own): it must fail; its CampaignResult. (The test server does not skip time while a task waits
 * in a queue: 5 s of real time.)
 */
async function failsWithControlWorkersOnly(doubles: ReturnType<typeof activityDoubles>, workflowId: string): Promise<CampaignResult> {
  const [control, host] = await Promise.all(['rig', doubles.hostQueue].map((taskQueue) => doubleWorker(env.nativeConnection, taskQueue, doubles.activities)));
  const run = env.client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId, args: [{ ...PROFILES.rehearsal, workerWaitSeconds: 5 }] });
  return control.runUntil(host.runUntil(
    run.then(
      () => assert.fail(`${workflowId}: a campaign no rig worker serves must fail`),
      (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError, String(err));
        return (err.cause as { details?: CampaignResult[] }).details![0];
      },
    ),
  ));
}

test('no worker on the data-plane queue: bring-up fails after workerWaitSeconds, naming the queue and the fix; teardown runs', { timeout: 120_000 }, async () => {
  const doubles = activityDoubles({ dataQueue: 'rig-data-nobody' });
  const result = await failsWithControlWorkersOnly(doubles, 'no-data-worker');
  const bringUp = result.steps.find((s) => s.step === 'bring-up');
  assert.equal(bringUp?.status, 'failed');
  assert.equal(
    bringUp?.summary,
    'no worker took bringUp from the task queue rig-data-nobody within 5 seconds: start one on the rig\'s host (npx rig worker polls rig, rig-host-<its host name> and rig-data-<its host name>), then start the campaign again',
  );
  assert.equal(result.steps.find((s) => s.step === 'teardown')?.status, 'ok', 'teardown ran on the host queue');
  assert.equal(result.rig, 'destroyed');
  const provisioned = doubles.calls.find((c) => c.name === 'provisionRig')!.scheduledMs;
  const teardown = doubles.calls.find((c) => c.name === 'teardownRig')!.scheduledMs;
  assert.ok(teardown - provisioned <= 60_000, `failed after ${((teardown - provisioned) / 1000).toFixed(1)} s, not never`);
});

test('an AWS-shaped rig whose nodes never come up: prepare fails after workerWaitSeconds carrying the nodes\' console tail; teardown runs', { timeout: 120_000 }, async () => {
  const console = 'load-node i-0abc: \nrig bootstrap: s3 get-object packages/x/rig.tgz failed 8 times (last exit 254): giving up\nrig bootstrap: FAILED at line 97 (exit 254)';
  const doubles = activityDoubles({ dataQueue: 'rig-aws-data-nobody', nodes: { appQueue: 'rig-aws-app-nobody', console } });
  const result = await failsWithControlWorkersOnly(doubles, 'no-node-worker');
  const prepare = result.steps.find((s) => s.step === 'prepare');
  assert.equal(prepare?.status, 'failed');
  assert.equal(
    prepare?.summary,
    `no worker took prepareRig from the task queue rig-aws-data-nobody within 5 seconds: the rig's nodes did not start their workers (their bootstrap runs at first boot). The nodes' serial consoles (EC2 GetConsoleOutput), last lines:\n${console}`,
  );
  const read = doubles.calls.find((c) => c.name === 'nodeConsoleTail');
  assert.equal(read?.taskQueue, doubles.hostQueue, 'read from the host that made the rig');
  assert.equal(result.steps.find((s) => s.step === 'teardown')?.status, 'ok');
});

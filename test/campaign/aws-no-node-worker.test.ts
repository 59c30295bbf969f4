// An AWS campaign whose nodes never start their workers (a failed bootstrap, as a first boot on real
// AWS can have): a real Temporal dev server, a real moto 5.2.5, this process's worker on the control
// queues only. Provisioning makes the rig, the database step waits for RDS, and `prepare`, the first
// step on the load node's queue, is taken by no worker: it fails after workerWaitSeconds naming the
// queue, with the tail of each node's serial console (EC2 GetConsoleOutput, which moto answers with a
// fixed boot log) in the failure, and teardown still removes everything.
//
// Why: without the console, a node that never came up showed only as a timeout naming a queue; the
// reason (its bootstrap's last lines) is on the node's console, and nobody can log in to read it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { awsDataQueue } from '../../lib/temporal/queues';
import { exampleInput, useMoto } from '../harness/aws-env';
import { campaignEnv, tinySpec } from '../harness/campaign';

const { rigResources } = useMoto({ stateDir: false });

test('an AWS campaign whose nodes never come up fails at prepare with their console tail, and leaves nothing behind', { timeout: 10 * 60_000 }, async () => {
  const id = 'aws-no-node-worker';
  const env = await campaignEnv();
  // The control queues only (this host's among them): no worker serves the nodes' queues.
  await env.inProcessWorker();
  const spec = tinySpec({ target: 'aws', aws: exampleInput.aws!, calibrate: false, workerWaitSeconds: 5 });
  const result = await env.client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] }).then(
    () => assert.fail('a campaign whose nodes never come up must fail'),
    (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError, String(err));
      return (err.cause as { details?: CampaignResult[] }).details![0];
    },
  );
  const prepare = result.steps.find((s) => s.step === 'prepare');
  assert.equal(prepare?.status, 'failed', JSON.stringify(result.steps.map((s) => [s.step, s.status])));
  assert.match(prepare!.summary!, new RegExp(`^no worker took prepareRig from the task queue ${awsDataQueue(id)} within 5 seconds: the rig's nodes did not start their workers \\(their bootstrap runs at first boot\\)\\. The nodes' serial consoles \\(EC2 GetConsoleOutput\\), last lines:\\n`));
  // moto's console output is a fixed boot log; its last line reached the failure, for each node.
  for (const node of ['app-node', 'load-node']) assert.match(prepare!.summary!, new RegExp(`^${node} i-[0-9a-f]+: \\n(.+\\n)*Enabling fast FPU save and restore\\.\\.\\. done\\.$`, 'm'), node);
  assert.equal(result.steps.find((s) => s.step === 'database')?.status, 'ok', 'the database was waited for before');
  assert.equal(result.steps.find((s) => s.step === 'teardown')?.status, 'ok');
  assert.deepEqual(await rigResources(id), []);
});

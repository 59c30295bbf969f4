// Tests cannot hang on a campaign that has already ended: every wait on a campaign (a file it should
// write, a progress state) fails as soon as the workflow closes, with its failure in the message.
// The campaigns here end quickly on their own (a bad spec; a bring-up refusal, with test-double
// activities on a local dev server) while the test waits for something that will never come.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { PROFILES } from '../../lib/protocol/spec';
import { localDevEnv } from '../harness/temporal';
import { waitForProgress, waitOnCampaign } from '../harness/campaign';
import { activityDoubles, doubleWorker } from './doubles';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await localDevEnv();
});
after(async () => {
  await env?.teardown();
});

const DATA_QUEUE = 'rig-data-waits';

/** Runs workers for the campaign while `body` waits on it. */
async function withWorkers<T>(doubles: ReturnType<typeof activityDoubles>, body: () => Promise<T>): Promise<T> {
  const workers = await Promise.all(
    ['rig', doubles.hostQueue, DATA_QUEUE].map((taskQueue) =>
      doubleWorker(env.nativeConnection, taskQueue, doubles.activities),
    ),
  );
  return workers.reduce<Promise<T>>((run, w) => w.runUntil(run), body());
}

// Long enough that a wait which ignores the workflow would time out with a different message.
const NEVER_MS = 120_000;

test('a wait for a file fails at once when the campaign fails, with the failure in the message', async () => {
  const doubles = activityDoubles({ dataQueue: DATA_QUEUE });
  const bad = { ...PROFILES.rehearsal, sustained: { ...PROFILES.rehearsal.sustained!, configurations: [{ name: 'x', eventsPerSecond: -5, batch: 1, p99LimitMs: 5 }] } };
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'waits-bad-spec', args: [bad] });
  await withWorkers(doubles, () =>
    assert.rejects(
      waitOnCampaign(handle, 'a secrets file that is never written', async () => undefined, NEVER_MS),
      /the campaign waits-bad-spec closed \(FAILED\) before a secrets file that is never written: .*eventsPerSecond must be > 0/s,
    ),
  );
});

test('a wait for progress fails at once when a step refuses, naming the refusal', async () => {
  const doubles = activityDoubles({ dataQueue: DATA_QUEUE, refuse: 'bringUp' });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'waits-refused', args: [PROFILES.rehearsal] });
  await withWorkers(doubles, () =>
    assert.rejects(
      waitForProgress(handle, 'the sustained repeats', (p) => p.step === 'sustained', NEVER_MS),
      /closed \(FAILED\) before the sustained repeats: .*app role cannot SELECT usage_events/s,
    ),
  );
});

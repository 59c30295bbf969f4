// The Temporal dev server restarted (same database file) in the middle of a series: the worker
// reconnects and the campaign finishes, torn down and clean.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { campaignEnv, tinySpec, waitForProgress } from '../harness/campaign';
import { countedRepeats } from '../../lib/protocol/repeat-validity';

test('the dev server restarted during a series: the campaign finishes', async () => {
  const env = await campaignEnv();
  await env.inProcessWorker();
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'server-restart', args: [tinySpec()] });
  await waitForProgress(handle, 'repeat 2 running', (p) => p.phase === 'repeat' && p.repeat?.k === 2, 180_000);
  await env.restartServer();
  const result = (await env.client.workflow.getHandle('server-restart').result()) as CampaignResult;
  // counted repeats: one invalid on the host's account (issue 34) is kept, run again, never counted
  assert.deepEqual(countedRepeats(result.repeats).map((r) => r.index).sort(), [1, 2, 3]);
  assert.equal(result.rig, 'destroyed');
  assert.ok(result.reportPath);
  await env.assertClean();
});

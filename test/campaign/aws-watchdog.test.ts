// The watchdog tears down a terminated AWS campaign: a real Temporal dev server, a real moto 5.2.5
// for AWS's control plane, a real local PostgreSQL cluster standing in for the RDS endpoint (the
// test-only RIG_AWS_EMULATOR_MAP), and this process's workers serving the control queues (the host's
// queue, where the watchdog's teardown runs, among them) and the AWS rig's own (the load node's and
// the app node's), as in aws-campaign.test.ts.
//
// Why: a campaign that is terminated (an operator's `temporal workflow terminate`, a bad deploy) runs
// none of its own end, so nothing in it tears the rig down, and an AWS rig bills by the hour. The
// watchdog (workflows/watchdog.ts, started at provisioning with parent-close policy ABANDON) looks at
// its campaign every watchdogCheckSeconds (10 s here; 2 min by default) and tears down a campaign that closed
// TERMINATED then, long before its deadline. What it asserts: the rig outlives its terminated campaign
// (still in moto right after the terminate), then nothing of it is left in moto, the watchdog's result
// says it fired because the campaign closed terminated (not at its deadline), and this machine is
// clean (the teardown stopped the emulated app node's service: lib/targets/aws/nodes.ts stopEmulatedService).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EMULATOR_MAP_ENV } from '../../lib/targets/aws/emulator-map';
import { awsAppQueue, awsDataQueue } from '../../lib/temporal/queues';
import { watchdogQuery, type WatchdogState } from '../../workflows/messages';
import { exampleInput, standInDatabase, useMoto } from '../harness/aws-env';
import { campaignEnv, failIfClosed, tinySpec, waitFor, waitForProgress } from '../harness/campaign';

const awsBlock = exampleInput.aws!;
// RIG_STATE_DIR is campaignEnv()'s.
const { rigResources } = useMoto({ stateDir: false, clearEnv: [EMULATOR_MAP_ENV] });

const CHECK_SECONDS = 10;

test('the watchdog tears down a terminated AWS campaign within its check, long before its deadline', { timeout: 20 * 60_000 }, async () => {
  const id = 'aws-watchdog';
  // RDS's master user is rig_admin (provision.ts); the stand-in cluster (RDS-fidelity mode) has it as a non-superuser admin and requires TLS.
  // (Both helpers register their own `after`: they are called here, in the test, not in a `before` hook.)
  const { mapJson } = await standInDatabase();
  process.env[EMULATOR_MAP_ENV] = mapJson;
  const env = await campaignEnv();
  // The control queues, this host's queue among them: the watchdog's teardown runs there (the host that made the rig).
  await env.inProcessWorker();
  // This machine plays both nodes: the workers their user data would start, on the queues derived from the campaign.
  await env.inProcessWorker([awsDataQueue(id), awsAppQueue(id)]);
  const spec = tinySpec({
    target: 'aws',
    aws: awsBlock,
    calibrate: false,
    // It looks every 10 s, not 2 min: the behaviour is the same, at a tenth of the wait.
    watchdogCheckSeconds: CHECK_SECONDS,
    sustained: { ...tinySpec().sustained!, repeats: 3, repeatSeconds: 120, cooldownSeconds: 10 },
  });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] });
  await waitForProgress(handle, 'measuring on the provisioned rig', (p) => p.step === 'sustained', 10 * 60_000);
  const made = await rigResources(id);
  assert.equal(made.length, 12, `the whole rig is up: ${made.join(', ')}`);

  await handle.terminate('test: the campaign is killed while it measures');
  assert.equal((await handle.describe()).status.name, 'TERMINATED');
  assert.deepEqual((await rigResources(id)).sort(), made.sort(), 'the rig outlives its terminated campaign');
  // Its watchdog: the campaign's workflow id with ".watchdog" (workflows/campaign.ts).
  const watchdog = env.client.workflow.getHandle(`${id}.watchdog`);
  assert.equal((await watchdog.query(watchdogQuery)).state, 'armed');

  // Bounded: the watchdog looks every CHECK_SECONDS; its teardown takes seconds on moto. A watchdog
  // that closes with anything of the rig left fails the wait at once, with how it ended.
  await waitFor(
    'the watchdog to tear the terminated campaign\'s rig down',
    async () => {
      if ((await rigResources(id)).length === 0) return true;
      await failIfClosed(watchdog, 'the rig was gone');
      return false;
    },
    2 * CHECK_SECONDS * 1000 + 2 * 60_000,
    2_000,
  );
  const fired = (await watchdog.result()) as WatchdogState;
  assert.equal(fired.state, 'fired');
  assert.equal(fired.firedBy, `the campaign ${id} closed (terminated) without disarming`);
  assert.ok(Date.parse(fired.deadline) - Date.now() > 30 * 60_000, `torn down long before its deadline (${fired.deadline})`);

  // Nothing left: not on AWS (by tag), not on this machine (the emulated app node's service).
  assert.deepEqual(await rigResources(id), []);
  await env.assertClean();
});

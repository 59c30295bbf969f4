// An AWS campaign whose control host lacks one action of the documented policy (issue 23): the
// whole campaign of aws-campaign.test.ts under moto 5.2.5's IAM enforcement, shortened (no
// calibration, one short repeat, no ceiling or denominator), with the control host's IAM user holding
// docs/aws-iam-policy-*.json less rds:DeleteDBInstance. The nodes' user holds their role's policy as
// the campaign's provisioning wrote it, and the test's own looks are an admin's
// (test/harness/aws-campaign.ts).
//
// Why that action: it is needed only once the rig bills (the database is up and has been measured on),
// and its refusal is the expensive one, an RDS instance nobody deletes. What the rig does then is the
// behaviour this file pins: teardown removes what comes before the database in its order (the nodes,
// their instance profile and role), stops at the refused call, and retries without a cap
// (workflows/teardown.ts): the campaign neither ends nor gives the rig up, and while it retries its
// progress says why, naming the action (what `rig watch` shows), and RigStatus reads
// teardown-failing. Then the operator's fix, the action granted back to the same user: the next retry
// tears the rest down and the campaign ends with the rig destroyed and the clean check clean. Should a
// run fail before that, the file's end removes what is left with the admin's keys (removeRigResources).
//
// moto checks the action of every call and, for S3 alone, the resource (test/harness/iam-enforced.ts):
// on AWS the same refusal would come for a DeleteDBInstance on a database outside `db:rig-*` or
// without the `rig:campaign` tag, which moto cannot show. No timing is judged: the repeat's verdict is
// not asserted.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { PutUserPolicyCommand } from '@aws-sdk/client-iam';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { EMULATOR_MAP_ENV } from '../../lib/targets/aws/emulator-map';
import { findRigResources } from '../../lib/targets/aws/find';
import { rigNames } from '../../lib/targets/aws/names';
import { removeRigResources } from '../../lib/targets/aws/teardown';
import { awsAppQueue, awsDataQueue } from '../../lib/temporal/queues';
import { exampleInput, standInDatabase, useMoto } from '../harness/aws-env';
import { campaignIdentities, CONTROL_USER, grantNodePolicy, MOTO_ACCOUNT, nodeFolders, nodeWorker, rigResourcesAs, withClientsAs, type CampaignIdentities } from '../harness/aws-campaign';
import { campaignEnv, saveHistory, tinySpec, waitForProgress } from '../harness/campaign';
import { documentedPolicies, withoutAction } from '../harness/iam-enforced';

/** Needed only by teardown, once the database has been measured on. */
const DROPPED = 'rds:DeleteDBInstance';
const ID = 'aws-lacking';

let who: CampaignIdentities;
const moto = useMoto({
  stateDir: false,
  clearEnv: [EMULATOR_MAP_ENV],
  afterStart: async () => {
    who = await moto.withClients((c) => campaignIdentities(c, moto.endpoint, withoutAction(documentedPolicies(), DROPPED)));
    Object.assign(process.env, who.control);
  },
  // A run that failed before the grant leaves a billable rig (in moto): removed with the admin's keys.
  beforeStop: async () => {
    if (!who) return;
    await withClientsAs(who.admin, moto.region, moto.endpoint, async (c) => {
      const left = await findRigResources(c, ID);
      if (left.length) await removeRigResources(c, left);
    });
  },
});
const rigResources = () => rigResourcesAs(who.admin, moto.region, moto.endpoint, ID);
const kinds = async () => (await rigResources()).map((r) => r.split(' ')[0]).sort();

const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

test(`a control host whose policy lacks ${DROPPED}: teardown stops at the database, retries naming the action, and finishes once it is granted`, { timeout: 10 * 60_000 }, async (t) => {
  const { map } = await standInDatabase();
  const appFolders = nodeFolders('app');
  const env = await campaignEnv();
  process.env[EMULATOR_MAP_ENV] = JSON.stringify({ ...map, appNodeStateDir: appFolders.stateDir });
  await env.inProcessWorker();
  const nodeEnv = { ...env.childEnv, ...who.node, [EMULATOR_MAP_ENV]: JSON.stringify(map), RIG_AWS_ARTIFACTS_BUCKET: rigNames(ID).artifactsBucket(MOTO_ACCOUNT) };
  const spec = tinySpec({
    target: 'aws',
    aws: exampleInput.aws!,
    calibrate: false,
    sustained: { ...tinySpec().sustained!, repeats: 1, repeatSeconds: 3, warmupSeconds: 0, cooldownSeconds: 0 },
  });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: ID, args: [spec] });
  await grantNodePolicy(who.admin, moto.region, moto.endpoint, handle);
  await Promise.all([nodeWorker('load', awsDataQueue(ID), nodeEnv, children), nodeWorker('app', awsAppQueue(ID), nodeEnv, children, appFolders)]);

  // The refusal, as the campaign shows it while it retries: the action, by name.
  let waiting = '';
  await waitForProgress(handle, `the teardown to fail on ${DROPPED}`, (p) => {
    waiting = p.waitingFor ?? '';
    return /^the teardown, failing/.test(waiting);
  }, 6 * 60_000);
  t.diagnostic(`the campaign's progress while teardown retries: ${waiting}`);
  assert.match(waiting, new RegExp(`not authorized to perform:? ${DROPPED}\\b`), waiting);
  assert.match(waiting, /retrying on \S+ without a cap$/, waiting);
  const desc = await handle.describe();
  assert.equal(desc.status.name, 'RUNNING', 'the campaign does not end with the rig up');
  assert.deepEqual(desc.searchAttributes.RigStatus, ['teardown-failing']);
  // What came before the database in teardown's order is gone; the database (billing) and what
  // follows it are still there, found by tag.
  const left = await kinds();
  for (const gone of ['app-node', 'load-node', 'node-instance-profile', 'node-role']) assert.ok(!left.includes(gone), `${gone} was removed before the refusal: ${left.join(', ')}`);
  for (const kept of ['db-instance', 'monitoring-role', 'db-parameter-group', 'rig-secret', 'db-security-group', 'nodes-security-group', 'artifacts-bucket', 'temporal-secret']) {
    assert.ok(left.includes(kept), `${kept} is still there, waiting on the database: ${left.join(', ')}`);
  }

  // The operator grants the action to the same user: the next retry tears the rest down.
  await withClientsAs(who.admin, moto.region, moto.endpoint, (c) =>
    c.iam.send(new PutUserPolicyCommand({ UserName: CONTROL_USER, PolicyName: 'granted-back', PolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: DROPPED, Resource: '*' }] }) })),
  );
  const result = await handle.result().then(
    (r) => r as CampaignResult,
    (e: unknown) => {
      // A campaign whose measuring failed still tears down and reports its steps (its failure's details).
      if (!(e instanceof WorkflowFailedError)) throw e;
      return (e.cause as { details?: unknown[] }).details?.[0] as CampaignResult;
    },
  );
  const steps = Object.fromEntries(result.steps.map((s) => [s.step, s]));
  const all = JSON.stringify(result.steps.map((s) => [s.step, s.status, s.summary]));
  assert.equal(steps.sustained?.status, 'ok', `the rig was measured on before teardown: ${all}`);
  assert.equal(steps.teardown?.status, 'ok', all);
  assert.match(steps.teardown!.summary, /db-instance rig-aws-lacking-/, steps.teardown!.summary);
  assert.equal(steps['clean-check-after']?.status, 'ok', all);
  assert.equal(result.rig, 'destroyed');
  assert.deepEqual(await rigResources(), []);
  await env.assertClean();
  await saveHistory(env.address, ID);
});

// Issue 37, item 4: calibration runs on each load node in its own worker, and a node that fails it
// stops the campaign, naming the node, before provisioning goes further: the nodes are made and
// calibrated right after the rig is provisioned (workflows/phases/load-nodes.ts makeLoadNodesEarly,
// patched('load-nodes-early')), before bring-up and seed. A local campaign with `load.nodes: 2` and
// `calibrate`; node 0's instrument is really late: the test-only switch of lib/loadgen/child.ts
// blocks the event loop of every generator whose host is node 0's (RIG_TEST_LATE_GENERATOR_HOST
// matches the `.n0` its worker is given), 400 ms each second, so its schedule lag p99 is ~390 ms,
// over 20 % of the 1-s p99 limit on any host, however busy. (Node 0, not node 1: a real calibration
// that must PASS first is not certain beside other work on a 2-core host, where case 6's drift went
// undecided in this test's first run; a late one fails on any host.)
// Shown: node 0's CalibrationRefusal names it and its figure, the campaign fails with it, node 1 was
// never calibrated; the workflow's history holds no bring-up and no seed activity (nor any repeat or
// warm-up): nothing was done to the rig after provisioning but making the nodes; teardown ran (no
// namespace of the campaign left: `ip netns list`). The history is saved and replayed against the
// code that made it (test/harness/recorded-replay.ts). Root only (ip netns).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { teardownRig } from '../../activities/rig-lifecycle';
import type { CalibrationFile } from '../../lib/evidence/records';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { liveResources } from '../../lib/targets/local/ledger';
import { campaignNamespaces, loadNamespaceOf } from '../../lib/targets/local/load-netns';
import { standInCalibrationEnv } from '../harness/calibration-stand-in';
import { campaignEnv, saveHistory, tinySpec } from '../harness/campaign';
import { skipUnlessRoot } from '../harness/needs-tool';

// The load nodes' namespaces are made with ip netns: root only. Skipped elsewhere, a failure on CI.
const needsRoot = skipUnlessRoot('ip netns');

test('a load node that fails calibration stops the campaign, naming it, before bring-up and seed; teardown removes the nodes', { skip: needsRoot, timeout: 12 * 60_000 }, async (t) => {
  const env = await campaignEnv();
  // The control worker passes its environment to the load nodes' workers it starts (the local
  // target's load-workers.ts); only node 0's generators match the host pattern.
  Object.assign(env.childEnv, { RIG_TEST_LATE_GENERATOR: '400:1000', RIG_TEST_LATE_GENERATOR_HOST: '\\.n0$' });
  // The control host's instrument is not what is shown here: its calibration is a test's stand-in
  // (test/harness/calibration-stand-in.ts, honoured only under RIG_TESTING=1); a load node's is never
  // one, so the nodes' calibrations are real. (The rig's database is never calibrated: that follows
  // bring-up, which the refusal comes before.)
  Object.assign(env.childEnv, standInCalibrationEnv('test/campaign/load-node-calibration.test.ts: what is shown is the load nodes\' calibration'));
  await env.childWorker();
  const id = 'load-node-calibration';
  // Node i's namespace is rigload-<hash of the campaign>-<i>, whatever its subnet.
  const namespacePrefix = loadNamespaceOf(id, 0, 0).ns.slice(0, -1);
  const running: { handle?: WorkflowHandle } = {};
  t.after(async () => {
    await running.handle?.terminate('test ended').catch(() => undefined);
    if (liveResources(id).length) await teardownRig({ campaignId: id, target: 'local', by: 'operator' });
  });

  const spec = tinySpec({ calibrate: true, load: { nodes: 2 }, sustained: { repeats: 1, repeatSeconds: 6, cooldownSeconds: 0, warmupSeconds: 0, configurations: [{ name: 'single', eventsPerSecond: 240, batch: 1, p99LimitMs: 1000 }] } });
  const handle = (running.handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] }));
  const failure = await handle.result().then(
    (r) => assert.fail(`the campaign did not fail: ${JSON.stringify(r)}`),
    (e: unknown) => e,
  );
  assert.ok(failure instanceof WorkflowFailedError, String(failure));
  const result = (failure.cause as { details?: unknown[] }).details?.[0] as CampaignResult;
  const said = JSON.stringify({ status: result.status, error: result.error, steps: result.steps.map((s) => [s.step, s.status, s.summary.slice(0, 300)]) }, null, 1);
  const evidence = (rel: string) => path.join(result.resultsDir, rel);

  // The campaign failed with node 0's refusal, and says which node and which figure.
  assert.equal(result.status, 'failed', said);
  assert.match(String(failure.cause?.message), /load node 0: the instrument is off/, said);
  assert.match(result.error ?? '', /^load node 0: the instrument is off, so nothing it measures can be published: .*schedule lag p99 [\d.]+ ms/, said);

  // Node 0 calibrated in its own worker and was refused; node 1, after it, never calibrated.
  const started = result.steps.find((s) => s.step === 'load-nodes');
  assert.equal(started?.status, 'ok', said);
  assert.match(started!.summary, /^node 0 10\.231\.\d+\.2, node 1 10\.231\.\d+\.6$/, 'two nodes, each at its own address');
  const calibrations = result.steps.filter((s) => s.step === 'calibrate' && /^load node /.test(s.summary));
  assert.deepEqual(calibrations.map((s) => [s.status, s.summary.slice(0, 13)]), [['refused', 'load node 0: ']], said);
  const order = result.steps.map((s) => s.step);
  assert.ok(order.indexOf('provision') < order.indexOf('load-nodes') && order.indexOf('load-nodes') < order.lastIndexOf('calibrate'), said);
  const n0 = JSON.parse(fs.readFileSync(evidence('calibration/nodes/n0/calibration.json'), 'utf8')) as CalibrationFile;
  assert.equal(n0.calibrated, false);
  assert.ok(n0.cases.some((c) => !c.passed && /schedule lag p99 .* the generator sends late/.test(c.detail)), JSON.stringify(n0.cases.map((c) => c.detail)));
  assert.ok(!fs.existsSync(evidence('calibration/nodes/n1')), 'node 1 was never calibrated: the campaign stopped at node 0');

  // Before provisioning went further: no bring-up, no seed, nothing sent from a node, nothing measured
  // or counted. The workflow's own history says which activities it ever scheduled.
  assert.deepEqual(result.repeats, [], said);
  assert.deepEqual(result.interrupted, [], said);
  assert.ok(!fs.existsSync(evidence('repeats')), 'no repeat folder: no node sent load');
  const scheduled = ((await handle.fetchHistory()).events ?? []).flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    return a ? [a.activityType?.name ?? '?'] : [];
  });
  const ran = JSON.stringify(scheduled);
  for (const act of ['provisionRig', 'startLoadNodes', 'calibrateInstrument', 'teardownRig']) assert.ok(scheduled.includes(act), `${act} was scheduled: ${ran}`);
  for (const act of ['bringUp', 'calibrateDatabase', 'seedHistory', 'warmUp', 'runRepeat', 'runNodeLoad', 'judgeNodeRepeat']) assert.ok(!scheduled.includes(act), `no ${act}: ${ran}`);
  assert.ok(scheduled.indexOf('provisionRig') < scheduled.indexOf('startLoadNodes'), `the nodes were made after provisioning: ${ran}`);
  for (const step of ['bring-up', 'calibrate-database', 'seed', 'warm-up', 'sustained'] as const) assert.ok(!order.includes(step), `no ${step} step: ${said}`);
  // After the refusal only the campaign's end: teardown, the clean-check after it and the report.
  const afterRefusal = result.steps.slice(result.steps.indexOf(calibrations[0]) + 1);
  assert.ok(afterRefusal.every((s) => ['teardown', 'clean-check-after', 'report'].includes(s.step)), said);

  // Teardown ran: workers, gateway and namespaces gone.
  assert.equal(result.steps.find((s) => s.step === 'teardown')?.status, 'ok', said);
  assert.equal(result.rig, 'destroyed', said);
  const left = execFileSync('ip', ['netns', 'list']).toString();
  assert.ok(!left.includes(namespacePrefix), `no namespace ${namespacePrefix}* left:\n${left}`);
  assert.deepEqual(campaignNamespaces(id), []);
  await env.assertClean();
  // The early path recorded and replayed against the code that made it.
  await saveHistory(env.address, id);
});

// test-mode: alone
// Issue 37, item 4: calibration runs on every load node, and a node that fails it stops the campaign,
// naming the node, before any repeat is sent. A local campaign with `load.nodes: 2` and `calibrate`;
// node 1's instrument is really late: the test-only switch of lib/loadgen/child.ts blocks the event
// loop of every generator whose host is node 1's (RIG_TEST_LATE_GENERATOR_HOST matches the `.n1` its
// worker is given), 400 ms each second, so its schedule lag p99 is ~390 ms, over 20 % of the 1-s p99
// limit on any host. Node 0 calibrates for real in its own worker first (alone: a passing calibration
// needs the host to itself, as `rig calibrate`'s test does). Shown: node 0 CALIBRATED, node 1's
// CalibrationRefusal names it and its figure, the campaign fails with it, no repeat was sent from any
// node, and teardown ran (no namespace of the campaign left: `ip netns list`). Root only (ip netns).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { teardownRig } from '../../activities/rig-lifecycle';
import { CALIBRATION_FILE, DB_CALIBRATION_FILE } from '../../lib/evidence/layout';
import type { CalibrationFile } from '../../lib/evidence/records';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { liveResources } from '../../lib/targets/local/ledger';
import { campaignNamespaces, loadNamespaceOf } from '../../lib/targets/local/load-netns';
import { campaignEnv, tinySpec } from '../harness/campaign';

test('a load node that fails calibration stops the campaign, naming it, before any repeat; teardown removes the nodes', { skip: process.getuid?.() !== 0 ? 'needs root (ip netns)' : false, timeout: 12 * 60_000 }, async (t) => {
  const env = await campaignEnv();
  // The control worker passes its environment to the load nodes' workers it starts (the local
  // target's load-workers.ts); only node 1's generators match the host pattern.
  Object.assign(env.childEnv, { RIG_TEST_LATE_GENERATOR: '400:1000', RIG_TEST_LATE_GENERATOR_HOST: '\\.n1$' });
  await env.childWorker();
  const id = 'load-node-calibration';
  // Node i's namespace is rigload-<hash of the campaign>-<i>, whatever its subnet.
  const namespacePrefix = loadNamespaceOf(id, 0, 0).ns.slice(0, -1);
  const running: { handle?: WorkflowHandle } = {};
  t.after(async () => {
    await running.handle?.terminate('test ended').catch(() => undefined);
    if (liveResources(id).length) await teardownRig({ campaignId: id, target: 'local', by: 'operator' });
  });
  // The control host's instrument and the rig's database are not what is shown here: their judgements
  // are recorded beforehand, as an earlier attempt of their steps would have left them (each activity
  // returns a recorded judgement instead of measuring again). The nodes' calibrations are real.
  const recorded = (rel: string, body: unknown) => {
    const file = path.join(process.env.RIG_RESULTS!, id, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(body));
  };
  const note = 'recorded by test/campaign/load-node-calibration.test.ts: what is shown is the load nodes\' calibration';
  recorded(CALIBRATION_FILE, { calibrated: true, cases: [{ name: note, passed: true, detail: 'not measured' }] });
  recorded(DB_CALIBRATION_FILE, { calibrated: true, passed: 0, total: 0, cases: [], tolerances: {}, settings: {}, started_at: new Date().toISOString(), ended_at: new Date().toISOString(), note });

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

  // The campaign failed with node 1's refusal, and says which node and which figure.
  assert.equal(result.status, 'failed', said);
  assert.match(String(failure.cause?.message), /load node 1: the instrument is off/, said);
  assert.match(result.error ?? '', /^load node 1: the instrument is off, so nothing it measures can be published: .*schedule lag p99 [\d.]+ ms/, said);

  // Every node calibrated in its own worker, in node order: node 0 passed, node 1 was refused.
  const started = result.steps.find((s) => s.step === 'load-nodes');
  assert.equal(started?.status, 'ok', said);
  assert.match(started!.summary, /^node 0 10\.231\.\d+\.2, node 1 10\.231\.\d+\.6$/, 'two nodes, each at its own address');
  const calibrations = result.steps.filter((s) => s.step === 'calibrate' && /^load node /.test(s.summary));
  assert.deepEqual(calibrations.map((s) => s.status), ['ok', 'refused'], said);
  assert.match(calibrations[0].summary, /^load node 0: CALIBRATED \(9\/9\)/, said);
  assert.match(calibrations[1].summary, /^load node 1: /, said);
  const order = result.steps.map((s) => s.step);
  assert.ok(order.indexOf('load-nodes') < order.lastIndexOf('calibrate'), said);
  const n0 = JSON.parse(fs.readFileSync(evidence('calibration/nodes/n0/calibration.json'), 'utf8')) as CalibrationFile;
  const n1 = JSON.parse(fs.readFileSync(evidence('calibration/nodes/n1/calibration.json'), 'utf8')) as CalibrationFile;
  assert.equal(n0.calibrated, true);
  assert.equal(n1.calibrated, false);
  assert.ok(n1.cases.some((c) => !c.passed && /schedule lag p99 .* the generator sends late/.test(c.detail)), JSON.stringify(n1.cases.map((c) => c.detail)));

  // Before any repeat: nothing was sent from a node, nothing measured or counted.
  assert.deepEqual(result.repeats, [], said);
  assert.deepEqual(result.interrupted, [], said);
  assert.ok(!fs.existsSync(evidence('repeats')), 'no repeat folder: no node sent load');
  assert.ok(!order.includes('warm-up'), said);
  // After the refusal only the campaign's end: the series step it stopped, teardown and the report.
  const afterRefusal = result.steps.slice(result.steps.indexOf(calibrations[1]) + 1);
  assert.deepEqual(afterRefusal.find((s) => s.step === 'sustained')?.status, 'refused', said);
  assert.ok(afterRefusal.every((s) => ['sustained', 'teardown', 'clean-check-after', 'report'].includes(s.step)), said);

  // Teardown ran: workers, gateway and namespaces gone.
  assert.equal(result.steps.find((s) => s.step === 'teardown')?.status, 'ok', said);
  assert.equal(result.rig, 'destroyed', said);
  const left = execFileSync('ip', ['netns', 'list']).toString();
  assert.ok(!left.includes(namespacePrefix), `no namespace ${namespacePrefix}* left:\n${left}`);
  assert.deepEqual(campaignNamespaces(id), []);
  await env.assertClean();
});

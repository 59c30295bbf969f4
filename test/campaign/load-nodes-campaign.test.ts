// MUST SHOW of issue 37: a local campaign with `load.nodes: 3` at the rehearsal's first configuration
// (240 events/s, batch 1), split three ways, one short repeat. The rig starts three `rig worker`s, each
// in a network namespace of its own polling its node's queue, right after provisioning (before
// bring-up and seed, once: the repeat reuses them); the repeat is sent from
// all three from one start instant and judged from the merge; teardown removes workers, gateway and
// namespaces. Then `rig analyze` accepts the merged stream and the three node streams (each checked on
// its share of the plan), and the page has a row per node beside the merged row. Root only (namespaces).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { NodeLoadFile } from '../../activities/node-repeat';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { PROFILES } from '../../lib/protocol/spec';
import { campaignNamespaces } from '../../lib/targets/local/load-netns';
import { campaignEnv, tinySpec } from '../harness/campaign';
import { rig } from '../harness/rig-cli';
import { skipUnlessRoot } from '../harness/needs-tool';

// The load nodes' namespaces are made with ip netns: root only. Skipped elsewhere, a failure on CI.
const needsRoot = skipUnlessRoot('ip netns');

// Latency is not this test's subject, so nothing of it may decide the repeat: a p99 limit of a minute
// puts the instrument's lag bound (10 % of it) at 6 s and its latest request at 60 s, which a host
// starved to half a core (CI's 2 cores running three files, or a 1-core cgroup) stays far within, and
// drift is noted, not gated. And half the rehearsal's rate, for 10 s (1,200 requests, over the gate's
// 1,000 samples): at 240/s a host loaded past CI's three files (load 17 on 2 cores) stalled the rig's
// service past the generator's 10-s drain, and requests failed. So the one repeat can be neither made
// invalid nor failed by the host: it passes.
const P99_LIMIT_MS = 60_000;
const RATE = 120;
const SECONDS = 10;

test('load.nodes 3: three workers in three namespaces, one merged repeat judged, analyzed per share, a page row per node', { skip: needsRoot }, async (t) => {
  const env = await campaignEnv();
  const worker = await env.childWorker();
  const id = 'load-nodes-3';
  const single = PROFILES.rehearsal.sustained!.configurations[0];
  assert.deepEqual([single.name, single.eventsPerSecond, single.batch], ['single', 240, 1]);
  // The rehearsal's configuration at half its rate, and a p99 limit this shared 2-core host holds with four workers on it.
  const spec = tinySpec({ load: { nodes: 3 }, sustained: { repeats: 1, repeatSeconds: SECONDS, cooldownSeconds: 0, warmupSeconds: 0, drift: 'noted', configurations: [{ ...single, eventsPerSecond: RATE, p99LimitMs: P99_LIMIT_MS }] } });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] });
  const result = (await handle.result()) as CampaignResult;
  for (const r of result.repeats) t.diagnostic(`repeat ${r.index} attempt ${r.attempt}: ${r.passed ? 'PASS' : 'FAIL'} ${r.reasons.join('; ')}`);
  for (const s of result.steps) t.diagnostic(`${s.step} ${s.status} ${((Date.parse(s.endedAt) - Date.parse(s.startedAt)) / 1000).toFixed(1)} s: ${s.summary.slice(0, 120)}`);
  worker.kill('SIGTERM');
  const evidence = (rel: string) => path.join(result.resultsDir, rel);

  assert.ok(['uncalibrated'].includes(result.status), `${result.status}: ${result.error ?? ''} ${JSON.stringify(result.steps.filter((s) => s.status !== 'ok'))}`);
  const started = result.steps.find((s) => s.step === 'load-nodes');
  assert.equal(started?.status, 'ok', JSON.stringify(started));
  // Made once, right after provisioning and before bring-up and seed (patched('load-nodes-early')); the repeat reused them.
  const order = result.steps.map((s) => s.step);
  assert.deepEqual(order.filter((s) => s === 'load-nodes'), ['load-nodes'], JSON.stringify(order));
  const at = (s: (typeof order)[number]) => order.indexOf(s);
  assert.ok(at('provision') < at('load-nodes') && at('load-nodes') < at('bring-up') && at('bring-up') < at('seed') && at('seed') < at('sustained'), JSON.stringify(order));
  assert.deepEqual(result.repeats.map((r) => [r.index, r.attempt, r.passed, Boolean(r.invalid)]), [[1, 1, true, false]], JSON.stringify(result.repeats));
  const dir = evidence('repeats/single/r1-a1');

  // Three workers, each in a namespace of its own (not the control host's), each with its own host name.
  const nodes = [0, 1, 2].map((i) => JSON.parse(fs.readFileSync(path.join(dir, `nodes/n${i}/node.json`), 'utf8')) as NodeLoadFile);
  const ownNs = fs.readlinkSync('/proc/self/ns/net');
  assert.equal(new Set(nodes.map((n) => n.net_ns)).size, 3, JSON.stringify(nodes.map((n) => n.net_ns)));
  assert.ok(nodes.every((n) => n.net_ns && n.net_ns !== ownNs), 'no node ran in the control host\'s namespace');
  assert.deepEqual(nodes.map((n) => n.host.slice(-3)), ['.n0', '.n1', '.n2']);
  assert.equal(new Set(nodes.map((n) => n.start_at_ms)).size, 1, 'one start instant');
  assert.ok(nodes.every((n) => n.clock && n.clock.exchanges > 0), 'each node read its clock against the control host through its gateway');

  // Judged from the merge: the whole schedule, reconciled over every node's run tag.
  const verdict = JSON.parse(fs.readFileSync(path.join(dir, 'verdict.json'), 'utf8')) as { verdict: { passed: boolean; state: string }; plan: { nodes?: number }; delivery: { scheduled: number }; gate: { checks: Array<{ name: string; passed: boolean | null; detail: string }> } };
  assert.equal(verdict.plan.nodes, 3);
  assert.equal(verdict.delivery.scheduled, RATE * SECONDS);
  assert.deepEqual([verdict.verdict.passed, verdict.verdict.state], [true, 'PASS'], JSON.stringify(verdict.gate.checks));
  // Reconciled over all three nodes' tags: every one of the 1,200 events (batch 1: a row each) the
  // merge claims was written, each node's share under its own tag.
  const rows = verdict.gate.checks.find((c) => c.name === 'rows');
  assert.equal(rows?.passed, true, JSON.stringify(rows));
  const rec = JSON.parse(fs.readFileSync(path.join(dir, 'reconcile.json'), 'utf8')) as { rows_written: number; quantity_gained: number; nodes: Array<{ run_tag: string; rows_written: number }> };
  assert.deepEqual(rec.nodes.map((n) => n.run_tag), nodes.map((n) => n.run_tag));
  const share = (RATE * SECONDS) / 3;
  assert.deepEqual(rec.nodes.map((n) => n.rows_written), [share, share, share]);
  assert.equal(rec.rows_written, RATE * SECONDS);

  // Torn down: no worker, gateway or namespace of the campaign left.
  // This campaign's own: other files' load nodes may run beside it (test/campaign/load-node-*.test.ts).
  assert.deepEqual(campaignNamespaces(id), [], 'namespaces removed');
  await env.assertClean();

  // rig analyze: the merged stream, and the three node streams each held to its share.
  const judged = (code: number | null) => [0, 4, 99].includes(code ?? -1);
  const merged = await rig(['analyze', path.join(dir, 'samples.csv.gz'), '--json', '--p99-limit-ms', String(P99_LIMIT_MS), '--reconcile', `rows=${rec.rows_written},quantity=${rec.quantity_gained}`], env.childEnv);
  assert.ok(judged(merged.code), `merged: exit ${merged.code}\n${merged.stderr}`);
  const shares = await rig(['analyze', ...[0, 1, 2].map((i) => path.join(dir, `nodes/n${i}/samples.csv.gz`)), '--json', '--p99-limit-ms', String(P99_LIMIT_MS), '--reconcile', `rows=${rec.rows_written},quantity=${rec.quantity_gained}`], env.childEnv);
  assert.ok(judged(shares.code), `nodes: exit ${shares.code}\n${shares.stderr}`);
  const report = JSON.parse(shares.stdout) as { nodes: Array<{ node: number; offered: number }>; delivery: { scheduled: number } };
  assert.deepEqual(report.nodes.map((n) => [n.node, n.offered]), [[0, share], [1, share], [2, share]], 'each node offered its share: 120/s x 10 s / 3');
  assert.equal(report.delivery.scheduled, RATE * SECONDS);

  // The page: a row per node beside the merged row.
  const md = fs.readFileSync(evidence('report.md'), 'utf8');
  const section = md.slice(md.indexOf('Load nodes'));
  assert.ok(md.includes('Load nodes'), 'the page has a load nodes table');
  for (const row of ['| single r1 | n0 ', '| single r1 | n1 ', '| single r1 | n2 ', '| single r1 | merged ']) assert.ok(section.includes(row), `page row ${row}\n${section.slice(0, 1500)}`);
});

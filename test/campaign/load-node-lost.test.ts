// MUST SHOW of issue 37: a load node killed in the middle of a repeat, through the real workflow. A local
// campaign with `load.nodes: 3` (the rehearsal's 240 events/s split three ways, one 10-s repeat). Once
// node 1's load is seen running (its runNodeLoad's first heartbeat from the generator, a second into
// the load), node 1's worker is killed with its generator: SIGKILL to the process group the ledger
// names, checked first to live in node 1's namespace (a load host gone, as a machine goes). Shown from
// the campaign's result and evidence:
// - the attempt is interrupted, naming node 1 and no other, and listed on the page, never counted;
// - nothing of it was merged or judged: no merged stream, no verdict (the survivors' streams stay theirs);
// - the lost worker was replaced (the load-nodes step ran again; workers 0 and 2 kept) and attempt 2
//   ran on all three nodes, from one start instant, each its share of the merged stream, reconciled
//   over all three nodes' run tags: the one repeat counted;
// - the campaign completes and tears everything down (no namespace of it left).
// Root only (ip netns). Bounded: the test times out; whatever happens, its rig is torn down.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { NodeLoadFile } from '../../activities/node-repeat';
import { teardownRig } from '../../activities/rig-lifecycle';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { liveResources, readLedgerFile } from '../../lib/targets/local/ledger';
import { closedLedgerDir } from '../../lib/targets/local/rig-paths';
import { campaignNamespaces } from '../../lib/targets/local/load-netns';
import { isAlive, processGroup } from '../../lib/targets/local/proc';
import { campaignEnv, tinySpec, waitOnCampaign } from '../harness/campaign';
import { skipUnlessRoot } from '../harness/needs-tool';

// The load nodes' namespaces are made with ip netns: root only. Skipped elsewhere, a failure on CI.
const needsRoot = skipUnlessRoot('ip netns');

// Half the rehearsal's rate (1,200 requests, over the gate's 1,000 samples): at 240/s a host loaded past
// CI's three files stalled the rig's service past the generator's 10-s drain, and requests failed.
const RATE = 120;
const SECONDS = 10;
// Latency is not this test's subject, so nothing of it may decide the path: a p99 limit of a minute
// puts the instrument's lag bound (10 % of it) at 6 s and its latest request at 60 s, which a host
// starved to half a core (CI's 2 cores running three files, or a 1-core cgroup) stays far within
// (the 5-s limit's 500-ms bound did not: af74ac1, at 0.4 of a core), and drift is noted, not gated.
// So attempt 2 cannot be made invalid by the host's lateness, and must pass.
const P99_LIMIT_MS = 60_000;

/** The network namespace `ns` (made by `ip netns add`) as /proc/<pid>/ns/net names it. */
const netnsId = (ns: string) => `net:[${fs.statSync(`/var/run/netns/${ns}`).ino}]`;

test('a load node killed mid-repeat: the attempt is interrupted naming it, never merged; the repeat runs again on all nodes and that one is counted', { skip: needsRoot, timeout: 12 * 60_000 }, async (t) => {
  const env = await campaignEnv();
  await env.childWorker();
  const id = 'load-node-lost';
  const running: { handle?: WorkflowHandle } = {};
  t.after(async () => {
    // A failed assertion leaves the campaign running and its rig up: stop one, tear down the other.
    await running.handle?.terminate('test ended').catch(() => undefined);
    if (liveResources(id).length) await teardownRig({ campaignId: id, target: 'local', by: 'operator' });
  });
  const spec = tinySpec({ load: { nodes: 3 }, sustained: { repeats: 1, repeatSeconds: SECONDS, cooldownSeconds: 0, warmupSeconds: 0, drift: 'noted', configurations: [{ name: 'single', eventsPerSecond: RATE, batch: 1, p99LimitMs: P99_LIMIT_MS }] } });
  const h = (running.handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] }));

  // Node 1's load is running: its generator's first progress line came back as its activity's heartbeat.
  const seen = await waitOnCampaign(h, "node 1's load under way (attempt 1)", async () => {
    const desc = await h.describe();
    return (desc.raw.pendingActivities ?? []).some((a) => {
      const p = a.heartbeatDetails?.payloads?.[0];
      const d = p ? (defaultPayloadConverter.fromPayload(p) as { runTag?: string; node?: number; second?: number; sent?: number }) : undefined;
      return a.activityType?.name === 'runNodeLoad' && d?.node === 1 && /\.r1\.a1\.n1$/.test(d.runTag ?? '') && (d.second ?? 0) >= 1 && (d.sent ?? 0) > 0;
    });
  }, 600_000, 200);
  assert.ok(seen);

  // The ledger's node 1 worker, in node 1's namespace, leading its own process group (with its generator).
  const worker = liveResources(id).find((r) => r.id === 'load-worker-1');
  const pid = worker?.detail.pid;
  assert.ok(pid !== undefined && isAlive(pid), JSON.stringify(worker));
  assert.equal(worker!.detail.ns, campaignNamespaces(id).find((ns) => ns.endsWith('-1')));
  const node1Ns = netnsId(worker!.detail.ns!);
  assert.equal(fs.readlinkSync(`/proc/${pid}/ns/net`), node1Ns, "the ledger's pid is node 1's worker, inside node 1's namespace");
  assert.equal(processGroup(pid), pid, 'the worker leads its own process group (spawned detached)');
  process.kill(-pid, 'SIGKILL');

  const result = await h.result().then(
    (r) => r as CampaignResult,
    (e: unknown) => {
      if (!(e instanceof WorkflowFailedError)) throw e;
      const r = (e.cause as { details?: unknown[] }).details?.[0] as CampaignResult | undefined;
      return assert.fail(`the campaign failed: ${e.cause?.message ?? e.message}\n${JSON.stringify(r?.steps.map((s) => [s.step, s.status, s.summary]))}`);
    },
  );
  const said = JSON.stringify({ status: result.status, error: result.error, repeats: result.repeats.map((r) => [r.dir, r.attempt, r.passed, r.reasons]), interrupted: result.interrupted, steps: result.steps.map((s) => [s.step, s.status, s.summary.slice(0, 160)]) }, null, 1);
  const evidence = (rel: string) => path.join(result.resultsDir, rel);
  const json = <T>(rel: string) => JSON.parse(fs.readFileSync(evidence(rel), 'utf8')) as T;

  // The campaign completed (calibrate: false, so its verdict is 'uncalibrated'), one repeat counted:
  // attempt 2, the first one judged, and it passed (valid: no lateness the limits above allow can fail it).
  assert.equal(result.status, 'uncalibrated', said);
  assert.deepEqual(result.repeats.map((r) => [r.configuration, r.index, r.attempt, r.passed, Boolean(r.invalid)]), [['single', 1, 2, true, false]], said);

  // Attempt 1: interrupted, naming node 1 and no other.
  assert.equal(result.interrupted.length, 1, said);
  const [lost] = result.interrupted;
  assert.deepEqual([lost.configuration, lost.index, lost.attempt, lost.dir], ['single', 1, 1, 'repeats/single/r1-a1'], said);
  assert.match(lost.reason, /^load node 1: .*timeout/i, said);
  assert.doesNotMatch(lost.reason, /load node [02]/, said);

  // Nothing of attempt 1 was merged or judged. Nodes 0 and 2 ran to their end (their streams are there,
  // as theirs); node 1 never finished its share.
  const a1 = 'repeats/single/r1-a1';
  for (const f of ['samples.csv.gz', 'nodes.json', 'load.json', 'reconcile.json', 'verdict.json']) assert.ok(!fs.existsSync(evidence(`${a1}/${f}`)), `${a1}/${f}: no merge of the survivors`);
  for (const i of [0, 2]) {
    assert.equal(json<NodeLoadFile>(`${a1}/nodes/n${i}/node.json`).cut_short, false, `node ${i} of attempt 1 ran to its end`);
    assert.ok(fs.existsSync(evidence(`${a1}/nodes/n${i}/samples.csv.gz`)));
  }
  assert.ok(!fs.existsSync(evidence(`${a1}/nodes/n1/node.json`)) && !fs.existsSync(evidence(`${a1}/nodes/n1/samples.csv.gz`)), 'node 1 was killed before its load ended');

  // The lost worker was replaced before attempt 2 (the step ran again); nodes 0 and 2 kept theirs.
  const loadNodeSteps = result.steps.filter((s) => s.step === 'load-nodes');
  assert.deepEqual(loadNodeSteps.map((s) => s.status), ['ok', 'ok'], said);
  // Teardown closed the ledger (nothing of it lives): it is under ledger/closed/<campaign>-<time>.jsonl.
  const closed = fs.readdirSync(closedLedgerDir()).filter((f) => f.startsWith(`${id}-`));
  assert.equal(closed.length, 1, closed.join(', '));
  const ledger = readLedgerFile(path.join(closedLedgerDir(), closed[0]));
  const madePids = (node: number) => ledger.filter((e) => e.id === `load-worker-${node}` && e.op === 'made' && e.detail.pid !== undefined).map((e) => e.detail.pid);
  assert.equal(madePids(0).length, 1, 'node 0 kept its worker');
  assert.equal(madePids(2).length, 1, 'node 2 kept its worker');
  assert.deepEqual(madePids(1)[0], pid);
  assert.equal(new Set(madePids(1)).size, 2, 'node 1 got a new worker');
  assert.ok(ledger.some((e) => e.id === 'load-worker-1' && e.op === 'removed' && e.detail.note === 'dead: replaced'));

  // Attempt 2, the counted one: all three nodes from one start instant, each in its own namespace
  // (node 1's new worker in node 1's), each its share of the merged stream, reconciled over all three.
  const a2 = 'repeats/single/r1-a2';
  assert.equal(result.repeats[0].dir, a2);
  const nodes = [0, 1, 2].map((i) => json<NodeLoadFile>(`${a2}/nodes/n${i}/node.json`));
  assert.deepEqual(nodes.map((n) => n.run_tag.slice(-6)), ['.a2.n0', '.a2.n1', '.a2.n2']);
  assert.equal(new Set(nodes.map((n) => n.start_at_ms)).size, 1, 'one start instant');
  assert.ok(nodes.every((n) => !n.cut_short));
  assert.equal(new Set(nodes.map((n) => n.net_ns)).size, 3);
  assert.equal(nodes[1].net_ns, node1Ns, "node 1's new worker ran in node 1's namespace");
  const share = (RATE * SECONDS) / 3;
  const merged = json<{ rows: Array<{ node: number; offered: number }> }>(`${a2}/nodes.json`);
  assert.deepEqual(merged.rows.map((r) => [r.node, r.offered]), [[0, share], [1, share], [2, share]], 'each node offered its share of the merged schedule');
  const verdict = json<{ verdict: { passed: boolean; state: string }; plan: { nodes?: number }; delivery: { scheduled: number }; gate: { checks: Array<{ name: string; passed: boolean | null; detail: string }> } }>(`${a2}/verdict.json`);
  assert.equal(verdict.plan.nodes, 3, 'judged from the merged stream');
  assert.equal(verdict.delivery.scheduled, RATE * SECONDS, 'the whole schedule');
  assert.deepEqual([verdict.verdict.passed, verdict.verdict.state], [true, 'PASS'], JSON.stringify(verdict.gate.checks));
  // Reconciled: every one of the 1,200 events (batch 1: a row each) acknowledged and written, counted
  // over all three nodes' run tags of attempt 2 and only those (node 1's rows of attempt 1 are not its).
  const check = (name: string) => verdict.gate.checks.find((c) => c.name === name);
  assert.deepEqual([check('rows')?.passed, check('quantity')?.passed], [true, true], JSON.stringify([check('rows'), check('quantity')]));
  const rec = json<{ rows_written: number; nodes: Array<{ run_tag: string; rows_written: number }> }>(`${a2}/reconcile.json`);
  assert.deepEqual(rec.nodes.map((n) => n.run_tag), nodes.map((n) => n.run_tag), 'reconciled over every node of attempt 2, and only those');
  assert.deepEqual(rec.nodes.map((n) => n.rows_written), [share, share, share], 'each node wrote its share');
  assert.equal(rec.rows_written, RATE * SECONDS);

  // The page lists attempt 1 as interrupted, with why.
  const md = fs.readFileSync(evidence('report.md'), 'utf8');
  assert.ok(md.split('\n').some((l) => l.includes('r1-a1') && l.includes('INTERRUPTED') && l.includes('load node 1')), 'the page lists r1-a1 as interrupted by node 1');

  // Torn down: no worker, gateway or namespace of the campaign left.
  assert.equal(result.rig, 'destroyed', said);
  assert.deepEqual(campaignNamespaces(id), [], 'namespaces removed');
  await env.assertClean();
});

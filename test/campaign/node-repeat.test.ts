// One repeat from three load nodes on a real local rig (issue 37), through the activities the repeat
// phase calls (runNodeLoad on each node, judgeNodeRepeat after them), called directly as `rig step`
// does, on the rig a one-repeat campaign kept:
// - three nodes, one start instant, each clock read against the control host's: the merged stream is
//   judged as one, reconciled against the database over all three run tags, with a row per node;
// - a node killed mid-repeat: the attempt is interrupted, naming the node, nothing is judged from the
//   survivors; the next attempt runs on all nodes and is the one counted.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { RepeatInput } from '../../activities/contract';
import { judgeNodeRepeat, runNodeLoad, type NodeLoadInput } from '../../activities/node-repeat';
import { attemptDir } from '../../activities/repeat';
import { rigHandle, teardownRig } from '../../activities/rig-lifecycle';
import { startClockServer } from '../../lib/loadgen/clock-offset';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { campaignEnv, tinySpec } from '../harness/campaign';

/** Pids of this process's load generator children (lib/loadgen/child.ts). */
function generatorChildren(): number[] {
  const out: number[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('lib/loadgen/child.ts')) out.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

test('a repeat from three load nodes: judged from the merge, reconciled over every node; a node killed makes the attempt interrupted', async (t) => {
  const env = await campaignEnv();
  await env.inProcessWorker();
  const id = 'node-repeat';
  const spec = tinySpec({ end: 'keep', sustained: { ...tinySpec().sustained!, repeats: 1, warmupSeconds: 0, cooldownSeconds: 1 } });
  const result = (await (await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] })).result()) as CampaignResult;
  const evidence = (rel: string) => path.join(result.resultsDir, rel);
  const control = await startClockServer();
  t.after(async () => {
    await control.close();
    await teardownRig({ campaignId: id, target: 'local', by: 'operator' });
  });
  const repeat: RepeatInput = {
    campaignId: id,
    rig: rigHandle(id, parseCampaignSpec(spec)),
    kind: 'sustained',
    configuration: spec.sustained!.configurations[0] as RepeatInput['configuration'],
    index: 2,
    seconds: 3,
    probe: { rate: 3, p99BudgetMs: 500 },
    driftLimit: 1.5,
    maxInFlight: 256,
  };
  const node = (attempt: number, i: number, startAtMs: number): NodeLoadInput => ({ ...repeat, attempt, node: i, nodes: 3, startAtMs, clockUrl: control.url });

  await t.test('three nodes, one schedule: the merge judged as one, every node reconciled, a row per node', async () => {
    const startAtMs = Date.now() + 8000;
    const files = await Promise.all([0, 1, 2].map((i) => runNodeLoad(node(1, i, startAtMs))));
    assert.deepEqual(files.map((f) => f.run_tag.slice(-3)), ['.n0', '.n1', '.n2']);
    for (const f of files) assert.ok(f.clock && f.clock.exchanges > 0, 'each node read its clock before the load');
    const summary = await judgeNodeRepeat({ ...repeat, attempt: 1, nodes: 3, startAtMs });
    assert.equal(summary.attempt, 1);
    const dir = evidence(attemptDir(repeat, 1));
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'reconcile.json'), 'utf8')) as { rows_written: number; nodes: Array<{ run_tag: string; rows_written: number }> };
    assert.deepEqual(rec.nodes.map((n) => n.run_tag), files.map((f) => f.run_tag));
    assert.equal(rec.rows_written, rec.nodes.reduce((a, n) => a + n.rows_written, 0));
    const verdict = JSON.parse(fs.readFileSync(path.join(dir, 'verdict.json'), 'utf8')) as { events_claimed: number; plan: { nodes?: number }; delivery: { scheduled: number }; gate: { checks: Array<{ name: string; passed: boolean | null; detail: string }> } };
    // 200 requests/s for 3 s, whole, from three nodes; the database holds exactly what the merge claims
    const rows = verdict.gate.checks.find((c) => c.name === 'rows');
    assert.equal(rows?.passed, true, rows?.detail);
    assert.equal(rec.rows_written, verdict.events_claimed);
    assert.equal(verdict.plan.nodes, 3, 'judged from the merged stream');
    assert.equal(verdict.delivery.scheduled, 600, 'the whole schedule: 200 requests/s for 3 s');
    const nodes = JSON.parse(fs.readFileSync(path.join(dir, 'nodes.json'), 'utf8')) as { rows: Array<{ node: number; offered: number; clock_offset_ms: number | null; instrument: { name: string } }> };
    assert.deepEqual(nodes.rows.map((r) => [r.node, r.offered]), [[0, 200], [1, 200], [2, 200]]);
    assert.ok(nodes.rows.every((r) => typeof r.clock_offset_ms === 'number' && r.instrument.name === 'instrument'));
    // a second judge (a retry) reads back what was judged
    assert.equal((await judgeNodeRepeat({ ...repeat, attempt: 1, nodes: 3, startAtMs })).runTag, summary.runTag);
  });

  await t.test('a node killed mid-repeat: interrupted naming it, never judged from the others; the next attempt runs on all nodes', async () => {
    const three = { ...repeat, index: 3 };
    const startAtMs = Date.now() + 8000;
    // Node 1 first, alone, so its generator is the only child of this process when it is found.
    const n1 = runNodeLoad({ ...node(1, 1, startAtMs), index: 3 }).then(
      () => 'finished',
      (err: Error) => err.message,
    );
    let victim: number[] = [];
    while (victim.length === 0) {
      await new Promise((r) => setTimeout(r, 100));
      victim = generatorChildren();
    }
    const others = Promise.all([0, 2].map((i) => runNodeLoad({ ...node(1, i, startAtMs), index: 3 })));
    // Killed one second into the load (the instant is its time 0).
    await new Promise((r) => setTimeout(r, Math.max(0, startAtMs + 1000 - Date.now())));
    process.kill(victim[0], 'SIGKILL');
    assert.match(await n1, /exited \(SIGKILL\) without a summary/);
    await others;
    await assert.rejects(judgeNodeRepeat({ ...three, attempt: 1, nodes: 3, startAtMs }), (err: Error & { type?: string }) => {
      assert.equal(err.type, 'RepeatInterrupted');
      assert.match(err.message, /node 1's stream cannot be merged.*never counted/s);
      return true;
    });
    const dir = evidence(attemptDir(three, 1));
    assert.ok(!fs.existsSync(path.join(dir, 'verdict.json')), 'no verdict from the survivors');
    assert.match(fs.readFileSync(path.join(dir, 'interrupted.json'), 'utf8'), /node 1/);
    // a retry of the judge stays refused
    await assert.rejects(judgeNodeRepeat({ ...three, attempt: 1, nodes: 3, startAtMs }), /node 1/);
    // attempt 2 on all nodes is the repeat
    const again = Date.now() + 8000;
    await Promise.all([0, 1, 2].map((i) => runNodeLoad({ ...node(2, i, again), index: 3 })));
    const summary = await judgeNodeRepeat({ ...three, attempt: 2, nodes: 3, startAtMs: again });
    assert.equal(summary.attempt, 2);
    assert.ok(fs.existsSync(evidence(`${attemptDir(three, 2)}/verdict.json`)));
  });
});

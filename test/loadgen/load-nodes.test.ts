// One repeat from three load nodes (issue 37), with real generators against the calibration server:
// each node sends its share of one schedule from one start instant, under its own run tag; each
// stream carries its share and is judged on it; the merge is the whole schedule, by intended time,
// and its percentiles are those of every sample pooled, exactly. A node killed mid-repeat leaves a
// merge that is refused, naming the node. A spike (issue 35) splits and merges the same way, on its
// shaped times. Behaviour and counts only, never timing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { CalibrationServer } from '../../lib/loadgen/calibration-server';
import { mergeNodeStreams } from '../../lib/loadgen/merge-streams';
import { arrivalSchedule, type Arrivals } from '../../lib/protocol/arrivals';
import { runLoad } from '../../lib/loadgen/run-load';
import { readSampleFile } from '../../lib/loadgen/sample-reader';
import { nodeRunTag, sharesOf } from '../../lib/protocol/node-share';
import { NodeMergeRefusal } from '../../lib/protocol/node-merge';
import { percentile } from '../../lib/protocol/percentile';
import { INGEST, STATUS_DROPPED } from '../../lib/protocol/sample-row';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-nodes-test-'));
const customers = ['cus_1', 'cus_2', 'cus_3'];
let server: CalibrationServer;
let url = '';
before(async () => {
  server = new CalibrationServer({ apiKey: 'k', customers });
  url = await server.start();
});
after(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const RATE = 600; // events/s, batch 2: 300 requests/s in all, 100 per node
const SECONDS = 3;
const PROBE = 3;

async function threeNodes(name: string, kill?: { node: number }, arrivals?: Arrivals) {
  const tag = `nodes-${name}`;
  // Lead time: every node is warm well before it (the child's warm-up is off here).
  const startAtMs = Date.now() + 2500;
  const runs = sharesOf(3).map((share) => {
    // The node to kill is killed once it reports its first second of load: mid-repeat, by what it did.
    let pid = 0;
    const victim = kill?.node === share.node;
    return runLoad(
      { url, apiKey: 'k', rate: RATE, batch: 2, seconds: SECONDS, probeRate: PROBE, customers, runTag: nodeRunTag(tag, share), out: path.join(dir, `${name}-n${share.node}.csv.gz`), warmupSeconds: 0, share, startAtMs, arrivals },
      victim ? (p) => p.second === 1 && process.kill(pid, 'SIGKILL') : undefined,
      { preflight: false, onSpawn: (p) => (pid = p) },
    ).then(
      (r) => r.stream,
      () => path.join(dir, `${name}-n${share.node}.csv.gz`),
    );
  });
  return { tag, files: await Promise.all(runs) };
}

test('three nodes split one schedule: each stream is its share, the merge is the whole schedule judged as one, percentiles pooled exactly', async () => {
  server.configure({ serviceMs: 1 });
  const { tag, files } = await threeNodes('whole');
  const scheduleRate = RATE / 2;
  const all = Array.from({ length: scheduleRate * SECONDS }, (_, k) => Math.floor((k * 1e6) / scheduleRate));
  const pooled: number[] = [];
  for (const [i, file] of files.entries()) {
    const c = await readSampleFile(file);
    assert.deepEqual(c.plan?.share, { node: i, nodes: 3 }, `node ${i}'s plan carries its share`);
    assert.equal(c.plan?.run_tag, `${tag}.n${i}`);
    const ingest: number[] = [];
    for (let r = 0; r < c.length; r++) {
      if (c.scenario[r] !== INGEST) continue;
      ingest.push(c.intended[r]);
      if (c.status[r] !== STATUS_DROPPED) pooled.push(c.done[r] - c.sent[r]);
    }
    ingest.sort((a, b) => a - b);
    // node i sends requests i, i+3, i+6, ... of the one schedule, at that schedule's own times
    assert.deepEqual(ingest, all.filter((_, k) => k % 3 === i));
    // `rig analyze` of one node's stream: judged on its share (every request of the share delivered)
    const { analysis } = await analyzeFile(file);
    assert.equal(analysis.ingest.delivery?.scheduled, all.length / 3);
    // its own run tag on the server: every event of its share, no idempotency key twice
    const t = server.tally(`${tag}.n${i}`);
    assert.equal(t.duplicates, 0);
    assert.equal(t.rows, analysis.ingest.events_claimed);
  }
  const merged = await mergeNodeStreams(files, path.join(dir, 'whole-merged.csv.gz'), tag);
  assert.equal(merged.plan.nodes, 3);
  const m = await readSampleFile(merged.out);
  assert.equal(m.plan?.share, undefined);
  assert.equal(m.plan?.nodes, 3);
  assert.equal(m.plan?.run_tag, tag);
  // merged by intended time: non-decreasing, and the ingest rows are exactly the whole schedule
  const intended = [...m.intended.subarray(0, m.length)];
  for (let r = 1; r < intended.length; r++) assert.ok(intended[r] >= intended[r - 1], `row ${r} is before row ${r - 1}`);
  const mergedIngest: number[] = [];
  for (let r = 0; r < m.length; r++) if (m.scenario[r] === INGEST) mergedIngest.push(m.intended[r]);
  assert.deepEqual(mergedIngest, all);
  // judged exactly as one node's stream: the whole schedule delivered
  const { analysis } = await analyzeFile(merged.out);
  assert.equal(analysis.ingest.delivery?.scheduled, all.length);
  assert.equal(analysis.ingest.delivery?.delivered, all.length);
  assert.equal(analysis.probe.reduce((s, p) => s + p.offered, 0), PROBE * SECONDS);
  // MUST SHOW: p50, p99, p999 of the merged histogram = of the merged stream = of every raw sample pooled
  assert.equal(merged.latency.total, pooled.length);
  for (const p of [50, 99, 99.9]) {
    const raw = percentile(pooled, p);
    assert.equal(merged.latency.percentile(p), raw, `p${p} of the merged histogram`);
  }
  assert.equal(analysis.ingest.p50_us, percentile(pooled, 50));
  assert.equal(analysis.ingest.p99_us, percentile(pooled, 99));
  // each node's own analysis rides along for its own instrument gate
  assert.deepEqual(merged.nodes.map((n) => n.analysis.plan?.share?.node), [0, 1, 2]);
  // `rig analyze` of the three streams: each checked on its share, merged, judged as one, a row per node
  const cli = (args: string[]) => spawnSync(process.execPath, [path.join(__dirname, '..', '..', 'bin', 'rig.cjs'), 'analyze', ...args], { encoding: 'utf8' });
  const ran = cli([...files, '--p99-limit-ms', '1000', '--json']);
  assert.ok([3, 4, 99].includes(ran.status ?? -1), `exit ${ran.status}: ${ran.stderr}`); // never PASS without --reconcile
  const json = JSON.parse(ran.stdout) as { plan: { nodes: number }; p99_ms: number; delivery: { scheduled: number }; nodes: Array<{ node: number; run_tag: string }> };
  assert.equal(json.plan.nodes, 3);
  assert.equal(json.delivery.scheduled, all.length);
  assert.equal(json.p99_ms, percentile(pooled, 99) / 1000);
  assert.deepEqual(json.nodes.map((n) => n.run_tag), [0, 1, 2].map((i) => `${tag}.n${i}`));
  const swapped = cli([files[1], files[0], files[2], '--p99-limit-ms', '1000']);
  assert.equal(swapped.status, 2, swapped.stderr);
  assert.match(swapped.stderr, /node 0's stream is node 1's of 3, not node 0's of 3/);
});

test('a node killed mid-repeat: the merge is refused naming it, never a merge of the survivors', async () => {
  server.configure({ serviceMs: 1 });
  const { tag, files } = await threeNodes('killed', { node: 1 });
  await assert.rejects(mergeNodeStreams(files, path.join(dir, 'killed-merged.csv.gz'), tag), (err: unknown) => {
    assert.ok(err instanceof NodeMergeRefusal);
    assert.equal(err.node, 1);
    assert.match(err.message, /node 1's stream cannot be merged.*never counted/s);
    return true;
  });
  assert.equal(fs.existsSync(path.join(dir, 'killed-merged.csv.gz')), false, 'no merged stream is left to be judged');
});

test('a spike split over three nodes (issues 35 and 37): each node sends its share of the shaped schedule, the merge is the spike exactly', async () => {
  server.configure({ serviceMs: 1 });
  const spike: Arrivals = { shape: 'spike', peak: 2 * RATE, at: 1, for: 1 };
  const { tag, files } = await threeNodes('spike', undefined, spike);
  const s = arrivalSchedule({ rate: RATE, batch: 2, seconds: SECONDS, arrivals: spike });
  const all = Array.from({ length: s.count }, (_, k) => s.at(k));
  for (const [i, file] of files.entries()) {
    const c = await readSampleFile(file);
    assert.deepEqual([c.plan?.arrivals, c.plan?.share], [spike, { node: i, nodes: 3 }], `node ${i}'s plan carries the spike and its share`);
    const ingest: number[] = [];
    for (let r = 0; r < c.length; r++) if (c.scenario[r] === INGEST) ingest.push(c.intended[r]);
    ingest.sort((a, b) => a - b);
    assert.deepEqual(ingest, all.filter((_, k) => k % 3 === i), `node ${i} sends the spike's requests i, i+3, ... at their shaped times`);
    const { analysis } = await analyzeFile(file);
    assert.equal(analysis.ingest.delivery?.scheduled, ingest.length);
  }
  const merged = await mergeNodeStreams(files, path.join(dir, 'spike-merged.csv.gz'), tag);
  assert.deepEqual([merged.plan.arrivals, merged.plan.nodes], [spike, 3]);
  const m = await readSampleFile(merged.out);
  const mergedIngest: number[] = [];
  for (let r = 0; r < m.length; r++) if (m.scenario[r] === INGEST) mergedIngest.push(m.intended[r]);
  assert.deepEqual(mergedIngest, all, 'the merge is the shaped schedule, each request once');
  const { analysis } = await analyzeFile(merged.out);
  assert.equal(analysis.ingest.delivery?.scheduled, all.length);
  assert.equal(analysis.ingest.delivery?.delivered, all.length);
});

// test-mode: unit
// Arrivals (issue 35) split over load nodes (issue 37), as pure logic: a shaped schedule's requests
// shared out by k mod N merge back into exactly the shaped schedule; the `#plan` record of version 2
// carries arrivals and/or exactly one of share and nodes (version 1 stays today's for the constant
// single-node stream); the reader holds a node's rows to the shaped schedule, then to its share; the
// merge refuses nodes on different arrivals and counts each node's share of the shaped count.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { arrivalSchedule, type Arrivals } from '../../lib/protocol/arrivals';
import { mergedPlan, NodeMergeRefusal, shareScheduled, type NodeStreamFacts } from '../../lib/protocol/node-merge';
import { requestOf, shareCount, sharesOf } from '../../lib/protocol/node-share';
import { SampleColumns, SampleFormatError } from '../../lib/protocol/sample-row';
import { formatPlanRecord, parsePlanRecord, PlanError, refuseOffSchedule, scheduledPerSecond, type StreamPlan } from '../../lib/protocol/stream-plan';

const SPIKE: Arrivals = { shape: 'spike', peak: 5000, at: 2, for: 3 };
const plan = (extra: Partial<StreamPlan> = {}): StreamPlan => ({ mode: 'open', rate: 1000, batch: 10, seconds: 8, probe_rate: 3, run_tag: 't', cut_short: false, cut_reason: null, source: 'stream', ...extra });
const body = (rec: string) => rec.slice('#plan '.length, -1);

test('a spike split over 3 nodes (node i sends the shaped requests i, i+3, ...) merges back to exactly the spike\'s intended times', () => {
  for (const arrivals of [SPIKE, { shape: 'poisson', seed: 11 } as Arrivals]) {
    const s = arrivalSchedule({ rate: 1000, batch: 10, seconds: 8, arrivals });
    const merged: number[] = [];
    for (const share of sharesOf(3)) {
      // The generator's rule: node m-th request is the schedule's requestOf(share, m), shareCount of them.
      const mine = Array.from({ length: shareCount(share, s.count) }, (_, m) => s.at(requestOf(share, m)));
      for (let m = 1; m < mine.length; m++) assert.ok(mine[m] > mine[m - 1], 'each node sends in time order');
      merged.push(...mine);
    }
    merged.sort((a, b) => a - b);
    assert.deepEqual(merged, Array.from({ length: s.count }, (_, k) => s.at(k)), `${arrivals.shape}: the merge is the whole schedule, each time once`);
    // Delivery per second: the nodes' shares add up to the shaped schedule's, second by second.
    const whole = scheduledPerSecond(plan({ arrivals }));
    const parts = sharesOf(3).map((share) => scheduledPerSecond(plan({ arrivals, share })));
    for (let sec = 0; sec < whole.length; sec++) assert.equal(parts[0][sec] + parts[1][sec] + parts[2][sec], whole[sec]);
  }
  assert.deepEqual([...scheduledPerSecond(plan({ arrivals: SPIKE }))], [100, 100, 500, 500, 500, 100, 100, 100]);
});

test('the #plan record: version 1 for the constant single-node stream; version 2 with arrivals and/or one of share, nodes; others refused by name', () => {
  assert.equal(formatPlanRecord(plan()), '#plan {"v":1,"mode":"open","rate":1000,"batch":10,"seconds":8,"probe_rate":3,"run_tag":"t"}\n');
  const both = formatPlanRecord(plan({ arrivals: SPIKE, share: { node: 1, nodes: 3 } }));
  assert.equal(both, '#plan {"v":2,"mode":"open","rate":1000,"batch":10,"seconds":8,"probe_rate":3,"run_tag":"t","arrivals":{"shape":"spike","peak":5000,"at":2,"for":3},"share":{"node":1,"nodes":3}}\n');
  const back = parsePlanRecord(body(both));
  assert.deepEqual([back.arrivals, back.share, back.nodes], [SPIKE, { node: 1, nodes: 3 }, undefined]);
  const m = parsePlanRecord(body(formatPlanRecord(plan({ arrivals: SPIKE, nodes: 3 }))));
  assert.deepEqual([m.arrivals, m.share, m.nodes], [SPIKE, undefined, 3]);
  const refused = (json: string, re: RegExp) => assert.throws(() => parsePlanRecord(json), (e: unknown) => e instanceof PlanError && re.test(e.message), json);
  const base = '"mode":"open","rate":1000,"batch":10,"seconds":8,"probe_rate":3,"run_tag":"t"';
  refused(`{"v":2,${base},"share":{"node":0,"nodes":3},"nodes":3}`, /exactly one of "share" .* or "nodes" .*not both/);
  refused(`{"v":2,${base},"arrivals":${JSON.stringify(SPIKE)},"share":{"node":0,"nodes":3},"nodes":3}`, /not both/);
  refused(`{"v":2,${base}}`, /must carry "arrivals" .*and\/or exactly one of "share".*or "nodes".*carries none/);
  refused(`{"v":1,${base},"share":{"node":0,"nodes":3}}`, /version 1 carries no arrivals, share or nodes/);
  refused(`{"v":1,${base},"nodes":3}`, /version 1 carries no arrivals, share or nodes/);
  refused(`{"v":2,${base},"arrivals":{"shape":"spike","peak":5000,"at":9,"for":3},"share":{"node":0,"nodes":3}}`, /arrivals\.at must be a time within the repeat/);
  refused(`{"v":2,${base},"arrivals":${JSON.stringify(SPIKE)},"share":{"node":3,"nodes":3}}`, /share: node must be a whole number within 0\.\.2, got 3/);
});

test("a shaped node's stream: a row is found on the shaped schedule, then held to the node's share", () => {
  const s = arrivalSchedule({ rate: 1000, batch: 10, seconds: 8, arrivals: SPIKE });
  const p = plan({ arrivals: SPIKE, share: { node: 1, nodes: 3 }, probe_rate: 0 });
  const row = (k: number) => ({ scenario: 'ingest' as const, intended_us: s.at(k), sent_us: s.at(k), done_us: s.at(k) + 5, status: 201, events: 10, quantity: 30 });
  const cols = new SampleColumns();
  cols.firstRowLine = 3;
  // Requests in the spike (k = 250 is at 2.1 s, within it) and outside it, all node 1's.
  for (const k of [1, 4, 199, 202, 250, 1000]) cols.push(row(k));
  assert.doesNotThrow(() => refuseOffSchedule(cols, p));
  const other = new SampleColumns();
  other.firstRowLine = 3;
  other.push(row(1));
  other.push(row(251));
  assert.throws(
    () => refuseOffSchedule(other, p),
    (e: unknown) => e instanceof SampleFormatError && e.line === 4 && /request 251 of the schedule is node 2's, and this stream is node 1's of 3/.test(e.reason),
  );
  // A time of the constant schedule the spike does not hold (2.001 s) is off the shaped schedule, not another node's.
  const off = new SampleColumns();
  off.push({ ...row(1), intended_us: 2_001_000, sent_us: 2_001_000, done_us: 2_001_005 });
  assert.throws(() => refuseOffSchedule(off, p), /not on the plan's spike schedule/);
});

test('the merge of shaped nodes: each holds its share of the shaped count; the merged plan carries the arrivals and the node count; other arrivals refused', () => {
  const s = arrivalSchedule({ rate: 1000, batch: 10, seconds: 8, arrivals: SPIKE });
  const facts = (arrivals: (i: number) => Arrivals = () => SPIKE): NodeStreamFacts[] =>
    sharesOf(3).map((share, i) => {
      const p = plan({ arrivals: arrivals(i), share, run_tag: `t.n${i}` });
      return { plan: p, ingestRows: shareScheduled(p).ingest, probeRows: shareScheduled(p).probe };
    });
  const counts = facts().map((f) => f.ingestRows);
  assert.deepEqual(counts, sharesOf(3).map((share) => shareCount(share, s.count)));
  assert.equal(counts[0] + counts[1] + counts[2], s.count);
  const m = mergedPlan(facts(), 't');
  assert.deepEqual([m.arrivals, m.nodes, m.share], [SPIKE, 3, undefined]);
  assert.match(formatPlanRecord(m), /^#plan \{"v":2,.*"arrivals":\{"shape":"spike".*\},"nodes":3\}\n$/);
  assert.throws(
    () => mergedPlan(facts((i) => (i === 2 ? { ...SPIKE, peak: 4000 } : SPIKE)), 't'),
    (e: unknown) => e instanceof NodeMergeRefusal && e.node === 2 && /node 2's arrivals .* differ from node 0's/.test(e.message),
  );
  assert.throws(() => mergedPlan(facts((i) => (i === 1 ? { shape: 'poisson', seed: 1 } : SPIKE)), 't'), /node 1's arrivals/);
});

// test-mode: unit
// Several load nodes (issue 37), as pure logic: `load.nodes` in the spec (absent: the spec resolves as
// before), the split of one schedule over N nodes (a filter over the request index), the share in
// the stream's plan and the reader's check of it, the merge's rules (all nodes, each complete), and
// the exact histogram merge: the merged p50/p99/p999 are those of every raw sample pooled.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ExactHistogram } from '../../lib/protocol/exact-histogram';
import { loadNodesOf, loadProblems } from '../../lib/protocol/load-nodes';
import { mergedPlan, NodeMergeRefusal, type NodeStreamFacts } from '../../lib/protocol/node-merge';
import { nodeRunTag, owns, requestOf, shareCount, sharesOf } from '../../lib/protocol/node-share';
import { percentile } from '../../lib/protocol/percentile';
import { SampleColumns, SampleFormatError } from '../../lib/protocol/sample-row';
import { parseCampaignSpec, PROFILES, SpecError, type CampaignSpecInput } from '../../lib/protocol/spec';
import { countBefore, formatPlanRecord, parsePlanRecord, PlanError, refuseOffSchedule, scheduledPerSecond, type StreamPlan } from '../../lib/protocol/stream-plan';

const rehearsal = PROFILES.rehearsal;
const refusal = (input: CampaignSpecInput): string => {
  try {
    parseCampaignSpec(input);
  } catch (err) {
    assert.ok(err instanceof SpecError);
    return err.message;
  }
  assert.fail('the spec was accepted');
};

test('load.nodes: absent, the resolved spec has no load block (as before); given, validated by field', () => {
  const plain = parseCampaignSpec(rehearsal);
  assert.equal('load' in plain, false);
  assert.equal(plain.sustained!.configurations.some((c) => 'load' in c), false);
  assert.equal(loadNodesOf(plain, plain.sustained!.configurations[0]), 1);
  assert.equal(loadNodesOf({ load: { nodes: 3 } }, {}), 3);
  assert.equal(loadNodesOf({ load: { nodes: 3 } }, { load: { nodes: 2 } }), 2, "the configuration's own wins");
  assert.doesNotThrow(() => parseCampaignSpec({ ...rehearsal, load: { nodes: 1 } }));
  // Without the fan-out, more than one node is refused, never run from one silently; with it (local), run.
  const rules = (s: Parameters<typeof loadProblems>[0]) => loadProblems(s, true).map((p) => `${p.path.join('.')}: ${p.message}`).join('\n');
  assert.match(loadProblems({ ...parseCampaignSpec(rehearsal), load: { nodes: 3 } }, false).map((p) => p.message).join('\n'), /load\.nodes > 1 is not run by the campaign yet/);
  assert.equal(parseCampaignSpec({ ...rehearsal, load: { nodes: 3 } }).load?.nodes, 3, 'the rehearsal split three ways runs on target local');
  assert.match(rules({ target: 'local', load: { nodes: 2 }, ladder: { rates: [100], batch: 1 } }), /^load\.nodes: load\.nodes > 1 splits sustained repeats only/);
  assert.match(rules({ ...parseCampaignSpec(rehearsal), load: { nodes: 2 }, variants: {} }), /^load\.nodes: load\.nodes > 1 with "variants" is not run yet/);
  assert.equal(rules({ ...parseCampaignSpec(rehearsal), load: { nodes: 3 } }), '', 'the rehearsal split three ways is a valid local spec');
  assert.match(refusal({ ...rehearsal, load: { nodes: 0 } }), /load\.nodes: load\.nodes must be at least 1/);
  assert.match(refusal({ ...rehearsal, load: { nodes: 65 } }), /load\.nodes: load\.nodes must be at most 64/);
  assert.match(refusal({ ...rehearsal, load: { nodes: 1.5 } }), /load\.nodes: load\.nodes must be a whole number/);
  assert.match(refusal({ ...rehearsal, load: {} } as CampaignSpecInput), /load\.nodes: load\.nodes is required/);
  assert.match(refusal({ ...rehearsal, load: { nodes: 2, extra: 1 } } as CampaignSpecInput), /load\.extra: unknown field/);
  const existing = parseCampaignSpec(JSON.parse(fs.readFileSync(path.join(__dirname, '../../examples/existing.json'), 'utf8')) as CampaignSpecInput);
  assert.match(rules({ ...existing, load: { nodes: 2 } }), /^load\.nodes: load\.nodes > 1 runs on targets "local" and "aws" \(target "existing" has one load host\)/);
  // An AWS rig launches its load nodes (lib/targets/aws/load-nodes.ts): nothing refuses the target there.
  const aws = JSON.parse(fs.readFileSync(path.join(__dirname, '../../examples/aws.json'), 'utf8')) as CampaignSpecInput;
  assert.equal(parseCampaignSpec({ ...aws, load: { nodes: 2 } }).load?.nodes, 2, 'examples/aws.json split two ways is a valid spec');
  assert.equal(rules({ ...parseCampaignSpec(aws), load: { nodes: 2 } }), '');
  const huge = { target: 'local', load: { nodes: 2 }, sustained: { configurations: [{ name: 'x', eventsPerSecond: 300_000, batch: 1 }] } };
  assert.match(rules(huge), /^sustained\.configurations\.0\.load\.nodes: configuration "x" asks each of its 2 load nodes for 150000 requests\/s.*give load\.nodes >= 3/);
  const tooFine = { target: 'local', load: { nodes: 20 }, sustained: { configurations: [{ name: 'y', eventsPerSecond: 2_000_000, batch: 1 }] } };
  assert.match(rules(tooFine), /^sustained\.configurations\.0\.eventsPerSecond: .* at most 1,000,000: raise its batch/);
});

test('the split is a filter over the request index: N shares cover every request exactly once', () => {
  for (const nodes of [1, 2, 3, 7]) {
    for (const total of [0, 1, 2, 3, 10, 101]) {
      const seen = new Array<number>(total).fill(0);
      for (const s of sharesOf(nodes)) {
        let m = 0;
        for (; requestOf(s, m) < total; m++) {
          assert.ok(owns(s, requestOf(s, m)));
          seen[requestOf(s, m)]++;
        }
        assert.equal(shareCount(s, total), m, `share ${s.node}/${nodes} of ${total}`);
      }
      assert.ok(seen.every((x) => x === 1));
    }
  }
  assert.equal(nodeRunTag('abc.r1.a1', { node: 0, nodes: 1 }), 'abc.r1.a1', 'one node: the repeat\'s own tag');
  assert.deepEqual(sharesOf(3).map((s) => nodeRunTag('abc.r1.a1', s)), ['abc.r1.a1.n0', 'abc.r1.a1.n1', 'abc.r1.a1.n2']);
});

const plan = (extra: Partial<StreamPlan> = {}): StreamPlan => ({ mode: 'open', rate: 300, batch: 1, seconds: 3, probe_rate: 3, run_tag: 't', cut_short: false, cut_reason: null, source: 'stream', ...extra });

test("one node's #plan record is byte for byte version 1; a share or a merge is version 2, read back exactly", () => {
  assert.equal(formatPlanRecord(plan()), '#plan {"v":1,"mode":"open","rate":300,"batch":1,"seconds":3,"probe_rate":3,"run_tag":"t"}\n');
  assert.equal(formatPlanRecord(plan({ share: { node: 0, nodes: 1 } })), formatPlanRecord(plan()), 'a share of one is the whole schedule');
  const rec = formatPlanRecord(plan({ share: { node: 2, nodes: 3 } }));
  assert.equal(rec, '#plan {"v":2,"mode":"open","rate":300,"batch":1,"seconds":3,"probe_rate":3,"run_tag":"t","share":{"node":2,"nodes":3}}\n');
  assert.deepEqual(parsePlanRecord(rec.slice(6, -1)).share, { node: 2, nodes: 3 });
  assert.equal(parsePlanRecord(formatPlanRecord(plan({ nodes: 3 })).slice(6, -1)).nodes, 3);
  assert.throws(() => parsePlanRecord('{"v":2,"mode":"open","rate":300,"batch":1,"seconds":3,"probe_rate":3,"run_tag":"t"}'), /exactly one of "share".*or "nodes"/);
  assert.throws(() => parsePlanRecord('{"v":2,"mode":"open","rate":300,"batch":1,"seconds":3,"probe_rate":3,"run_tag":"t","share":{"node":3,"nodes":3}}'), (e: unknown) => e instanceof PlanError && /node must be a whole number within 0\.\.2, got 3/.test(e.message));
  // a node offers rate / N: the per-generator bound applies to its share
  assert.doesNotThrow(() => parsePlanRecord(formatPlanRecord(plan({ rate: 250_000, share: { node: 0, nodes: 3 } })).slice(6, -1)));
  assert.throws(() => parsePlanRecord(formatPlanRecord(plan({ rate: 250_000 })).slice(6, -1)), /at most 100,000 requests\/s/);
});

test("a node's stream is held to its share: its schedule per second, and a row of another node's refused by line", () => {
  const whole = scheduledPerSecond(plan());
  const parts = sharesOf(3).map((share) => scheduledPerSecond(plan({ share })));
  for (let s = 0; s < whole.length; s++) assert.equal(parts[0][s] + parts[1][s] + parts[2][s], whole[s]);
  assert.equal(parts[1].reduce((a, b) => a + b, 0), shareCount({ node: 1, nodes: 3 }, countBefore(300, 3e6)));
  const cols = new SampleColumns();
  cols.firstRowLine = 3;
  const at = (k: number) => Math.floor((k * 1e6) / 300);
  cols.push({ scenario: 'ingest', intended_us: at(1), sent_us: at(1), done_us: at(1) + 5, status: 201, events: 1, quantity: 3 });
  cols.push({ scenario: 'ingest', intended_us: at(4), sent_us: at(4), done_us: at(4) + 5, status: 201, events: 1, quantity: 3 });
  assert.doesNotThrow(() => refuseOffSchedule(cols, plan({ share: { node: 1, nodes: 3 } })));
  cols.push({ scenario: 'ingest', intended_us: at(5), sent_us: at(5), done_us: at(5) + 5, status: 201, events: 1, quantity: 3 });
  assert.throws(
    () => refuseOffSchedule(cols, plan({ share: { node: 1, nodes: 3 } })),
    (e: unknown) => e instanceof SampleFormatError && e.line === 5 && /request 5 of the schedule is node 2's, and this stream is node 1's of 3: a row outside its share/.test(e.reason),
  );
  // the probe is split the same way (probe request k to node k mod N)
  const probe = new SampleColumns();
  probe.push({ scenario: 'probe:invoices', intended_us: Math.floor(1e6 / 3), sent_us: 333_400, done_us: 333_500, status: 200, events: 0, quantity: 0 });
  assert.doesNotThrow(() => refuseOffSchedule(probe, plan({ share: { node: 1, nodes: 3 } })));
  assert.throws(() => refuseOffSchedule(probe, plan({ share: { node: 0, nodes: 3 } })), /probe request 1 of the schedule is node 1's/);
});

test('the merge takes all nodes, each complete and on its own share; a node lost is named, never merged around', () => {
  const facts = (over: Partial<NodeStreamFacts>[] = []): NodeStreamFacts[] =>
    sharesOf(3).map((share, i) => ({ plan: plan({ share, run_tag: `t.n${i}` }), ingestRows: 300, probeRows: 3, ...over[i] }));
  const m = mergedPlan(facts(), 't');
  assert.deepEqual([m.nodes, m.run_tag, m.share, m.rate], [3, 't', undefined, 300]);
  const refused = (f: NodeStreamFacts[], node: number, re: RegExp) =>
    assert.throws(() => mergedPlan(f, 't'), (e: unknown) => e instanceof NodeMergeRefusal && e.node === node && re.test(e.message));
  refused(facts([{}, { plan: plan({ share: { node: 1, nodes: 3 }, cut_short: true, cut_reason: 'parent process gone' }) }]), 1, /node 1 was lost mid-repeat.*parent process gone.*runs again on all 3 nodes.*never counted/);
  refused(facts([{}, {}, { ingestRows: 299 }]), 2, /node 2's stream holds 299 ingest rows; its share of the schedule is 300/);
  refused(facts([{}, { plan: plan({ share: { node: 2, nodes: 3 } }) }]), 1, /node 1's stream is node 2's of 3, not node 1's of 3/);
  refused(facts([{}, { plan: plan({ rate: 600, share: { node: 1, nodes: 3 } }) }]), 1, /differs from node 0's.*one schedule, split/);
  assert.throws(() => mergedPlan(facts().slice(0, 1), 't'), /at least 2 load nodes/);
});

test('MUST SHOW: the merged histogram\'s p50, p99, p999 are exactly the percentiles of every raw sample pooled', () => {
  // Three nodes of unequal size and unequal latency (one slow node), seeded so the test is the same every run.
  let x = 12345;
  const rnd = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const nodes = [
    Array.from({ length: 10_007 }, () => Math.floor(800 + rnd() * 4000)),
    Array.from({ length: 9_001 }, () => Math.floor(900 + rnd() * 3000)),
    Array.from({ length: 3_333 }, () => Math.floor(rnd() < 0.05 ? 50_000 + rnd() * 200_000 : 2000 + rnd() * 9000)),
  ];
  const pooled = nodes.flat();
  const merged = new ExactHistogram();
  for (const samples of nodes) {
    const h = new ExactHistogram();
    for (const v of samples) h.record(v);
    merged.add(ExactHistogram.fromBuckets(h.buckets())); // through its data form, as evidence carries it
  }
  assert.equal(merged.total, pooled.length);
  for (const p of [0, 50, 90, 99, 99.9, 100]) assert.equal(merged.percentile(p), percentile(pooled, p), `p${p}`);
  // what the merge is not: the mean of the nodes' p99s
  const meanOfP99s = nodes.reduce((s, n) => s + percentile(n, 99), 0) / nodes.length;
  assert.notEqual(meanOfP99s, percentile(pooled, 99));
});

// The rules of merging N load nodes' streams into one repeat's stream (issue 37). Pure: the reading and
// writing are lib/loadgen/merge-streams.ts.
//
// A merge is only ever of ALL the nodes of the repeat, each stream complete: node i's plan is the
// repeat's schedule with share {node: i, nodes: N}, its writer closed it (`#end`, not cut short), and
// it holds exactly one row for each request of its share (every request whose time came is a row,
// sent or dropped). A node lost mid-repeat (killed, its worker gone, its stream cut short or missing)
// makes the repeat INTERRUPTED: it is run again on all nodes, and a merge of the survivors is never
// counted (NodeMergeRefusal says which node and why).
import { shareCount } from './node-share';
import { countBefore, requestRate, shapedSchedule, windowUs, type StreamPlan } from './stream-plan';

export class NodeMergeRefusal extends Error {
  constructor(
    readonly node: number | null,
    reason: string,
  ) {
    super(reason);
    this.name = 'NodeMergeRefusal';
  }
}

/** What one node's stream holds, as the merge sees it after reading it strictly. */
export interface NodeStreamFacts {
  /** The stream's own plan (null: a stream without one, never a node's). */
  plan: StreamPlan | null;
  ingestRows: number;
  probeRows: number;
}

/**
 * Requests of node `share.node`'s share that the plan schedules (ingest, probe): of the shaped
 * schedule's count when the plan carries arrivals (issue 35), else of the constant one's.
 */
export function shareScheduled(p: StreamPlan): { ingest: number; probe: number } {
  const share = p.share ?? { node: 0, nodes: 1 };
  const end = windowUs(p);
  const rr = requestRate(p);
  const shaped = shapedSchedule(p);
  return {
    ingest: shaped ? shareCount(share, shaped.count) : rr > 0 ? shareCount(share, countBefore(rr, end)) : 0,
    probe: p.probe_rate ? shareCount(share, countBefore(p.probe_rate, end)) : 0,
  };
}

/**
 * The merged stream's plan, from the N nodes' (in node order), or a NodeMergeRefusal naming the first
 * node that makes a merge wrong. `runTag` is the repeat's own tag (each node's is `<tag>.n<i>`).
 */
export function mergedPlan(nodes: readonly NodeStreamFacts[], runTag: string): StreamPlan {
  const n = nodes.length;
  if (n < 2) throw new NodeMergeRefusal(null, `a merge needs at least 2 load nodes' streams, got ${n}`);
  let first: StreamPlan | null = null;
  nodes.forEach((f, i) => {
    const p = f.plan;
    if (!p) throw new NodeMergeRefusal(i, `node ${i}'s stream carries no #plan: not a load node's stream`);
    if (!p.share || p.share.node !== i || p.share.nodes !== n) {
      throw new NodeMergeRefusal(i, `node ${i}'s stream is ${p.share ? `node ${p.share.node}'s of ${p.share.nodes}` : 'a whole schedule'}, not node ${i}'s of ${n}`);
    }
    if (p.cut_short) throw new NodeMergeRefusal(i, `node ${i} was lost mid-repeat (its stream is cut short: ${p.cut_reason ?? 'no reason given'}): the repeat is interrupted and runs again on all ${n} nodes; a merge of the others is never counted`);
    first ??= p;
    const same = p.mode === first.mode && p.rate === first.rate && p.batch === first.batch && p.seconds === first.seconds && p.probe_rate === first.probe_rate;
    if (!same) throw new NodeMergeRefusal(i, `node ${i}'s plan (rate ${p.rate}, batch ${p.batch}, ${p.seconds} s, probe ${p.probe_rate}) differs from node 0's (rate ${first.rate}, batch ${first.batch}, ${first.seconds} s, probe ${first.probe_rate}): one schedule, split`);
    // The same shape too (issue 35): a node on another seed or trace holds another schedule's times.
    if (!sameArrivals(p, first)) throw new NodeMergeRefusal(i, `node ${i}'s arrivals (${arrivalsName(p)}) differ from node 0's (${arrivalsName(first)}): one schedule, split`);
    const want = shareScheduled(p);
    if (f.ingestRows !== want.ingest) throw new NodeMergeRefusal(i, `node ${i}'s stream holds ${f.ingestRows} ingest rows; its share of the schedule is ${want.ingest}: every request whose time came is a row`);
    if (f.probeRows !== want.probe) throw new NodeMergeRefusal(i, `node ${i}'s stream holds ${f.probeRows} probe rows; its share of the probe schedule is ${want.probe}`);
  });
  const p = first as unknown as StreamPlan;
  // The merged plan is the whole schedule: its arrivals (when shaped) and the node count.
  return { mode: p.mode, rate: p.rate, batch: p.batch, seconds: p.seconds, probe_rate: p.probe_rate, run_tag: runTag, cut_short: false, cut_reason: null, source: 'stream', ...(p.arrivals ? { arrivals: p.arrivals } : {}), nodes: n };
}

function sameArrivals(a: StreamPlan, b: StreamPlan): boolean {
  return JSON.stringify(a.arrivals ?? null) === JSON.stringify(b.arrivals ?? null);
}

function arrivalsName(p: StreamPlan): string {
  const a = p.arrivals;
  if (!a) return 'constant';
  return a.shape === 'trace' ? `trace of ${a.gaps_us.length} requests at speed ${a.speed}` : JSON.stringify(a);
}

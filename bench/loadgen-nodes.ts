// The load-nodes part of `npm run bench:loadgen` (issue 37; TOOLS=nodes, NODES=3): at each offered
// rate, one schedule sent from ONE generator, then the same schedule split over NODES generators
// (node i sends requests i, i+N, ...; one start instant), their streams merged by intended time
// (lib/loadgen/merge-streams.ts) and analysed as one. Per row: the merged delivery, drops, schedule
// lag, latency, and each node's CPU per request beside the one node's. On a 2-core host the nodes
// share the CPU (and the sink's): this measures the split's overhead and correctness, not scale.
// Knob: LEAD_MS (default 10000), the lead time from the split's start to its common instant.
// The merge's check is printed too: the merged p99 equals the p99 of every node's samples pooled.
import os from 'node:os';
import path from 'node:path';
import { analyzeFile } from '../lib/loadgen/analyze-file';
import { mergeNodeStreams } from '../lib/loadgen/merge-streams';
import { runLoad } from '../lib/loadgen/run-load';
import { nodeRunTag, sharesOf } from '../lib/protocol/node-share';

const f2 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(2));
const ms = (us: number | null) => (us === null ? null : us / 1000);

export async function nodesBench(url: string, dir: string, rates: readonly number[], seconds: number, nodes: number, batch: number): Promise<void> {
  console.log(`\nOne schedule from 1 generator, then split over ${nodes} (one start instant, ${seconds} s each; ${os.cpus().length} cores shared by every generator and the sink):\n`);
  console.log('| offered req/s | nodes | delivered req/s (merged) | delivered % | drops | schedule lag p99 ms (worst node) | latency p50 / p99 ms (merged) | CPU µs/request per node | merged p99 = pooled p99 | load avg (1 min) |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const rate of rates) {
    const common = { url, apiKey: 'bench', rate: rate * batch, batch, seconds, customers: ['cus_0001', 'cus_0002'] };
    const one = await runLoad({ ...common, out: path.join(dir, `nodes-1-${rate}.csv.gz`) }, undefined, { preflight: false });
    const a1 = (await analyzeFile(one.stream)).analysis.ingest;
    row(rate, 1, a1.delivered_rate_rps, a1.offered_rate_rps, a1.dropped, a1.schedule_lag_p99_us, a1.p50_us, a1.p99_us, f2(one.summary.cpu_us_per_request), '—');
    // Lead time: every child is spawned and warm (its 1-s loopback warm-up) before the instant; on a
    // loaded host that takes seconds (LEAD_MS, default 10 s). A node that comes late says so in its column.
    const startAtMs = Date.now() + Number(process.env.LEAD_MS ?? 10_000);
    const tag = `bench-nodes-${rate}`;
    const runs = await Promise.all(
      sharesOf(nodes).map((share) => runLoad({ ...common, runTag: nodeRunTag(tag, share), share, startAtMs, out: path.join(dir, `nodes-${nodes}-${rate}-n${share.node}.csv.gz`) }, undefined, { preflight: false })),
    );
    const merged = await mergeNodeStreams(
      runs.map((r) => r.stream),
      path.join(dir, `nodes-${nodes}-${rate}-merged.csv.gz`),
      tag,
    );
    const a = (await analyzeFile(merged.out)).analysis.ingest;
    const worstLag = Math.max(...merged.nodes.map((n) => n.analysis.ingest.schedule_lag_p99_us ?? 0));
    const cpu = runs.map((r) => f2(r.summary.cpu_us_per_request)).join(' / ');
    const same = merged.latency.percentile(99) === a.p99_us ? 'yes' : `NO (${merged.latency.percentile(99)} vs ${a.p99_us})`;
    const late = runs.map((r) => r.summary.start_late_ms ?? 0);
    row(rate, nodes, a.delivered_rate_rps, a.offered_rate_rps, a.dropped, worstLag, a.p50_us, a.p99_us, `${cpu}${Math.max(...late) > 0 ? ` (a node started ${Math.max(...late).toFixed(0)} ms late)` : ''}`, same);
  }
}

function row(rate: number, nodes: number, delivered: number, offered: number, drops: number, lagP99: number | null, p50: number | null, p99: number | null, cpu: string, same: string): void {
  console.log(
    `| ${rate.toLocaleString('en-US')} | ${nodes} | ${Math.round(delivered).toLocaleString('en-US')} | ${((delivered / offered) * 100).toFixed(2)} % | ${drops} | ${f2(ms(lagP99))} | ${f2(ms(p50))} / ${f2(ms(p99))} | ${cpu} | ${same} | ${os.loadavg()[0].toFixed(2)} |`,
  );
}

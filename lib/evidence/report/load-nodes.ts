// The load nodes on the page (issue 37): for each repeat sent from several load nodes, a row per node
// (its share offered, what it sent, its latency, its schedule lag, its clock, its own instrument
// gate: nodes.json) beside the merged row (the repeat's own stream, the one judged). A node's p99 is
// its own; the merged p99 is the pooled stream's, never an average of the nodes'. Pure.
import type { AttemptEvidence } from './load';
import { DASH, ms, num, type Table } from './cells';
import type { LoadNodeRowModel } from './model-types';

const msOf = (us: number | null | undefined) => (us === null || us === undefined ? null : Math.round(us / 10) / 100);

/** The rows of every attempt with nodes.json, node rows first, then its merged row. */
export function buildLoadNodes(attempts: readonly AttemptEvidence[]): LoadNodeRowModel[] {
  const out: LoadNodeRowModel[] = [];
  for (const a of attempts) {
    if (!a.nodes) continue;
    const repeat = `${a.config} r${a.repeat}${a.attempt > 1 ? ` (attempt ${a.attempt})` : ''}`;
    for (const n of a.nodes.rows) {
      out.push({
        repeat,
        node: `n${n.node}`,
        offered: n.offered,
        sent: n.sent,
        ok: n.ok,
        failed: n.failed,
        dropped: n.dropped,
        p50_ms: msOf(n.p50_us),
        p99_ms: msOf(n.p99_us),
        schedule_lag_p99_ms: msOf(n.schedule_lag_p99_us),
        clock_offset_ms: n.clock_offset_ms,
        instrument: n.instrument.passed === null ? 'not judged' : n.instrument.passed ? 'ok' : `FAIL: ${n.instrument.detail}`,
      });
    }
    const i = a.analysis?.ingest ?? null;
    out.push({
      repeat,
      node: 'merged',
      offered: i?.offered ?? null,
      sent: i?.sent ?? null,
      ok: i?.ok ?? null,
      failed: i?.failed ?? null,
      dropped: i?.dropped ?? null,
      p50_ms: msOf(i?.p50_us),
      p99_ms: msOf(i?.p99_us),
      schedule_lag_p99_ms: null,
      clock_offset_ms: null,
      instrument: a.interrupted ? `interrupted: ${a.interrupted}` : `judged as one stream (${a.nodes.nodes} nodes)`,
    });
  }
  return out;
}

export function loadNodesTable(rows: readonly LoadNodeRowModel[]): Table {
  return {
    header: ['repeat', 'load node', 'offered', 'sent / 2xx / failed / dropped', 'p50', 'p99', 'schedule lag p99', 'clock offset', 'instrument'],
    rows: rows.map((r) => ({
      cells: [
        r.repeat,
        r.node,
        num(r.offered, 0),
        `${num(r.sent, 0)} / ${num(r.ok, 0)} / ${num(r.failed, 0)} / ${num(r.dropped, 0)}`,
        ms(r.p50_ms),
        ms(r.p99_ms),
        ms(r.schedule_lag_p99_ms),
        r.clock_offset_ms === null ? DASH : `${num(r.clock_offset_ms, 2)} ms`,
        r.instrument,
      ],
      ...(r.node === 'merged' ? { cls: 'merged' } : {}),
    })),
  };
}

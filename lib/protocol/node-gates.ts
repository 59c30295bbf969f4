// Each load node's instrument, gated on its own (issue 37). The merged stream is judged exactly as one
// node's (evaluate.ts), but its schedule lag is the nodes' pooled: one node late on 3 % of its requests
// is 1 % of a three-node merge, and its p99 would pass. So each node's own stream is analysed on its
// share (lib/loadgen/merge-streams.ts) and its lateness judged by the same rule (gates.ts
// instrumentCheck: p99 and max schedule lag, late seconds, the probe's too). A node that was late fails
// the repeat's `instrument` check, naming the node, so the rules that follow an instrument failure
// (repeat-validity.ts: INVALID, run again) apply unchanged. Drops and stalls are each node's row on
// the page; they are gated on the merge already (any drop of any node is a drop of the repeat). Pure.
import type { RunAnalysis } from './analysis';
import { droppedCheck, instrumentCheck, verdict, type GateCheck, type GateVerdict } from './gates';

/** One node's row beside the merged one (nodes.json, the page). */
export interface NodeRow {
  node: number;
  run_tag: string | null;
  offered: number;
  sent: number;
  ok: number;
  failed: number;
  dropped: number;
  schedule_lag_p50_us: number | null;
  schedule_lag_p99_us: number | null;
  schedule_lag_max_us: number | null;
  /** Seconds where this node's requests froze (service or corrected latency): its stalls. */
  stall_seconds: number[];
  p50_us: number | null;
  p99_us: number | null;
  /** Its clock against the control host's, read before the load (null: not measured). */
  clock_offset_ms: number | null;
  clock_uncertainty_ms: number | null;
  /** How late its clock found the common start instant, ms (0: it waited for it). */
  start_late_ms: number | null;
  instrument: GateCheck;
  dropped_check: GateCheck;
}

export interface NodeExtras {
  clock_offset_ms?: number | null;
  clock_uncertainty_ms?: number | null;
  start_late_ms?: number | null;
}

/** The nodes' rows, in node order, each judged on its own stream. */
export function nodeRows(analyses: readonly RunAnalysis[], p99LimitMs: number | null, extras: readonly NodeExtras[] = []): NodeRow[] {
  return analyses.map((a, node) => {
    const i = a.ingest;
    const e = extras[node] ?? {};
    return {
      node,
      run_tag: a.plan?.run_tag ?? null,
      offered: i.offered,
      sent: i.sent,
      ok: i.ok,
      failed: i.failed,
      dropped: i.dropped,
      schedule_lag_p50_us: i.schedule_lag_p50_us,
      schedule_lag_p99_us: i.schedule_lag_p99_us,
      schedule_lag_max_us: i.schedule_lag_max_us,
      stall_seconds: i.freeze_seconds,
      p50_us: i.p50_us,
      p99_us: i.p99_us,
      clock_offset_ms: e.clock_offset_ms ?? null,
      clock_uncertainty_ms: e.clock_uncertainty_ms ?? null,
      start_late_ms: e.start_late_ms ?? null,
      instrument: instrumentCheck(i, p99LimitMs, a.probe_lag),
      dropped_check: droppedCheck(i),
    };
  });
}

/**
 * The merged gate with every node's instrument folded into its `instrument` check: it fails when the
 * merge's or any node's does, naming each late node; the other checks are the merge's, untouched.
 */
export function withNodeGates(gate: GateVerdict, rows: readonly NodeRow[]): GateVerdict {
  const late = rows.filter((r) => r.instrument.passed === false);
  if (late.length === 0) return gate;
  const checks = gate.checks.map((c): GateCheck => {
    if (c.name !== 'instrument') return c;
    const nodes = late.map((r) => `node ${r.node} (${r.run_tag ?? 'no run tag'}): ${r.instrument.detail}`).join('; ');
    const detail = c.passed === false ? `${c.detail}; and on its own, ${nodes}` : `merged: ${c.detail}; but on its own, ${nodes}`;
    const seconds = [...new Set([...(c.seconds ?? []), ...late.flatMap((r) => r.instrument.seconds ?? [])])].sort((x, y) => x - y);
    return { name: 'instrument', passed: false, detail, reason: `instrument late: ${detail}`, seconds };
  });
  return verdict(gate.kind, checks, gate.notes);
}

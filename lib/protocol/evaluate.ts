// A repeat's analysis judged: the gate of its kind, the probe's verdict, the repeat's verdict and its
// report. One function, so `rig measure`, `rig analyze`, calibration and the campaign judge alike.
import type { RunAnalysis } from './analysis';
import { ceilingGate, ladderGate, sustainedGate, type GateVerdict, type Reconciliation, type SustainedGateOptions } from './gates';
import { withNodeGates, type NodeRow } from './node-gates';
import { runReport, type RunReport } from './run-report';
import { DEFAULT_PROBE_P99_MS, probeVerdict, repeatVerdict, type RepeatVerdict } from './verdicts';

export interface EvaluateOptions {
  /** sustained (default): the full gate; ladder: a rung; ceiling: closed loop. */
  kind?: GateVerdict['kind'];
  p99LimitMs?: number | null;
  driftLimit?: number;
  /** sustained.drift "noted": drift reported, not gated (gates.ts). */
  driftNoted?: boolean;
  minSamples?: number;
  reconciliation?: Reconciliation | null;
  probeP99Ms?: number;
  interrupted?: boolean;
  /** A spike's or a ramp's p99 limits per phase, and a spike's recovery limit (s): the workload's (issue 35). */
  phaseP99LimitMs?: SustainedGateOptions['phaseP99LimitMs'];
  recoveryLimitS?: number | null;
  /** A workload's p99 limit in every window (ms), when the analysis has windows (window-gates.ts); default p99LimitMs. */
  windowP99LimitMs?: number | null;
  /** A merged stream's load nodes, each judged on its own stream (node-gates.ts); absent: one node. */
  nodes?: readonly NodeRow[];
}

export interface Evaluation {
  verdict: RepeatVerdict;
  report: RunReport;
}

export function evaluateRun(a: RunAnalysis, o: EvaluateOptions = {}): Evaluation {
  const kind = o.kind ?? 'sustained';
  const probeLag = a.probe_lag;
  const merged =
    kind === 'ladder'
      ? ladderGate(a.ingest, { driftLimit: o.driftLimit, reconciliation: o.reconciliation, probeLag })
      : kind === 'ceiling'
        ? ceilingGate(a.ingest, { driftLimit: o.driftLimit, minSamples: o.minSamples, reconciliation: o.reconciliation })
        : sustainedGate(a.ingest, { p99LimitMs: o.p99LimitMs, driftLimit: o.driftLimit, ...(o.driftNoted ? { driftNoted: true } : {}), minSamples: o.minSamples, reconciliation: o.reconciliation, probeLag, phaseP99LimitMs: o.phaseP99LimitMs, recoveryLimitS: o.recoveryLimitS, windowP99LimitMs: o.windowP99LimitMs });
  const gate = o.nodes?.length ? withNodeGates(merged, o.nodes) : merged;
  // A stream whose plan says it was cut short is an interrupted run, whoever reads it.
  const interrupted = (o.interrupted ?? false) || (a.plan?.cut_short ?? false);
  const verdict = repeatVerdict(gate, probeVerdict(a.probe, o.probeP99Ms ?? DEFAULT_PROBE_P99_MS), interrupted);
  return { verdict, report: runReport(a, verdict) };
}

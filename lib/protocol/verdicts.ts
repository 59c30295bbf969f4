// The probe's own verdict, and the verdict of a repeat (ingest gate + probe).
//
// The probe reads what a person waits on while ingest runs. It has its own p99 budget (default
// 500 ms) and its own verdict, reported beside the ingest gate and never pooled into it: at 10,000
// ev/s ingest can hold while the usage aggregate misses its budget, and both are true.
//
// DEGRADED when any probe endpoint's p99 is over budget, or a probe request failed or was dropped (a
// read path that errors or cannot be sent is no more usable than a slow one). A DEGRADED probe fails
// the repeat. OFF when the run had no probe.
import type { ProbeEndpointAnalysis } from './analysis';
import { fmt, type GateVerdict } from './gates';
import type { ProbeScenario } from './sample-row';

export const DEFAULT_PROBE_P99_MS = 500;

export interface ProbeEndpointVerdict {
  scenario: ProbeScenario;
  samples: number;
  failed: number;
  dropped: number;
  p50_ms: number | null;
  p99_ms: number | null;
  over_budget: boolean;
}

export interface ProbeVerdict {
  state: 'OFF' | 'OK' | 'DEGRADED';
  budget_ms: number;
  reasons: string[];
  endpoints: ProbeEndpointVerdict[];
}

export function probeVerdict(probe: readonly ProbeEndpointAnalysis[], budgetMs: number = DEFAULT_PROBE_P99_MS): ProbeVerdict {
  if (probe.length === 0) return { state: 'OFF', budget_ms: budgetMs, reasons: [], endpoints: [] };
  const reasons: string[] = [];
  const endpoints = probe.map((p): ProbeEndpointVerdict => {
    const p99 = p.p99_us === null ? null : p.p99_us / 1000;
    const over = p99 !== null && p99 > budgetMs;
    if (over) reasons.push(`${p.scenario}: p99 ${fmt(p99)} ms > budget ${fmt(budgetMs)} ms`);
    if (p.failed > 0) reasons.push(`${p.scenario}: ${p.failed} of ${p.sent} requests failed`);
    if (p.dropped > 0) reasons.push(`${p.scenario}: ${p.dropped} of ${p.offered} requests dropped`);
    return { scenario: p.scenario, samples: p.samples, failed: p.failed, dropped: p.dropped, p50_ms: p.p50_us === null ? null : p.p50_us / 1000, p99_ms: p99, over_budget: over };
  });
  return { state: reasons.length ? 'DEGRADED' : 'OK', budget_ms: budgetMs, reasons, endpoints };
}

/**
 * The one word a repeat's verdict is printed as. UNRECONCILED: every check that ran passed, but the
 * database was never counted for the run tag, so nothing says the acknowledged events were stored;
 * it is never a PASS. NOT JUDGED: every check that ran passed, but one that decides a PASS could not
 * be made: a sustained repeat had no p99 limit (its latency was held to nothing: no threshold, no
 * PASS), the stream had no plan (its delivery could not be judged), or drift could not be decided (a
 * third too small for a p99, or a drift interval that straddles the limit, drift.ts: neither a pass
 * nor the service's fault). It outranks UNRECONCILED: counting
 * the rows would still not make it a PASS. A run that failed a check is FAIL whatever was unchecked.
 */
export type VerdictState = 'PASS' | 'FAIL' | 'UNRECONCILED' | 'NOT JUDGED' | 'CUT SHORT';

// Each state's exit code (rig measure, rig analyze) is client/exit-codes.ts VERDICT_EXIT_CODE.

export interface RepeatVerdict {
  /**
   * Counts as a pass: every ingest check that was made passed, the probe is not DEGRADED, and nothing
   * that decides a pass went unchecked (state not NOT JUDGED). Reconciled or not: see state.
   */
  passed: boolean;
  state: VerdictState;
  /** The run was cut short (signal, parent gone): it is recorded, never counted as a repeat. */
  interrupted: boolean;
  ingest: GateVerdict;
  probe: ProbeVerdict;
  /** Every reason, ingest first, then the probe's (prefixed `probe`), then the interruption. */
  reasons: string[];
}

export function repeatVerdict(ingest: GateVerdict, probe: ProbeVerdict, interrupted = false): RepeatVerdict {
  const reasons = [...ingest.reasons, ...probe.reasons.map((r) => `probe ${r}`)];
  if (interrupted) reasons.push('interrupted: the run was cut short before its end');
  const checksPassed = ingest.passed && probe.state !== 'DEGRADED' && !interrupted;
  const unjudged = notJudged(ingest);
  const state: VerdictState = interrupted ? 'CUT SHORT' : !checksPassed ? 'FAIL' : unjudged.length ? 'NOT JUDGED' : ingest.reconciled ? 'PASS' : 'UNRECONCILED';
  // NOT JUDGED is not a pass: a campaign never counts it towards "held" (a drift third too small
  // for a p99 would otherwise let a repeat that was never judged hold a configuration). Its reason
  // says why, and blames nothing on the service.
  if (state === 'NOT JUDGED') reasons.push(`not judged: ${unjudged.join(', ')} (not a pass, not the service's fault)`);
  const passed = checksPassed && unjudged.length === 0;
  return { passed, state, interrupted, ingest, probe, reasons };
}

/** Why a gate whose checks all passed is still NOT JUDGED, in words (empty: it is judged). */
export function notJudged(g: Pick<GateVerdict, 'unchecked'>): string[] {
  const why: string[] = [];
  if (g.unchecked.includes('threshold')) why.push('no threshold');
  if (g.unchecked.includes('delivered')) why.push('no plan');
  if (g.unchecked.includes('drift')) why.push('drift not judgeable');
  return why;
}

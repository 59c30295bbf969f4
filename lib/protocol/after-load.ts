// A repeat whose load ran to its end is a result, whatever fails after it (the samplers' wrap-up, the
// reconciliation, the analysis): its verdict is FAIL with the real reason, and it counts in M. Only a
// load that was cut short is re-run. These two functions make that verdict; pure.
import type { RepeatSummary } from './campaign-result';
import type { Evaluation } from './evaluate';
import type { RepeatIdentity } from './repeat-summary';

/** The prefix of every reason that comes from after the load, e.g. "after the load: reconcile failed: ...". */
export const AFTER_LOAD = 'after the load:';

export function afterLoadReason(stage: string, err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return `${AFTER_LOAD} ${stage} failed: ${msg.split('\n')[0]}`;
}

/** The evaluation of a completed load, failed by what went wrong after it (unchanged when nothing did). */
export function failAfterLoad(e: Evaluation, reasons: readonly string[]): Evaluation {
  if (reasons.length === 0) return e;
  const all = [...e.verdict.reasons, ...reasons];
  const verdict = { ...e.verdict, passed: false, state: 'FAIL' as const, reasons: all };
  return { verdict, report: { ...e.report, verdict: { ...e.report.verdict, passed: false, state: 'FAIL', reasons: all } } };
}

/**
 * verdict.json and the summary of a completed load whose stream could not even be analysed: FAIL with
 * the reasons, no figures. The report reads p50_ms, p99_ms and verdict from this shape.
 */
export function unanalysedVerdict(reasons: readonly string[]) {
  return { p50_ms: null, p99_ms: null, verdict: { passed: false, state: 'FAIL' as const, interrupted: false, reasons: [...reasons] } };
}

export function unanalysedSummary(id: RepeatIdentity, reasons: readonly string[], reconciled: boolean): RepeatSummary {
  return {
    ...id,
    passed: false,
    reasons: [...reasons],
    samples: 0,
    dropped: 0,
    failed: 0,
    p50Ms: null,
    p99Ms: null,
    worst10sP99Ms: null,
    drift: null,
    deliveredRate: 0,
    freezeSeconds: 0,
    windows: 0,
    reconciled,
  };
}

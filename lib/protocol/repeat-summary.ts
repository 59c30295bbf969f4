// The compact RepeatSummary of one judged repeat (what activities return to the workflow and what
// result.json lists), made from its RunReport in one place, so the campaign and the report's test
// fixtures cannot drift apart on what a field means.
import type { RepeatSummary } from './campaign-result';
import type { RunReport } from './run-report';
import { notJudged, type RepeatVerdict } from './verdicts';

export type RepeatIdentity = Pick<RepeatSummary, 'configuration' | 'index' | 'attempt' | 'runTag' | 'kind' | 'dir' | 'cutShort'>;

export interface SummaryOptions {
  /** The probe ran (its verdict and worst endpoint p99 are then part of the summary). */
  probe: boolean;
  /** The database's counts were taken and match what was acknowledged. */
  reconciled: boolean;
}

export function summarizeRepeat(id: RepeatIdentity, report: RunReport, verdict: RepeatVerdict, opts: SummaryOptions): RepeatSummary {
  return {
    ...id,
    passed: verdict.passed,
    reasons: verdict.reasons,
    samples: report.samples,
    dropped: report.dropped,
    failed: report.failed,
    p50Ms: report.p50_ms,
    p99Ms: report.p99_ms,
    scheduleLagP99Ms: report.schedule_lag_p99_ms,
    correctedP99Ms: report.co_p99_ms,
    worst10sP99Ms: report.worst_10s_p99_ms,
    drift: report.drift,
    driftLow: report.drift_low ?? null,
    driftHigh: report.drift_high ?? null,
    deliveredRate: report.delivered_rate,
    freezeSeconds: report.freeze_seconds.length,
    windows: report.windows.length,
    reconciled: opts.reconciled,
    probe: opts.probe ? { verdict: report.probe.verdict === 'DEGRADED' ? 'DEGRADED' : 'ok', p99Ms: worstProbeP99(report) } : undefined,
    // Every check that ran passed, but one that decides a pass could not be made: not a failure.
    ...(verdict.state === 'NOT JUDGED' ? { notJudged: notJudged(verdict.ingest) } : {}),
  };
}

/** The slowest probe endpoint's p99: the read a person would notice first. */
function worstProbeP99(r: RunReport): number | null {
  const v = Object.values(r.probe.endpoints).map((e) => e.p99_ms).filter((x): x is number => x !== null);
  return v.length ? Math.max(...v) : null;
}

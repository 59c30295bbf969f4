// A shaped repeat on the page (issue 35): what its workload's gates saw, per phase and after a spike,
// and a long soak's windows (item 4).
// Built from the re-derived report (its phases, lib/protocol/phases.ts) and the configuration's
// workload limits, so the page says each phase's p99 beside its limit and the recovery time beside
// the recovery limit, as the verdict judged them. Absent for a repeat without arrivals in its plan:
// such a repeat's page is today's. Pure.
import { describeArrivals } from '../../protocol/arrivals';
import { memoryTrend, type MemorySeries, type MemoryTrend } from '../../protocol/memory-trend';
import type { RunReport } from '../../protocol/run-report';
import type { WorkloadSpec } from '../../protocol/workload-spec';
import { DASH, ms, type Table } from './cells';

export interface WorkloadPhase {
  name: string;
  from_s: number;
  to_s: number;
  samples: number;
  p99_ms: number | null;
  /** The phase's own limit, else the configuration's; null: none. */
  limit_ms: number | null;
  /** p99 at or under the limit; null without a limit. */
  passed: boolean | null;
}

export interface WorkloadRecovery {
  /** The second the spike ended (from the repeat's start). */
  from_s: number;
  before_p99_ms: number | null;
  /** Seconds after the spike's end until the 10-s p99 was back within the factor; null: not within the repeat. */
  recovered_after_s: number | null;
  limit_s: number | null;
  /** Within the limit; null without a limit (reported, not gated). */
  passed: boolean | null;
  window_s: number;
  factor: number;
}

export interface WorkloadModel {
  /** The arrivals in words ("spike 100 -> 500 ev/s at 15 s for 10 s"). */
  arrivals: string;
  shape: string;
  /** A spike's or a ramp's phases; empty for a shape without phases (Poisson, diurnal, trace). */
  phases: WorkloadPhase[];
  recovery: WorkloadRecovery | null;
  /** A long soak's windows (issue 35 item 4): each one's p99 beside the limit; absent without windowSeconds. */
  windows?: WorkloadWindow[];
  /** A soak's generator memory (issue 35 item 4: bounded and measured); only beside windows, from load.json. */
  memory?: MemoryTrend;
}

export interface WorkloadWindow {
  from_s: number;
  to_s: number;
  samples: number;
  p99_ms: number | null;
  limit_ms: number | null;
  passed: boolean | null;
  partial: boolean;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** The workload of a re-derived repeat, or null when its plan has no arrivals (the protocol's constant schedule). */
export function workloadModel(report: RunReport, p99LimitMs: number | null, w: WorkloadSpec | undefined, memory?: MemorySeries): WorkloadModel | null {
  const a = report.plan?.arrivals;
  if (!a && !report.windows_p99) return null;
  const wLimit = w?.windowP99LimitMs ?? p99LimitMs;
  const windows = report.windows_p99?.map((x): WorkloadWindow => {
    const p99 = x.p99_us === null ? null : r3(x.p99_us / 1000);
    return { from_s: x.from_s, to_s: x.to_s, samples: x.samples, p99_ms: p99, limit_ms: wLimit, passed: wLimit === null ? null : p99 !== null && p99 <= wLimit, partial: x.partial };
  });
  const per = (w?.phaseP99LimitMs ?? {}) as Partial<Record<string, number>>;
  const phases = (report.phases?.phases ?? []).map((p): WorkloadPhase => {
    const limit = per[p.name] ?? p99LimitMs;
    const p99 = p.p99_us === null ? null : r3(p.p99_us / 1000);
    return { name: p.name, from_s: p.from_s, to_s: p.to_s, samples: p.samples, p99_ms: p99, limit_ms: limit, passed: limit === null ? null : p99 !== null && p99 <= limit };
  });
  const rec = report.phases?.recovery ?? null;
  const during = phases.find((p) => p.name === 'during');
  const limitS = w?.recoveryLimitSeconds ?? null;
  const recovery: WorkloadRecovery | null =
    rec && during
      ? {
          from_s: during.to_s,
          before_p99_ms: rec.before_p99_us === null ? null : r3(rec.before_p99_us / 1000),
          recovered_after_s: rec.recovered_after_s,
          limit_s: limitS,
          passed: limitS === null ? null : rec.recovered_after_s !== null && rec.recovered_after_s <= limitS,
          window_s: rec.window_s,
          factor: rec.factor,
        }
      : null;
  const trend = windows && memory ? memoryTrend(memory) : null;
  return { arrivals: describeArrivals(a ?? null, report.plan?.rate ?? 0), shape: a?.shape ?? 'constant', phases, recovery, ...(windows ? { windows } : {}), ...(trend ? { memory: trend } : {}) };
}

/**
 * The generator's memory over a soak in words: "RSS 61.2 MB over the first tenth of the run, 61.9 MB
 * over the last (max 63.0), +0.40 MB/h after the first tenth, +0.02 MB/h over the second half,
 * anonymous 24.4 -> 24.5 MB (+0.05 MB/h), file-backed 36.8 -> 37.4 MB, external 3.1 -> 3.2 MB, over
 * 3600 s (361 samples)": the parts where the series has them (anonymous memory is where a leak grows).
 */
/** A memory slope in words: "+1.52 MB/h". */
export const mbPerHour = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(2)} MB/h`;

export function memoryText(m: MemoryTrend): string {
  const rate = mbPerHour;
  const slope = m.slope_mb_per_h === null ? 'too few samples for a slope' : `${rate(m.slope_mb_per_h)} after the first tenth`;
  const late = m.second_half_slope_mb_per_h === null ? '' : `, ${rate(m.second_half_slope_mb_per_h)} over the second half`;
  const span = (what: string, a: number | undefined, b: number | undefined, extra = '') => (a === undefined || b === undefined ? '' : `, ${what} ${a.toFixed(1)} -> ${b.toFixed(1)} MB${extra}`);
  const anonRate = m.anon_slope_mb_per_h === undefined || m.anon_slope_mb_per_h === null ? '' : ` (${rate(m.anon_slope_mb_per_h)})`;
  const parts = span('anonymous', m.anon_first_mb, m.anon_last_mb, anonRate) + span('file-backed', m.file_first_mb, m.file_last_mb) + span('V8 heap committed', m.heap_total_first_mb, m.heap_total_last_mb) + span('external', m.external_first_mb, m.external_last_mb);
  return `The generator's memory: RSS ${m.first_mb.toFixed(1)} MB over the first tenth of the run, ${m.last_mb.toFixed(1)} MB over the last (max ${m.max_mb.toFixed(1)}), ${slope}${late}${parts}, over ${m.span_s} s (${m.samples} samples)`;
}

const verdictCell = (p: boolean | null) => (p === null ? 'not gated' : p ? 'within' : 'over');

/** The recovery in words: "18 s after the spike (limit 15 s): over". */
export function recoveryText(r: WorkloadRecovery): string {
  const t = r.recovered_after_s === null ? 'not recovered within the repeat' : `${r.recovered_after_s} s after the spike`;
  return `${t}${r.limit_s === null ? ' (no limit: reported, not gated)' : ` (limit ${r.limit_s} s): ${r.passed ? 'within' : 'over'}`}`;
}

/** A long soak's windows, one row each: p99 beside the limit. Null without windows. */
export function windowsTable(w: WorkloadModel): Table | null {
  if (!w.windows?.length) return null;
  return {
    header: ['window', 'samples', 'p99', 'limit', 'verdict'],
    rows: w.windows.map((x) => ({
      cells: [`${x.from_s}-${x.to_s} s${x.partial ? ' (partial)' : ''}`, String(x.samples), ms(x.p99_ms), x.limit_ms === null ? DASH : ms(x.limit_ms), x.samples === 0 && x.passed === false ? 'no samples' : verdictCell(x.passed)],
      ...(x.passed === false ? { cls: 'failed' } : {}),
    })),
  };
}

/** One row per phase and one for the recovery: what the page shows of a shaped repeat. Null without phases. */
export function workloadTable(w: WorkloadModel): Table | null {
  if (!w.phases.length && !w.recovery) return null;
  const rows = w.phases.map((p) => ({
    cells: [p.name, `${p.from_s}-${p.to_s} s`, String(p.samples), ms(p.p99_ms), p.limit_ms === null ? DASH : ms(p.limit_ms), verdictCell(p.passed)],
    ...(p.passed === false ? { cls: 'failed' } : {}),
  }));
  const r = w.recovery;
  if (r) {
    rows.push({
      cells: [
        'recovery',
        `from ${r.from_s} s`,
        DASH,
        `${r.window_s}-s p99 back within x${r.factor} of ${ms(r.before_p99_ms)}: ${r.recovered_after_s === null ? 'not within the repeat' : `after ${r.recovered_after_s} s`}`,
        r.limit_s === null ? DASH : `${r.limit_s} s`,
        verdictCell(r.passed),
      ],
      ...(r.passed === false ? { cls: 'failed' } : {}),
    });
  }
  return { header: ['phase', 'seconds', 'samples', 'p99', 'limit', 'verdict'], rows };
}

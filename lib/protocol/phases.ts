// Gates for shapes that are not steady (issue 35, item 3): a spike's or a ramp's repeat is judged per
// phase, and a spike also by how long its service takes to recover. Pure: the repeat's per-second
// latencies (buckets.ts SecondGroups, by intended time) and its plan in, figures out; the gate
// (gates.ts) compares them with the configuration's limits.
//
// Phases, in whole seconds by intended time (a second belongs to the phase its start lies in):
// - spike {at, for}: before [0, at), during [at, at + for), after [at + for, end);
// - ramp {over}: ramp [0, over), after [over, end) (none when the ramp fills the repeat).
// Constant and Poisson arrivals are one steady phase: today's gates, unchanged (no phases at all).
// Diurnal and trace have no steady phase and no phase gates here: drift is not computed on them.
//
// Latency limits apply per phase: each phase's p99 (nearest rank over its samples) against its limit.
// Drift applies only to a steady phase: a spike's "before" (the service at its base rate, before
// anything happened to it), a ramp's "after" (at its final rate); thirds of that phase, by the same
// rule and interval as a whole repeat's (drift.ts).
//
// Recovery (a spike): the time from the spike's end until the 10-s p99 is back within x1.2 of its
// level before the spike. Level before = the p99 of the RECOVERY_WINDOW_S seconds just before `at`
// (of the whole "before" phase when it is shorter). Recovered at r = the first whole second r >= 0
// after the spike's end whose window [end + r, end + r + 10) has a p99 <= 1.2 x that level; null when
// no window of the repeat's "after" phase gets there (the repeat ended unrecovered).
import type { Arrivals } from './arrivals';
import type { SecondGroups } from './buckets';
import { drift, type Drift } from './drift';
import { percentiles } from './percentile';

export type PhaseName = 'before' | 'during' | 'after' | 'ramp';

export interface PhaseSpan {
  name: PhaseName;
  from_s: number;
  to_s: number;
}

export interface PhaseFigure extends PhaseSpan {
  samples: number;
  /** µs, nearest rank; null without samples. */
  p99_us: number | null;
}

export interface Recovery {
  /** The p99 of the seconds before the spike (µs); null without samples there. */
  before_p99_us: number | null;
  /** Seconds after the spike's end until the 10-s p99 is within the factor again; null: not within the repeat. */
  recovered_after_s: number | null;
  window_s: number;
  factor: number;
}

export interface PhaseAnalysis {
  shape: 'spike' | 'ramp';
  phases: PhaseFigure[];
  /** The steady phase whose thirds the drift is of. */
  drift_phase: PhaseName | null;
  recovery: Recovery | null;
}

export const RECOVERY_WINDOW_S = 10;
export const RECOVERY_FACTOR = 1.2;

/** The phases of a plan's arrivals over a run of `seconds` whole seconds; null for a steady (or shapeless) schedule. */
export function planPhases(a: Arrivals | undefined, seconds: number): { shape: 'spike' | 'ramp'; spans: PhaseSpan[] } | null {
  if (!a) return null;
  const clamp = (x: number) => Math.max(0, Math.min(seconds, Math.ceil(x)));
  if (a.shape === 'spike') {
    const at = clamp(a.at);
    const end = clamp(a.at + a.for);
    const spans: PhaseSpan[] = [
      { name: 'before', from_s: 0, to_s: at },
      { name: 'during', from_s: at, to_s: end },
      { name: 'after', from_s: end, to_s: seconds },
    ];
    return { shape: 'spike', spans: spans.filter((s) => s.to_s > s.from_s) };
  }
  if (a.shape === 'ramp') {
    const over = clamp(a.over);
    const spans: PhaseSpan[] = [
      { name: 'ramp', from_s: 0, to_s: over },
      { name: 'after', from_s: over, to_s: seconds },
    ];
    return { shape: 'ramp', spans: spans.filter((s) => s.to_s > s.from_s) };
  }
  return null;
}

/** The latencies of seconds [from, to) (µs, unsorted across seconds). */
function range(g: SecondGroups, from: number, to: number): Float64Array {
  const a = Math.max(0, Math.min(from, g.durationS));
  const b = Math.max(a, Math.min(to, g.durationS));
  return g.values.subarray(g.offsets[a], g.offsets[b]);
}

function p99(values: Float64Array): number | null {
  return values.length ? percentiles(values, [99])[0] : null;
}

/** The seconds [from, to) of g as a run of their own (drift's thirds over one phase). */
export function subGroups(g: SecondGroups, from: number, to: number): SecondGroups {
  return {
    ...g,
    durationS: to - from,
    offsets: g.offsets.subarray(from, to + 1),
    offered: g.offered.subarray(from, to),
    sent: g.sent.subarray(from, to),
    ok: g.ok.subarray(from, to),
    dropped: g.dropped.subarray(from, to),
  };
}

/** Recovery after a spike ending at `end` s, against the level of the seconds before `at` (see the header). */
export function recoveryAfter(g: SecondGroups, at: number, end: number, window = RECOVERY_WINDOW_S, factor = RECOVERY_FACTOR): Recovery {
  const before = p99(range(g, Math.max(0, at - window), at));
  let recovered: number | null = null;
  if (before !== null) {
    for (let r = 0; end + r + window <= g.durationS; r++) {
      const w = p99(range(g, end + r, end + r + window));
      if (w !== null && w <= factor * before) {
        recovered = r;
        break;
      }
    }
  }
  return { before_p99_us: before, recovered_after_s: recovered, window_s: window, factor };
}

/** Per-phase figures, the steady phase's drift and a spike's recovery; null for a steady plan. */
export function analyzePhases(g: SecondGroups, a: Arrivals | undefined): { phases: PhaseAnalysis; drift: Drift } | null {
  const p = planPhases(a, g.durationS);
  if (!p) return null;
  const phases = p.spans.map((s) => {
    const v = range(g, s.from_s, s.to_s);
    return { ...s, samples: v.length, p99_us: p99(v) };
  });
  const steady = p.spans.find((s) => s.name === (p.shape === 'spike' ? 'before' : 'after')) ?? null;
  const during = p.spans.find((s) => s.name === 'during');
  const recovery = p.shape === 'spike' && during ? recoveryAfter(g, during.from_s, during.to_s) : null;
  return {
    phases: { shape: p.shape, phases, drift_phase: steady?.name ?? null, recovery },
    drift: drift(steady ? subGroups(g, steady.from_s, steady.to_s) : subGroups(g, 0, 0)),
  };
}

// A repeat's p50 over the seconds the hypervisor left the host alone (issue 45). Pure.
//
// Why: on this machine kind (a shared 2-core VM), the largest noise between repeats of an unchanged
// build is the host's CPU steal, not the service's restart. Measured (docs/benchmarks.md, "What moves
// a repeat's p50"): 26 repeats of the local rig at 240 req/s, each after a restart, two builds pinned
// to a CPU and two not: p50 varies 14 % (sd of logs) over all of them, and the five whose host steal
// reached 7-10 % in a 5-s sample read +25 to +75 %; over the seconds whose sample's steal stayed under
// 2 % it varies 4.9 %, pinned or not. A regression cannot cause steal (it is time the hypervisor gave
// another VM), so leaving those seconds out removes noise without removing any of the build's effect.
//
// The seconds: a second of the stream (by intended time: t = 0 is load.json's started_at, as
// tail-attribution.ts reads it) is quiet when the host samples whose intervals overlap it cover it and
// every one of them stayed under the bound. A second no sample covers is not quiet (unknown is not quiet). The
// figure is the nearest-rank p50 of the latency (done − sent, as the repeat's p50_ms) of the ingest
// requests sent in quiet seconds; null when fewer than MIN_QUIET_SHARE of the seconds were quiet (a
// p50 of a few seconds is another kind of noise), and the caller then has no quiet figure for it.
import { STEAL_NOTE_PCT } from './host-steal';
import { percentiles } from './percentile';
import { INGEST, STATUS_DROPPED, type SampleColumns } from './sample-row';

/** Steal under this (% of the host's CPU time over a sample) leaves a second quiet: where the page starts naming steal. */
export const QUIET_STEAL_PCT = STEAL_NOTE_PCT;
/** Fewer quiet seconds than this share of the repeat: no quiet figure. */
export const MIN_QUIET_SHARE = 0.5;

/** One host sample: its interval ends at `endMs` (epoch ms) and lasted `intervalMs`. */
export interface StealSample {
  endMs: number;
  intervalMs: number;
  stealPct: number;
}

export interface QuietLatency {
  /** p50 (ms) of the ingest requests sent in quiet seconds; null below MIN_QUIET_SHARE. */
  p50_ms: number | null;
  /** Quiet seconds, and the repeat's seconds. */
  quiet_seconds: number;
  seconds: number;
  /** Requests the figure is over. */
  samples: number;
  /** The bound (steal %, exclusive). */
  steal_bound_pct: number;
}

/** Gaps between host samples this small (ms) still cover a second: one sample's read ends where the next one's interval starts. */
const COVER_SLACK_MS = 50;

/**
 * Which of the stream's `seconds` seconds were quiet (see the top comment): every host sample whose
 * interval overlaps the second stayed under the bound, and together they cover it. A second that
 * straddles two quiet samples is quiet; one that touches a stolen sample, or that no sample covers
 * (before the sampler's first interval, in a gap), is not.
 */
export function quietSeconds(samples: readonly StealSample[], startedAtMs: number, seconds: number, boundPct = QUIET_STEAL_PCT): boolean[] {
  const quiet = new Array<boolean>(Math.max(0, seconds)).fill(false);
  const spans = samples
    .filter((s) => s.intervalMs > 0 && Number.isFinite(s.endMs))
    .map((s) => ({ from: s.endMs - s.intervalMs - startedAtMs, to: s.endMs - startedAtMs, quiet: s.stealPct < boundPct }))
    .sort((a, b) => a.from - b.from);
  for (let k = 0; k < quiet.length; k++) {
    const [from, to] = [k * 1000, (k + 1) * 1000];
    const over = spans.filter((s) => s.to > from && s.from < to);
    if (!over.length || !over.every((s) => s.quiet)) continue;
    // Covered: from the second's start to its end with no gap wider than the slack.
    let reached = from;
    for (const s of over) {
      if (s.from > reached + COVER_SLACK_MS) break;
      reached = Math.max(reached, s.to);
    }
    quiet[k] = reached + COVER_SLACK_MS >= to;
  }
  return quiet;
}

/** The repeat's quiet p50 from its stream and its host's steal samples. */
export function quietLatency(cols: SampleColumns, samples: readonly StealSample[], startedAtMs: number, seconds: number, boundPct = QUIET_STEAL_PCT): QuietLatency {
  const quiet = quietSeconds(samples, startedAtMs, seconds, boundPct);
  const quietCount = quiet.filter(Boolean).length;
  const lat: number[] = [];
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== INGEST || cols.status[i] === STATUS_DROPPED) continue;
    if (quiet[Math.floor(cols.intended[i] / 1e6)]) lat.push(cols.done[i] - cols.sent[i]);
  }
  const enough = seconds > 0 && quietCount / seconds >= MIN_QUIET_SHARE && lat.length > 0;
  const p50 = enough ? percentiles(Float64Array.from(lat), [50])[0] : null;
  return { p50_ms: p50 === null ? null : p50 / 1000, quiet_seconds: quietCount, seconds, samples: lat.length, steal_bound_pct: boundPct };
}

/**
 * The one rule for when p50 is read over the quiet seconds, shared by a comparison (its two sides are
 * the groups), the weekly history (a run's repeats are one group) and bench:sensitivity: every passing
 * repeat has host samples to tell its quiet seconds (undefined: it has none, e.g. evidence from before
 * them), and every non-empty group keeps at least one quiet p50 (a group whose every repeat the host
 * disturbed would have no p50 at all). Otherwise p50 is over every second, for every group alike, so
 * a filtered p50 is never set beside an unfiltered one.
 */
export function quietP50Applies(groups: ReadonlyArray<ReadonlyArray<number | null | undefined>>): boolean {
  const all = groups.flat();
  return all.length > 0 && all.every((q) => q !== undefined) && groups.every((g) => g.length === 0 || g.some((q) => typeof q === 'number'));
}

// Per-window gates for long soaks (issue 35, item 4): "p99 under X in every N-s window", as
// scylla-cluster-tests' release criteria put it, judged beside drift over the whole run. A long repeat's
// p99 over the whole run lets a bad 10 minutes of a 3-hour soak hide in the other 170; a window of its
// own must hold on its own. Pure: the repeat's per-second latencies (buckets.ts SecondGroups, by
// intended time) in, one p99 per window out (window-figures.ts); the gate (gates.ts) compares each
// with the limit (judgeWindows, here).
//
// Windows are [kN, (k+1)N) seconds of the repeat; a last window shorter than N (a repeat that is not a
// whole number of windows) is judged too, marked partial: a tail cannot escape by being short. A window
// without samples fails (nothing was answered there to hold its p99). The check names at most
// NAMED_WINDOWS of the windows over the limit, and how many more, so a long repeat's verdict (which
// goes into the workflow's history with the repeat's result) stays small however many windows fail.
// The gate's half only: gates.ts is in the workflow's bundle, which has no Buffer (sample-row.ts,
// which buckets.ts reads, makes Buffers as it loads); the per-window p99s are taken from the samples
// by window-figures.ts, on the analysis side.

export interface WindowFigure {
  from_s: number;
  to_s: number;
  samples: number;
  /** µs, nearest rank; null without samples. */
  p99_us: number | null;
  /** Shorter than the window (the repeat's last). */
  partial: boolean;
}

/** Windows over the limit named in a verdict, at most. */
export const NAMED_WINDOWS = 5;

const fmt = (x: number) => String(Math.round(x * 1000) / 1000);

/** Every window's p99 at or under the limit (ms): passed; null without a limit (reported, not gated). */
export function judgeWindows(ws: readonly WindowFigure[], limitMs: number | null): { passed: boolean | null; detail: string; over: WindowFigure[] } {
  const over = limitMs === null ? [] : ws.filter((w) => w.p99_us === null || w.p99_us / 1000 > limitMs);
  const worst = ws.reduce<WindowFigure | null>((m, w) => (w.p99_us !== null && (m === null || m.p99_us === null || w.p99_us > m.p99_us) ? w : m), null);
  const size = ws.length ? ws[0].to_s - ws[0].from_s : 0;
  const worstText = worst ? `worst ${worst.from_s}-${worst.to_s} s p99 ${fmt(worst.p99_us! / 1000)} ms` : 'no samples';
  if (limitMs === null) return { passed: null, detail: `${ws.length} windows of ${size} s, ${worstText} (no p99 limit: not gated)`, over };
  if (!over.length) return { passed: true, detail: `every one of ${ws.length} windows of ${size} s p99 <= ${fmt(limitMs)} ms (${worstText})`, over };
  const named = over.slice(0, NAMED_WINDOWS).map((w) => `${w.from_s}-${w.to_s} s${w.partial ? ' (partial)' : ''} ${w.p99_us === null ? 'no samples' : `p99 ${fmt(w.p99_us / 1000)} ms`}`);
  const more = over.length > NAMED_WINDOWS ? ` and ${over.length - NAMED_WINDOWS} more` : '';
  return { passed: false, detail: `${over.length} of ${ws.length} windows of ${size} s over p99 ${fmt(limitMs)} ms: ${named.join('; ')}${more}`, over };
}

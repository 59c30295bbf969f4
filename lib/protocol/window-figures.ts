// Each window's p99 of a repeat (issue 35 item 4; the windows and their rule: window-gates.ts). Apart
// from the gate because it reads the samples' per-second groups (buckets.ts), which the workflow's
// bundle must not load (sample-row.ts makes Buffers as it loads; a workflow has no Buffer).
import { latenciesOfSeconds, type SecondGroups } from './buckets';
import { percentileOfSorted } from './percentile';
import type { WindowFigure } from './window-gates';

/** The p99 of each window of `windowS` seconds over the run (see the header). */
export function perWindowP99(g: SecondGroups, windowS: number): WindowFigure[] {
  if (!(Number.isInteger(windowS) && windowS >= 1)) throw new RangeError(`windowSeconds must be a whole number of seconds >= 1, got ${windowS}`);
  const out: WindowFigure[] = [];
  for (let from = 0; from < g.durationS; from += windowS) {
    const to = Math.min(g.durationS, from + windowS);
    const v = latenciesOfSeconds(g, from, to);
    out.push({ from_s: from, to_s: to, samples: v.length, p99_us: v.length ? percentileOfSorted(v, 99) : null, partial: to - from < windowS });
  }
  return out;
}

// Seconds named in a verdict's words, as short ranges. Imports nothing: the gates use it, and the
// gates are in the workflow bundle (through plan.ts), where a module that touches Node's Buffer at
// load (sample-row.ts) must not be pulled in.

/** Whole seconds as short ranges: [3, 4, 5, 9] -> "3-5, 9" (at most `max` ranges, then "and N more"). */
export function secondRanges(seconds: readonly number[], max = 8): string {
  const ranges: Array<[number, number]> = [];
  for (const s of seconds) {
    const last = ranges[ranges.length - 1];
    if (last && s === last[1] + 1) last[1] = s;
    else ranges.push([s, s]);
  }
  const shown = ranges.slice(0, max).map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`));
  const rest = ranges.length - shown.length;
  return shown.join(', ') + (rest > 0 ? ` and ${rest} more` : '');
}

// Percentiles and medians, defined once for every statistic and gate.
//
// Percentile: NEAREST-RANK on the exact values (no interpolation, no histogram binning).
//   pP of n sorted values = sorted[ceil(P/100 * n) - 1], and p0 = the smallest value.
//   So p99 of 100 values is the 99th smallest, p99 of 1,000 values the 990th, p50 of 4 values the 2nd.
//   Every reported percentile is then a latency some request really had, and a re-analysis of the
//   same stream gives the same number bit for bit.
//
// Median (of bucket p99s, of repeats' figures): the conventional one, the middle value of an odd
//   count and the mean of the two middle values of an even count. It is a summary across buckets or
//   repeats, not a latency of one request, so the mean of two middles is the honest centre.
//
// The generator's live progress uses an HDR histogram (3 significant digits); only these exact
// definitions feed verdicts and reports.

/** Nearest-rank percentile of an ascending array; NaN when empty. p in [0, 100]. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  // (p * n) / 100 is exact for integer p; the epsilon keeps e.g. 99.9% of 1000 from rounding up a rank.
  const rank = Math.max(1, Math.ceil((p * n) / 100 - 1e-9));
  return sorted[Math.min(rank, n) - 1];
}

/**
 * Nearest-rank percentiles of unsorted values, without a full sort: quickselect on one copy (O(n)
 * per percentile), same definition as percentileOfSorted. Returns one value per requested p.
 */
export function percentiles(values: ArrayLike<number>, ps: readonly number[]): number[] {
  const n = values.length;
  if (n === 0) return ps.map(() => NaN);
  const a = Float64Array.from(values);
  return ps.map((p) => {
    if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
    const rank = Math.max(1, Math.ceil((p * n) / 100 - 1e-9));
    return select(a, Math.min(rank, n) - 1);
  });
}

/** Nearest-rank percentile of unsorted values. */
export function percentile(values: ArrayLike<number>, p: number): number {
  return percentiles(values, [p])[0];
}

/** The k-th smallest (0-based) of a, reordering a in place (Hoare quickselect, median of three). */
export function select(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    // median of three as pivot
    if (a[mid] < a[lo]) swap(a, mid, lo);
    if (a[hi] < a[lo]) swap(a, hi, lo);
    if (a[hi] < a[mid]) swap(a, hi, mid);
    const pivot = a[mid];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        swap(a, i, j);
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

function swap(a: Float64Array, i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
}

/** Conventional median; NaN when empty. */
export function median(values: ArrayLike<number>): number {
  const s = sortedCopy(values);
  const n = s.length;
  if (n === 0) return NaN;
  const mid = n >> 1;
  return n % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Ascending numeric copy as a Float64Array (typed-array sort is numeric, not lexicographic). */
export function sortedCopy(values: ArrayLike<number>): Float64Array {
  const s = Float64Array.from(values);
  s.sort();
  return s;
}

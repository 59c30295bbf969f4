// A latency histogram that merges EXACTLY (issue 37): one bucket per integer microsecond, so adding
// the nodes' histograms (bucket counts added, HdrHistogram's `add`) gives the histogram of every sample
// pooled, and its nearest-rank percentile is the pooled samples' (percentile.ts), to the microsecond.
// Never an average of percentiles (scylla-cluster-tests#3133): p99 of a merge is not a mean of p99s.
// HDR's 3 significant digits would merge as exactly, but its percentiles are bucket edges, not a
// latency some request had; the stream's times are integer µs, so exact buckets cost only the distinct
// values (a few thousand in a repeat). Pure.
export class ExactHistogram {
  private readonly counts = new Map<number, number>();
  total = 0;

  /** Records one latency (an integer number of µs, >= 0). */
  record(us: number): void {
    if (!Number.isInteger(us) || us < 0) throw new RangeError(`a latency is a whole number of µs >= 0, got ${us}`);
    this.counts.set(us, (this.counts.get(us) ?? 0) + 1);
    this.total++;
  }

  /** Adds another histogram's counts into this one (bucket by bucket): the merge. */
  add(other: ExactHistogram): this {
    for (const [v, c] of other.counts) this.counts.set(v, (this.counts.get(v) ?? 0) + c);
    this.total += other.total;
    return this;
  }

  /** Nearest-rank percentile (percentile.ts's definition), µs; NaN when empty. */
  percentile(p: number): number {
    if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
    if (this.total === 0) return NaN;
    const rank = Math.min(this.total, Math.max(1, Math.ceil((p * this.total) / 100 - 1e-9)));
    let seen = 0;
    for (const [v, c] of this.buckets()) {
      seen += c;
      if (seen >= rank) return v;
    }
    return NaN; // unreachable: the counts sum to total
  }

  /** [value µs, count] pairs, ascending: the histogram as data (evidence, a node's row). */
  buckets(): Array<[number, number]> {
    return [...this.counts.entries()].sort((a, b) => a[0] - b[0]);
  }

  static fromBuckets(pairs: ReadonlyArray<readonly [number, number]>): ExactHistogram {
    const h = new ExactHistogram();
    for (const [v, c] of pairs) {
      if (!Number.isInteger(v) || v < 0 || !Number.isInteger(c) || c < 1) throw new RangeError(`a bucket is [µs >= 0, count >= 1], got [${v}, ${c}]`);
      h.counts.set(v, (h.counts.get(v) ?? 0) + c);
      h.total += c;
    }
    return h;
  }
}

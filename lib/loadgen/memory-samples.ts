// The generator's own memory over a run (issue 35: "its RSS over a 1-hour soak goes into
// docs/benchmarks.md"): resident set and V8 heap in use, read every `everyS` seconds of the run by the
// progress tick (never by the hot path). Bounded for runs of any length: past MAX_SAMPLES, every
// other sample is dropped and the spacing doubles, so a 10-hour soak costs the summary what a
// 2-hour one does, and the samples stay evenly spaced for the slope (lib/protocol/memory-trend.ts).

import type { MemorySeries } from '../protocol/memory-trend';

export type { MemorySeries };

const MAX_SAMPLES = 720;
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;

export class MemorySamples {
  private every: number;
  private readonly rss: number[] = [];
  private readonly heap: number[] = [];
  private readonly external: number[] = [];

  constructor(everyS = 10) {
    this.every = everyS;
  }

  /** Called once a second with the run's second; reads memory only on the series' own seconds. */
  tick(second: number): void {
    if (second % this.every !== 0) return;
    const m = process.memoryUsage();
    this.rss.push(mb(m.rss));
    this.heap.push(mb(m.heapUsed));
    this.external.push(mb(m.external));
    if (this.rss.length > MAX_SAMPLES) this.thin();
  }

  series(): MemorySeries {
    return { every_s: this.every, rss_mb: [...this.rss], heap_used_mb: [...this.heap], external_mb: [...this.external] };
  }

  /** Keeps the samples at even multiples of the spacing (second 0, 2 x every, ...), then doubles it. */
  private thin(): void {
    for (const xs of [this.rss, this.heap, this.external]) {
      const kept = xs.filter((_, i) => i % 2 === 0);
      xs.length = 0;
      xs.push(...kept);
    }
    this.every *= 2;
  }
}

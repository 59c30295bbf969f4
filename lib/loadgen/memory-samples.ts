// The generator's own memory over a run (issue 35: "its RSS over a 1-hour soak goes into
// docs/benchmarks.md"): resident set, V8 heap in use and committed, read every `everyS` seconds of the run by the
// progress tick (never by the hot path). Bounded for runs of any length: past MAX_SAMPLES, every
// other sample is dropped and the spacing doubles, so a 10-hour soak costs the summary what a
// 2-hour one does, and the samples stay evenly spaced for the slope (lib/protocol/memory-trend.ts).
//
// On Linux the resident set is also read split, from /proc/self/status: RssAnon (the heap, the
// allocator's arenas, buffers: where a leak grows) and RssFile (the node binary's and libraries' pages,
// mapped in as code paths run for the first time: it grows for a while and is not the process's own
// memory). process.memoryUsage().rss is their sum (with RssShmem, 0 here), so a rise in RSS is placed.

import fs from 'node:fs';
import type { MemorySeries } from '../protocol/memory-trend';

export type { MemorySeries };

const MAX_SAMPLES = 720;
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;

export class MemorySamples {
  private every: number;
  private readonly rss: number[] = [];
  private readonly heap: number[] = [];
  private readonly heapTotal: number[] = [];
  private readonly external: number[] = [];
  private readonly anon: number[] = [];
  private readonly file: number[] = [];
  /** Whether /proc/self/status gave both figures at the first reading (Linux); if not, never read again. */
  private split: boolean | undefined;

  constructor(everyS = 10) {
    this.every = everyS;
  }

  /** Called once a second with the run's second; reads memory only on the series' own seconds. */
  tick(second: number): void {
    if (second % this.every !== 0) return;
    const m = process.memoryUsage();
    this.rss.push(mb(m.rss));
    this.heap.push(mb(m.heapUsed));
    this.heapTotal.push(mb(m.heapTotal));
    this.external.push(mb(m.external));
    if (this.split !== false) {
      const r = residentSplit();
      this.split = r !== null;
      if (r) {
        this.anon.push(mb(r.anon));
        this.file.push(mb(r.file));
      }
    }
    if (this.rss.length > MAX_SAMPLES) this.thin();
  }

  series(): MemorySeries {
    // The split only where every sample has it (a read that failed mid-run drops the split, not a sample).
    const split = this.split && this.anon.length === this.rss.length ? { rss_anon_mb: [...this.anon], rss_file_mb: [...this.file] } : {};
    return { every_s: this.every, rss_mb: [...this.rss], heap_used_mb: [...this.heap], heap_total_mb: [...this.heapTotal], external_mb: [...this.external], ...split };
  }

  /** Keeps the samples at even multiples of the spacing (second 0, 2 x every, ...), then doubles it. */
  private thin(): void {
    for (const xs of [this.rss, this.heap, this.heapTotal, this.external, this.anon, this.file]) {
      const kept = xs.filter((_, i) => i % 2 === 0);
      xs.length = 0;
      xs.push(...kept);
    }
    this.every *= 2;
  }
}

/** RssAnon and RssFile of /proc/self/status, bytes; null where there is no such file or field (not Linux). */
export function residentSplit(status?: string): { anon: number; file: number } | null {
  let text = status;
  if (text === undefined) {
    try {
      text = fs.readFileSync('/proc/self/status', 'utf8');
    } catch {
      return null;
    }
  }
  const kb = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text ?? '');
    return m ? Number(m[1]) * 1024 : null;
  };
  const anon = kb('RssAnon');
  const file = kb('RssFile');
  return anon === null || file === null ? null : { anon, file };
}

// Whether the generator's memory stayed flat over a long run (issue 35's soak): the least-squares
// slope of its resident set, in MB per hour, with the level at the start and the end beside it.
//
// The first tenth of the run is left out of the slope: connections, buffers and the JIT's code are
// allocated then, once, and a run of a few minutes would otherwise read that as growth.
//
// The slope over the second half is beside it, because a slope alone cannot tell a leak from a
// plateau: an allocator that reaches its working set slowly (glibc's arenas hold freed memory) climbs
// for a while and then stays, while a leak climbs at the same rate throughout. A plateau's second-half
// slope is near 0; a leak's equals its whole-run slope.
import { median } from './percentile';

/** What goes into the generator's summary, and from there into the repeat's load evidence. */
export interface MemorySeries {
  /** Seconds of the run between two samples (doubles as the series is thinned). */
  every_s: number;
  /** Resident set size, MB (10^6 bytes), one decimal; sample i was read at second i x every_s. */
  rss_mb: number[];
  /** V8 heap in use, MB, at the same moments. */
  heap_used_mb: number[];
  /**
   * V8 heap committed, MB (used plus what V8 holds for it: the young generation's semispaces grow
   * under a high allocation rate, and that is anonymous memory with no rise in heap used); absent in a
   * series recorded before it.
   */
  heap_total_mb?: number[];
  /**
   * Memory outside the V8 heap that V8 knows of (Buffers, zlib's and the sockets' native memory), MB;
   * absent in a series recorded before it: where RSS grows while the heap does not, this says whether
   * the growth is the process's own buffers or the allocator's.
   */
  external_mb?: number[];
  /**
   * RSS split as Linux's /proc/self/status has it, MB: anonymous memory (heap, the allocator's arenas,
   * buffers: where a leak grows) and file-backed pages (the node binary's code, mapped in as paths run
   * for the first time). Absent off Linux and in a series recorded before them.
   */
  rss_anon_mb?: number[];
  rss_file_mb?: number[];
}

export interface MemoryTrend {
  samples: number;
  /** Seconds the series covers. */
  span_s: number;
  /** Median RSS (MB) over the first and the last tenth of the run (at least one sample each). */
  first_mb: number;
  last_mb: number;
  max_mb: number;
  /** Least-squares slope of RSS after the first tenth, MB per hour; null with fewer than 3 samples there. */
  slope_mb_per_h: number | null;
  /** The same slope over the run's second half alone (a plateau reads ~0, a leak its full rate); null with fewer than 3 samples. */
  second_half_slope_mb_per_h: number | null;
  /** Median external memory (MB) over the first and the last tenth; absent for a series without it. */
  external_first_mb?: number;
  external_last_mb?: number;
  /** The same for V8's committed heap; absent for a series without it. */
  heap_total_first_mb?: number;
  heap_total_last_mb?: number;
  /** The same for anonymous memory, with its slope after the first tenth (a leak's); absent without the split. */
  anon_first_mb?: number;
  anon_last_mb?: number;
  anon_slope_mb_per_h?: number | null;
  /** The same levels for file-backed pages; absent without the split. */
  file_first_mb?: number;
  file_last_mb?: number;
}

export function memoryTrend(s: MemorySeries): MemoryTrend | null {
  const n = s.rss_mb.length;
  if (n === 0) return null;
  const tenth = Math.max(1, Math.floor(n / 10));
  const from = (xs: number[], k: number) => xs.slice(k).map((y, i) => ({ x: ((i + k) * s.every_s) / 3600, y }));
  const settled = from(s.rss_mb, tenth);
  const secondHalf = from(s.rss_mb, Math.floor(n / 2));
  // A part of the series counts only where it has a value at every sample.
  const whole = (xs: number[] | undefined) => (xs?.length === n ? xs : undefined);
  const levels = (xs: number[]): [number, number] => [median(xs.slice(0, tenth)), median(xs.slice(n - tenth))];
  const ext = whole(s.external_mb);
  const heapTotal = whole(s.heap_total_mb);
  const anon = whole(s.rss_anon_mb);
  const file = whole(s.rss_file_mb);
  const anonSettled = anon ? from(anon, tenth) : [];
  return {
    samples: n,
    span_s: (n - 1) * s.every_s,
    first_mb: median(s.rss_mb.slice(0, tenth)),
    last_mb: median(s.rss_mb.slice(n - tenth)),
    max_mb: Math.max(...s.rss_mb),
    slope_mb_per_h: settled.length >= 3 ? slope(settled) : null,
    second_half_slope_mb_per_h: secondHalf.length >= 3 ? slope(secondHalf) : null,
    ...(ext ? pair('external', levels(ext)) : {}),
    ...(heapTotal ? pair('heap_total', levels(heapTotal)) : {}),
    ...(anon && file ? { ...pair('anon', levels(anon)), anon_slope_mb_per_h: anonSettled.length >= 3 ? slope(anonSettled) : null, ...pair('file', levels(file)) } : {}),
  };
}

/** `<name>_first_mb` and `<name>_last_mb` of a part's first- and last-tenth levels. */
function pair<K extends string>(name: K, [first, last]: [number, number]): Record<`${K}_first_mb` | `${K}_last_mb`, number> {
  return { [`${name}_first_mb`]: first, [`${name}_last_mb`]: last } as Record<`${K}_first_mb` | `${K}_last_mb`, number>;
}

function slope(pts: Array<{ x: number; y: number }>): number {
  const mx = pts.reduce((a, p) => a + p.x, 0) / pts.length;
  const my = pts.reduce((a, p) => a + p.y, 0) / pts.length;
  let num = 0;
  let den = 0;
  for (const p of pts) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}


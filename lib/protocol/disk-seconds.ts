// Per-second disk figures of the database's disk, from whichever source a repeat has: the local
// target's disk sampler (disk-samples.jsonl, /proc/diskstats) or, on aws, Enhanced Monitoring's
// per-second diskIO (cloud-os-metrics.json). One shape for both, so tail attribution and the page
// read them the same way. Pure.
import type { OsMetricsFile } from './cloud-evidence';

export interface DiskSecond {
  /** The interval the figures cover, epoch ms, (from, to]. */
  from_ms: number;
  to_ms: number;
  reads_ps: number | null;
  writes_ps: number | null;
  write_kb_ps: number | null;
  /** KB per IO, reads and writes together; null when no IO completed or the source lacks the KB. */
  avg_io_kb: number | null;
  /** Mean IOs in flight (iostat's aqu-sz, Enhanced Monitoring's avgQueueLen). */
  queue_depth: number | null;
  source: 'disk sampler' | 'Enhanced Monitoring';
}

/** The row shape of disk-samples.jsonl that is read here (lib/evidence/disk-sampler.ts DiskSample). */
export interface LocalDiskRow {
  t: string;
  intervalMs?: number;
  devices?: Array<{ reads_ps: number; writes_ps: number; read_kb_ps: number; write_kb_ps: number; queue_depth: number }>;
  error?: string;
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const sum = (xs: Array<number | null | undefined>): number | null => {
  const ok = xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return ok.length ? ok.reduce((s, x) => s + x, 0) : null;
};

/** Size from totals: KB/s over IOs/s (null when nothing completed). */
function sizeOf(kbPs: number | null, iosPs: number | null): number | null {
  return kbPs !== null && iosPs !== null && iosPs > 0 ? r1(kbPs / iosPs) : null;
}

/**
 * The local sampler's rows. Several devices (pg_wal on its own disk) are taken together: their IOPS,
 * KB/s and queues add up, and the average IO size is over all their IOs. Error rows are gaps.
 */
export function diskSecondsFromLocal(rows: readonly LocalDiskRow[]): DiskSecond[] {
  const out: DiskSecond[] = [];
  for (const r of rows) {
    if (r.error !== undefined || !r.devices?.length) continue;
    const to = Date.parse(r.t);
    const reads = sum(r.devices.map((d) => d.reads_ps));
    const writes = sum(r.devices.map((d) => d.writes_ps));
    const kb = sum(r.devices.map((d) => d.read_kb_ps + d.write_kb_ps));
    out.push({
      from_ms: to - (r.intervalMs ?? 1000),
      to_ms: to,
      reads_ps: reads,
      writes_ps: writes,
      write_kb_ps: sum(r.devices.map((d) => d.write_kb_ps)),
      avg_io_kb: sizeOf(kb, (reads ?? 0) + (writes ?? 0)),
      queue_depth: sum(r.devices.map((d) => d.queue_depth)),
      source: 'disk sampler',
    });
  }
  return out;
}

/**
 * Enhanced Monitoring's events: each message's figures are over the interval before its `timestamp`
 * (granularity_s, 1 s as the aws target provisions it). Every disk RDS lists is taken together, as
 * above. The average IO size is (readKbPS + writeKbPS) / (readIOsPS + writeIOsPS): the message's own
 * `avgReqSz` is not kept, its unit is not stated in the RDS User Guide's table, and the KB and IO
 * rates are. A file written before read_kb_ps/write_kb_ps were kept has no size, only the queue.
 */
export function diskSecondsFromOs(f: Pick<OsMetricsFile, 't' | 'disks' | 'granularity_s'>): DiskSecond[] {
  const step = Math.round((f.granularity_s ?? 1) * 1000);
  const disks = f.disks ?? [];
  if (!disks.length) return [];
  return f.t.map((t, i) => {
    const to = Date.parse(t);
    const reads = sum(disks.map((d) => d.read_iops[i]));
    const writes = sum(disks.map((d) => d.write_iops[i]));
    const hasKb = disks.every((d) => d.read_kb_ps && d.write_kb_ps);
    const kb = hasKb ? sum(disks.flatMap((d) => [d.read_kb_ps?.[i], d.write_kb_ps?.[i]])) : null;
    return {
      from_ms: to - step,
      to_ms: to,
      reads_ps: reads,
      writes_ps: writes,
      write_kb_ps: hasKb ? sum(disks.map((d) => d.write_kb_ps?.[i])) : null,
      avg_io_kb: sizeOf(kb, reads === null && writes === null ? null : (reads ?? 0) + (writes ?? 0)),
      queue_depth: sum(disks.map((d) => d.avg_queue_len[i])),
      source: 'Enhanced Monitoring' as const,
    };
  });
}

/**
 * The disk second that covers most of [from, to) (epoch ms); ties go to the earlier one. Null when no
 * figure overlaps it (a gap, or no disk evidence at all).
 */
export function diskAt(seconds: readonly DiskSecond[], from: number, to: number): DiskSecond | null {
  let best: DiskSecond | null = null;
  let bestOverlap = 0;
  for (const d of seconds) {
    const overlap = Math.min(to, d.to_ms) - Math.max(from, d.from_ms);
    if (overlap > bestOverlap) {
      best = d;
      bestOverlap = overlap;
    }
  }
  return best;
}

// The disk under the database, once a second, from /proc/diskstats: what iostat -x shows (IOPS, KB/s,
// average IO size, queue depth, utilisation) for the block device(s) that hold the cluster's files.
// Per second because the tails it explains are: a vacuum pass's write storm (average IO size falling
// to a few KB while the queue grows into the hundreds) lasts seconds, and a 5-s average hides it.
// One JSON line per interval, appended as it is taken. Linux only.
//
// Not iostat itself: it prints a human table (sysstat's columns changed names between versions), and
// the counters are one file read a second with no child process to watch.
import fs from 'node:fs';
import path from 'node:path';
import { JsonlWriter } from './jsonl-writer';
import { runPeriodic } from './periodic';

/** The cumulative counters of one line of /proc/diskstats (Documentation/admin-guide/iostats.rst). */
export interface DiskCounters {
  reads: number;
  sectorsRead: number;
  msReading: number;
  writes: number;
  sectorsWritten: number;
  msWriting: number;
  /** Field 10: ms the device had IO in flight (the basis of %util). */
  ioTicksMs: number;
  /** Field 11: ms weighted by the IOs in flight (the basis of avgqu-sz). */
  weightedMs: number;
}

/** /proc/diskstats -> counters by device name. Sectors are 512 bytes whatever the device's own size. */
export function parseDiskstats(text: string): Map<string, DiskCounters> {
  const out = new Map<string, DiskCounters>();
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 14) continue;
    const v = f.slice(3, 14).map(Number);
    if (v.some((x) => !Number.isFinite(x))) continue;
    out.set(f[2], { reads: v[0], sectorsRead: v[2], msReading: v[3], writes: v[4], sectorsWritten: v[6], msWriting: v[7], ioTicksMs: v[9], weightedMs: v[10] });
  }
  return out;
}

/** One device over one interval, per second (iostat -x's figures). */
export interface DiskFigures {
  device: string;
  reads_ps: number;
  writes_ps: number;
  read_kb_ps: number;
  write_kb_ps: number;
  /** KB per IO, reads and writes together (iostat's areq-sz); null when no IO completed. */
  avg_io_kb: number | null;
  avg_write_kb: number | null;
  /** Mean IOs in flight over the interval (iostat's aqu-sz): weighted io ms / interval ms. */
  queue_depth: number;
  /** Share of the interval with IO in flight, %. */
  util_pct: number;
  /** Mean ms per completed IO (queue + service), null when none completed. */
  await_ms: number | null;
}

export interface DiskSample {
  t: string;
  seq: number;
  intervalMs: number;
  devices: DiskFigures[];
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;

/** The figures between two readings `ms` apart (pure; a counter that went back, a device reset, reads as 0). */
export function diskDelta(device: string, a: DiskCounters, b: DiskCounters, ms: number): DiskFigures {
  const d = (k: keyof DiskCounters) => Math.max(0, b[k] - a[k]);
  const secs = Math.max(0.001, ms / 1000);
  const ios = d('reads') + d('writes');
  const kb = (sectors: number) => sectors / 2;
  return {
    device,
    reads_ps: r1(d('reads') / secs),
    writes_ps: r1(d('writes') / secs),
    read_kb_ps: r1(kb(d('sectorsRead')) / secs),
    write_kb_ps: r1(kb(d('sectorsWritten')) / secs),
    avg_io_kb: ios ? r1(kb(d('sectorsRead') + d('sectorsWritten')) / ios) : null,
    avg_write_kb: d('writes') ? r1(kb(d('sectorsWritten')) / d('writes')) : null,
    queue_depth: r2(d('weightedMs') / Math.max(1, ms)),
    util_pct: r1(Math.min(100, (100 * d('ioTicksMs')) / Math.max(1, ms))),
    await_ms: ios ? r2((d('msReading') + d('msWriting')) / ios) : null,
  };
}

/** Linux's dev_t -> major:minor (glibc's gnu_dev_major/minor; Node gives st_dev as a number). */
export function majorMinor(dev: number): { major: number; minor: number } {
  const d = BigInt(dev);
  const major = ((d >> 8n) & 0xfffn) | ((d >> 32n) & ~0xfffn);
  const minor = (d & 0xffn) | ((d >> 12n) & ~0xffn);
  return { major: Number(major), minor: Number(minor) };
}

/**
 * The block device that holds `dir`: its st_dev through /sys/dev/block/MAJ:MIN (a partition or a
 * device-mapper volume has its own line in /proc/diskstats, so its own name is the one to sample).
 * Throws naming the number when there is none: overlayfs, tmpfs and btrfs subvolumes have an
 * anonymous st_dev (major 0) with no block device behind it.
 */
export function blockDeviceOf(dir: string, sysDevBlock = '/sys/dev/block'): string {
  const { major, minor } = majorMinor(fs.statSync(dir).dev);
  const link = path.join(sysDevBlock, `${major}:${minor}`);
  if (!fs.existsSync(link)) throw new Error(`no block device behind ${dir} (st_dev ${major}:${minor}, not in ${sysDevBlock}): set RIG_DISK_DEVICE to name one`);
  return path.basename(fs.realpathSync(link));
}

/**
 * The devices to sample for the database's folders (the data directory and pg_wal, which may be a
 * link to another disk): RIG_DISK_DEVICE (comma-separated names) when set, else each folder's own.
 */
export function devicesFor(dirs: string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const named = (env.RIG_DISK_DEVICE ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (named.length) return named;
  return [...new Set(dirs.filter((d) => fs.existsSync(d)).map((d) => blockDeviceOf(fs.realpathSync(d))))].sort();
}

export interface DiskSamplerOptions {
  file: string;
  devices: string[];
  /** Default 1000 ms. */
  intervalMs?: number;
  diskstats?: string;
}

export interface DiskSampler {
  stop(): Promise<{ samples: number }>;
}

/** Starts now (a baseline reading); the first row is written one interval later. */
export function startDiskSampler(opts: DiskSamplerOptions): DiskSampler {
  const source = opts.diskstats ?? '/proc/diskstats';
  const writer = new JsonlWriter(opts.file);
  const read = () => ({ at: Date.now(), stats: parseDiskstats(fs.readFileSync(source, 'utf8')) });
  let prev = read();
  let samples = 0;
  const loop = runPeriodic(opts.intervalMs ?? 1000, async (seq) => {
    if (seq === 0) return; // the baseline was read at start
    try {
      const cur = read();
      const devices = opts.devices.map((name) => {
        const a = prev.stats.get(name);
        const b = cur.stats.get(name);
        if (!a || !b) throw new Error(`device ${name} is not in ${source}`);
        return diskDelta(name, a, b, cur.at - prev.at);
      });
      const row: DiskSample = { t: new Date(cur.at).toISOString(), seq, intervalMs: cur.at - prev.at, devices };
      prev = cur;
      samples++;
      await writer.write(row);
    } catch (err) {
      await writer.write({ t: new Date().toISOString(), seq, error: (err as Error).message });
    }
  });
  return {
    async stop() {
      await loop.stop();
      await writer.flush();
      return { samples };
    },
  };
}

/**
 * The sampler of the disks under `folders`. When no device can be named (no block device behind the
 * folder), the file gets one error row saying why and nothing else: a machine without a block device
 * under its data directory has no disk figures, which the page says, and that is not a failed repeat.
 */
export function startFolderDiskSampler(folders: string[], file: string, opts: Omit<DiskSamplerOptions, 'file' | 'devices'> = {}): DiskSampler {
  let devices: string[];
  try {
    devices = devicesFor(folders);
    if (!devices.length) throw new Error(`none of ${folders.join(', ')} exists`);
  } catch (err) {
    const writer = new JsonlWriter(file);
    const wrote = writer.write({ t: new Date().toISOString(), seq: 0, error: `no disk sampled: ${(err as Error).message}` });
    return {
      async stop() {
        await wrote;
        await writer.flush();
        return { samples: 0 };
      },
    };
  }
  return startDiskSampler({ ...opts, file, devices });
}

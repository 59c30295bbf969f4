// The host side of the evidence, vmstat-like, from /proc: CPU split (user, system, idle, iowait, steal)
// over each interval, run queue and blocked processes, memory, paging and swap, context switches. One
// JSON line per interval, appended as it is taken. Linux only.
import fs from 'node:fs';
import { JsonlWriter } from './jsonl-writer';
import { runPeriodic } from './periodic';

export interface CpuTimes {
  user: number;
  nice: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  softirq: number;
  steal: number;
}

export interface ProcStat {
  cpu: CpuTimes;
  ctxt: number;
  intr: number;
  procsRunning: number;
  procsBlocked: number;
}

export function parseProcStat(text: string): ProcStat {
  const out: ProcStat = { cpu: { user: 0, nice: 0, system: 0, idle: 0, iowait: 0, irq: 0, softirq: 0, steal: 0 }, ctxt: 0, intr: 0, procsRunning: 0, procsBlocked: 0 };
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] === 'cpu') {
      const [user, nice, system, idle, iowait, irq, softirq, steal] = f.slice(1, 9).map(Number);
      out.cpu = { user, nice, system, idle, iowait, irq, softirq, steal: steal || 0 };
    } else if (f[0] === 'ctxt') out.ctxt = Number(f[1]);
    else if (f[0] === 'intr') out.intr = Number(f[1]);
    else if (f[0] === 'procs_running') out.procsRunning = Number(f[1]);
    else if (f[0] === 'procs_blocked') out.procsBlocked = Number(f[1]);
  }
  return out;
}

/** /proc/meminfo in kB. */
export function parseMeminfo(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(\w+(?:\(\w+\))?):\s+(\d+)/.exec(line);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

export function parseVmstat(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const [k, v] = line.split(' ');
    if (k && v) out[k] = Number(v);
  }
  return out;
}

export interface HostSample {
  t: string;
  seq: number;
  intervalMs: number;
  /** Percent of all CPU time over the interval (vmstat's us sy id wa st; us includes nice, sy irq+softirq). */
  cpu: { us: number; sy: number; id: number; wa: number; st: number };
  procs: { running: number; blocked: number };
  memKb: { total: number; free: number; available: number; buffers: number; cached: number; dirty: number; swapUsed: number };
  /** Per second over the interval. */
  rates: { ctxt: number; intr: number; pgpginKb: number; pgpgoutKb: number; pswpin: number; pswpout: number };
  loadavg: [number, number, number];
}

interface Raw {
  at: number;
  stat: ProcStat;
  vm: Record<string, number>;
}

function readRaw(): Raw {
  return { at: Date.now(), stat: parseProcStat(fs.readFileSync('/proc/stat', 'utf8')), vm: parseVmstat(fs.readFileSync('/proc/vmstat', 'utf8')) };
}

/** The sample between two raw readings (a pure function, tested on its own). */
export function hostDelta(a: Raw, b: Raw, mem: Record<string, number>, loadavg: [number, number, number], seq: number): HostSample {
  const d = (k: keyof CpuTimes) => b.stat.cpu[k] - a.stat.cpu[k];
  const total = (Object.keys(b.stat.cpu) as Array<keyof CpuTimes>).reduce((s, k) => s + d(k), 0) || 1;
  const pct = (v: number) => Math.round((1000 * v) / total) / 10;
  const secs = Math.max(0.001, (b.at - a.at) / 1000);
  const rate = (v: number) => Math.round((v / secs) * 10) / 10;
  return {
    t: new Date(b.at).toISOString(),
    seq,
    intervalMs: b.at - a.at,
    cpu: { us: pct(d('user') + d('nice')), sy: pct(d('system') + d('irq') + d('softirq')), id: pct(d('idle')), wa: pct(d('iowait')), st: pct(d('steal')) },
    procs: { running: b.stat.procsRunning, blocked: b.stat.procsBlocked },
    memKb: {
      total: mem.MemTotal ?? 0,
      free: mem.MemFree ?? 0,
      available: mem.MemAvailable ?? 0,
      buffers: mem.Buffers ?? 0,
      cached: mem.Cached ?? 0,
      dirty: mem.Dirty ?? 0,
      swapUsed: (mem.SwapTotal ?? 0) - (mem.SwapFree ?? 0),
    },
    rates: {
      ctxt: rate(b.stat.ctxt - a.stat.ctxt),
      intr: rate(b.stat.intr - a.stat.intr),
      pgpginKb: rate((b.vm.pgpgin ?? 0) - (a.vm.pgpgin ?? 0)),
      pgpgoutKb: rate((b.vm.pgpgout ?? 0) - (a.vm.pgpgout ?? 0)),
      pswpin: rate((b.vm.pswpin ?? 0) - (a.vm.pswpin ?? 0)),
      pswpout: rate((b.vm.pswpout ?? 0) - (a.vm.pswpout ?? 0)),
    },
    loadavg,
  };
}

export interface HostSamplerOptions {
  /** The file, or the file a row taken at a time goes to (the app node's hourly files). */
  file: string | ((at: Date) => string);
  /** Default 5000 ms. */
  intervalMs?: number;
  onSample?: (s: HostSample) => void;
  /** Its timer does not keep the process alive (a sampler that outlives the activity that started it). */
  unref?: boolean;
}

export interface HostSampler {
  stop(): Promise<{ samples: number }>;
}

/** Starts now (a baseline reading); the first row is written one interval later. */
export function startHostSampler(opts: HostSamplerOptions): HostSampler {
  const writers = new Map<string, JsonlWriter>();
  const writerAt = (at: Date) => {
    const file = typeof opts.file === 'string' ? opts.file : opts.file(at);
    let w = writers.get(file);
    if (!w) writers.set(file, (w = new JsonlWriter(file)));
    return w;
  };
  let prev = readRaw();
  let samples = 0;
  const loop = runPeriodic(opts.intervalMs ?? 5000, async (seq) => {
    if (seq === 0) return; // the baseline was read at start
    try {
      const cur = readRaw();
      const mem = parseMeminfo(fs.readFileSync('/proc/meminfo', 'utf8'));
      const la = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number) as [number, number, number];
      const s = hostDelta(prev, cur, mem, la, seq);
      prev = cur;
      samples++;
      await writerAt(new Date(cur.at)).write(s);
      opts.onSample?.(s);
    } catch (err) {
      const at = new Date();
      await writerAt(at).write({ t: at.toISOString(), seq, error: (err as Error).message });
    }
  }, opts.unref);
  return {
    async stop() {
      await loop.stop();
      for (const w of writers.values()) await w.flush();
      return { samples };
    },
  };
}

// One repeat's p50 over the seconds of low host steal (lib/protocol/host-quiet.ts), read from its own
// folder for the history (lib/evidence/history.ts, which is synchronous: the weekly alert and
// `rig history` read every run's folders). The report reads the same figure through its own stream
// reader (report/load.ts); this one inflates the stream whole and parses it line by line, and gives
// null for anything it cannot read: a history figure never fails a run, it is only absent.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { quietLatency, type StealSample } from '../protocol/host-quiet';
import { SampleColumns, isSampleHeader, parseSampleRecord } from '../protocol/sample-row';
import { HOST_SAMPLES, LOAD, SAMPLES } from './layout';

/** Streams larger than this (compressed) are not read for the history: a soak's hours would cost seconds a run. */
const MAX_STREAM_BYTES = 8 * 1024 * 1024;

function columnsOf(file: string): SampleColumns | null {
  if (fs.statSync(file).size > MAX_STREAM_BYTES) return null;
  const buf = zlib.gunzipSync(fs.readFileSync(file));
  const cols = new SampleColumns(Math.ceil(buf.length / 24));
  let start = 0;
  let line = 0;
  while (start < buf.length) {
    let end = buf.indexOf(10, start);
    if (end < 0) end = buf.length;
    line++;
    // The header, and `#plan`/`#end` records (stream-plan.ts), carry no request.
    if (end > start && buf[start] !== 35 && !isSampleHeader(buf, start, end)) parseSampleRecord(buf, start, end, line, cols);
    start = end + 1;
  }
  return cols;
}

/**
 * Read once per process: a sealed repeat's files do not change, and the weekly alert and `rig history`
 * read the same runs again (about 30 ms a 30-s repeat at 240 requests/s on this machine kind).
 */
const memo = new Map<string, number | null | undefined>();

/** The quiet p50 (ms) of the repeat in `repeatDir` (memoised), or undefined when it has no host samples, or its files cannot be read; null when too few seconds were quiet. */
export function quietP50OfRepeat(repeatDir: string): number | null | undefined {
  const key = path.resolve(repeatDir);
  if (!memo.has(key)) memo.set(key, readQuietP50(key));
  return memo.get(key);
}

/** The quiet p50 (ms) of the repeat in `repeatDir`, or undefined when it has no host samples, or its files cannot be read; null when too few seconds were quiet. */
function readQuietP50(repeatDir: string): number | null | undefined {
  try {
    // load.json: t = 0 of the stream and the repeat's length (the generator's own summary).
    const load = JSON.parse(fs.readFileSync(path.join(repeatDir, LOAD), 'utf8')) as { started_at?: string; seconds?: number };
    const hostFile = path.join(repeatDir, HOST_SAMPLES);
    if (!load.started_at || !(typeof load.seconds === 'number' && load.seconds > 0) || !fs.existsSync(hostFile)) return undefined;
    const steal: StealSample[] = [];
    for (const l of fs.readFileSync(hostFile, 'utf8').split('\n')) {
      if (!l.trim()) continue;
      const r = JSON.parse(l) as { t?: string; intervalMs?: number; cpu?: { st?: number } };
      if (typeof r.cpu?.st === 'number' && typeof r.intervalMs === 'number' && r.t) steal.push({ endMs: Date.parse(r.t), intervalMs: r.intervalMs, stealPct: r.cpu.st });
    }
    if (!steal.length) return undefined;
    const cols = columnsOf(path.join(repeatDir, SAMPLES));
    if (!cols) return undefined;
    return quietLatency(cols, steal, Date.parse(load.started_at), load.seconds).p50_ms;
  } catch {
    return undefined;
  }
}

// A configuration's workload as the load generator takes it: the spec's arrivals (workload-spec.ts)
// with a trace's file read into its gaps (arrival-trace.ts). The I/O half; the pure rules are in
// lib/protocol. `rig campaign start` calls traceFileProblem before anything runs; the repeat activity
// calls loadArrivals on the worker that sends the load.
import fs from 'node:fs';
import path from 'node:path';
import { TraceError, traceGapsUs, traceTimesUs, type TraceFormat } from '../protocol/arrival-trace';
import { workloadArrivals, type WorkloadSpec } from '../protocol/workload-spec';
import type { ArrivalsInput } from './options';

/** The gaps (µs) of the trace in `file`, replayed at `speed`; TraceError naming the file otherwise. */
export function readTraceGaps(file: string, format: TraceFormat, speed: number): number[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new TraceError(`trace ${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give the path of a trace file readable on the worker that sends the load`);
  }
  try {
    return traceGapsUs(traceTimesUs(text, format), speed);
  } catch (err) {
    if (err instanceof TraceError) throw new TraceError(`trace ${file}: ${err.message}`);
    throw err;
  }
}

/** The load generator's arrivals for a configuration's workload (null: constant). Reads a trace's file. */
export function loadArrivals(w: WorkloadSpec | undefined): ArrivalsInput | null {
  const a = workloadArrivals(w);
  if (!a) return null;
  if (a.shape !== 'trace') return a;
  return { shape: 'trace', speed: a.speed, gaps_us: readTraceGaps(a.file, a.format, a.speed) };
}

/**
 * A trace file that cannot be replayed, or null: checked by the client before the campaign starts.
 * `specDir` resolves a relative path (the spec file's folder).
 */
export function traceFileProblem(w: WorkloadSpec | undefined, specDir: string): string | null {
  const a = workloadArrivals(w);
  if (!a || a.shape !== 'trace') return null;
  try {
    readTraceGaps(path.resolve(specDir, a.file), a.format, a.speed);
    return null;
  } catch (err) {
    if (err instanceof TraceError) return err.message;
    throw err;
  }
}

// The host's CPU steal while something runs (issue 34): /proc/stat read once a second, each second's
// steal as a share of that second's CPU time. The calibration runs one, so that the steal bound a
// repeat is judged against is what the instrument was proven under (lib/protocol/repeat-validity.ts,
// stealBoundFromCalibration), not only a constant.
import fs from 'node:fs';
import type { StealSpread } from '../protocol/host-steal';
import { stealSpread } from '../protocol/repeat-validity';
import { parseProcStat } from './host-sampler';

/** Steal % between two /proc/stat readings (a pure function). */
export function stealPct(a: string, b: string): number | null {
  const x = parseProcStat(a).cpu;
  const y = parseProcStat(b).cpu;
  const keys = Object.keys(y) as Array<keyof typeof y>;
  const total = keys.reduce((s, k) => s + (y[k] - x[k]), 0);
  return total > 0 ? (100 * (y.steal - x.steal)) / total : null;
}

/** Starts watching; `stop()` gives the spread of the per-second steal (null when not one second passed or /proc is absent). */
export function watchSteal(everyMs = 1000): { stop: () => StealSpread | null } {
  const read = () => {
    try {
      return fs.readFileSync('/proc/stat', 'utf8');
    } catch {
      return null;
    }
  };
  const values: number[] = [];
  let last = read();
  const timer = setInterval(() => {
    const now = read();
    if (last !== null && now !== null) {
      const v = stealPct(last, now);
      if (v !== null) values.push(v);
    }
    last = now;
  }, everyMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      return stealSpread(values);
    },
  };
}

// What a slowed build's switch really adds (issue 45), judged against its off side measured beside it:
// the same request, one client, closed loop, in blocks that alternate off and on, so that the host's
// drift falls on both sides alike. The added cost is the shift between the blocks' figures, Hodges-
// Lehmann with its exact Mann-Whitney interval (rank-interval.ts: no resampling, any block count);
// pooled medians and p99s are kept beside it for the reader. Pure: the runner is
// lib/targets/local/switch-calibration.ts.
import { percentiles } from './percentile';
import { shiftInterval } from './rank-interval';

/** The reference service's switches that add a known cost, and what each one's number means. */
export const SLOWED_BUILD_SWITCHES = {
  HC_ADDED_DELAY_MS: { unit: 'ms', perRequestUs: (n: number) => n * 1000 },
  HC_ADDED_CPU_US: { unit: 'µs of CPU', perRequestUs: (n: number) => n },
  HC_ADDED_WAIT_US: { unit: 'µs of wait', perRequestUs: (n: number) => n },
  HC_EXTRA_WAL_BYTES: { unit: 'WAL bytes per event', perRequestUs: () => null },
} as const;
export type SlowedBuildSwitch = keyof typeof SLOWED_BUILD_SWITCHES;

/** A shift and its interval (null: too few blocks for one at this level). */
export interface Added {
  estimate: number;
  interval: [number, number] | null;
  confidence: number | null;
}

export interface SwitchCalibration {
  switch: SlowedBuildSwitch;
  setting: number;
  /** What the switch says it adds to a request's service time, µs (null: the WAL switch says bytes). */
  intendedUs: number | null;
  /** The request timed, e.g. "GET /v1/customers?limit=1". */
  request: string;
  /** Timed requests, both sides together (warm-up requests not counted). */
  requests: number;
  /** Blocks a side. */
  blocks: number;
  offMedianUs: number;
  onMedianUs: number;
  offP99Us: number;
  onP99Us: number;
  /** The shift of the blocks' medians, on - off (µs), with its interval. */
  addedMedianUs: number;
  interval: [number, number] | null;
  confidence: number | null;
  /** The shift of the blocks' p99s (µs): a block's p99 is its few worst requests, so it is loose. */
  addedP99Us: Added;
  /** The WAL switch only: bytes per event written, from pg_stat_wal, off and on, per block. */
  wal?: WalCalibration;
  /** The on side's /healthz `settings`: what the service said it ran with. */
  reported: Record<string, string>;
}

export interface WalCalibration {
  source: 'pg_stat_wal wal_bytes';
  /** Events written, both sides together. */
  events: number;
  blocks: number;
  offBytesPerEvent: number;
  onBytesPerEvent: number;
  /** The shift of the blocks' bytes per event, on - off, with its interval. */
  added: Added;
}

/** One block: the round trips of its timed requests, µs. */
export type Block = readonly number[];

const r1 = (x: number) => Math.round(x * 10) / 10;

function added(off: readonly number[], on: readonly number[]): Added {
  const s = shiftInterval(off, on);
  return { estimate: r1(s.shift), interval: s.interval ? [r1(s.interval[0]), r1(s.interval[1])] : null, confidence: s.confidence === null ? null : Math.round(s.confidence * 10000) / 10000 };
}

/** The latency side of a calibration from its blocks (each side's blocks in the order they ran). */
export function summarizeLatency(
  sw: SlowedBuildSwitch,
  setting: number,
  request: string,
  off: readonly Block[],
  on: readonly Block[],
  reported: Record<string, string>,
): SwitchCalibration {
  if (!off.length || off.length !== on.length) throw new RangeError(`the blocks must pair up, off ${off.length} and on ${on.length}`);
  if ([...off, ...on].some((b) => b.length === 0)) throw new RangeError('a block has no timed request');
  const [offMedian, offP99] = percentiles(off.flat(), [50, 99]);
  const [onMedian, onP99] = percentiles(on.flat(), [50, 99]);
  const medians = (bs: readonly Block[]) => bs.map((b) => percentiles(b, [50])[0]);
  const p99s = (bs: readonly Block[]) => bs.map((b) => percentiles(b, [99])[0]);
  const m = added(medians(off), medians(on));
  return {
    switch: sw,
    setting,
    intendedUs: SLOWED_BUILD_SWITCHES[sw].perRequestUs(setting),
    request,
    requests: off.flat().length + on.flat().length,
    blocks: off.length,
    offMedianUs: r1(offMedian),
    onMedianUs: r1(onMedian),
    offP99Us: r1(offP99),
    onP99Us: r1(onP99),
    addedMedianUs: m.estimate,
    interval: m.interval,
    confidence: m.confidence,
    addedP99Us: added(p99s(off), p99s(on)),
    reported,
  };
}

/** One WAL block: pg_stat_wal's wal_bytes over it and the events it wrote. */
export interface WalBlock {
  walBytes: number;
  events: number;
}

export function summarizeWal(off: readonly WalBlock[], on: readonly WalBlock[]): WalCalibration {
  if (!off.length || off.length !== on.length) throw new RangeError(`the WAL blocks must pair up, off ${off.length} and on ${on.length}`);
  if ([...off, ...on].some((b) => !(b.events > 0))) throw new RangeError('a WAL block wrote no event');
  const per = (bs: readonly WalBlock[]) => bs.map((b) => b.walBytes / b.events);
  const pooled = (bs: readonly WalBlock[]) => bs.reduce((s, b) => s + b.walBytes, 0) / bs.reduce((s, b) => s + b.events, 0);
  return {
    source: 'pg_stat_wal wal_bytes',
    events: [...off, ...on].reduce((s, b) => s + b.events, 0),
    blocks: off.length,
    offBytesPerEvent: r1(pooled(off)),
    onBytesPerEvent: r1(pooled(on)),
    added: added(per(off), per(on)),
  };
}

/** The table `npm run bench:switches` prints: intended beside measured. */
export function switchTable(rows: readonly SwitchCalibration[]): string {
  const iv = (i: [number, number] | null) => (i ? `${i[0]} to ${i[1]}` : 'none');
  const lines = [
    '| switch | setting | request | intended µs | added p50 µs (95 % interval) | off p50 / on p50 µs | added p99 µs | WAL B/event intended | WAL B/event added (interval) | requests |',
    '| --- | ---: | --- | ---: | --- | --- | ---: | ---: | --- | ---: |',
  ];
  for (const r of rows) {
    const wal = r.wal ? `${r.wal.added.estimate} (${iv(r.wal.added.interval)}; off ${r.wal.offBytesPerEvent})` : '-';
    lines.push(
      `| ${r.switch} | ${r.setting} | ${r.request} | ${r.intendedUs ?? '-'} | ${r.addedMedianUs} (${iv(r.interval)}) | ${r.offMedianUs} / ${r.onMedianUs} | ${r.addedP99Us.estimate} | ${r.switch === 'HC_EXTRA_WAL_BYTES' ? r.setting : '-'} | ${wal} | ${r.requests} |`,
    );
  }
  return lines.join('\n');
}

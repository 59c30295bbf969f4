// A load node's clock against the control host's (issue 37), judged before any load. Pure: the
// exchange itself is lib/loadgen/clock-offset.ts.
//
// Nodes start their share of one schedule when their OWN clock reaches the common instant the
// workflow chose, so a node whose clock is off by d sends every request d late (or early) against the
// others: schedule lag that no node's stream can show (each measures sent - intended on its own
// clock). The offset is therefore held to the instrument's own bound on schedule lag (gates.ts: 10 %
// of the p99 limit, 5 ms without one), counting the measurement's uncertainty (half the round trip of
// the exchange it was read from) against the node: a node that cannot show it is within the bound
// refuses, naming itself, before it sends anything.
import { instrumentLagLimitMs } from './gates';

export interface ClockReading {
  /** This node's clock minus the control host's, ms (positive: this node is ahead). */
  offset_ms: number;
  /** Half the round trip of the exchange the offset was read from, ms: the offset is within +/- this. */
  uncertainty_ms: number;
  /** Exchanges made; the one with the shortest round trip is kept (Cristian's algorithm). */
  exchanges: number;
  /**
   * What the offset is against when it is not the control host's `/clock`: a time server every node
   * of the rig reads (ntp-time.ts; an AWS rig's Amazon Time Sync Service). Absent: the control host.
   */
  reference?: string;
}

export interface ClockSample {
  /** This node's clock when the request left and when the answer came, ms since the epoch. */
  sentMs: number;
  receivedMs: number;
  /** The control host's clock in its answer, ms since the epoch. */
  controlMs: number;
}

/** The reading from a node's exchanges: the one with the shortest round trip. */
export function clockReading(samples: readonly ClockSample[]): ClockReading {
  if (samples.length === 0) throw new RangeError('no clock exchange to read an offset from');
  let best = samples[0];
  for (const s of samples) if (s.receivedMs - s.sentMs < best.receivedMs - best.sentMs) best = s;
  const rtt = Math.max(0, best.receivedMs - best.sentMs);
  return { offset_ms: (best.sentMs + best.receivedMs) / 2 - best.controlMs, uncertainty_ms: rtt / 2, exchanges: samples.length };
}

/** The bound a node's clock is held to: the instrument's schedule-lag bound for this p99 limit. */
export function clockBoundMs(p99LimitMs: number | null): number {
  return instrumentLagLimitMs(p99LimitMs);
}

export class ClockRefusal extends Error {
  constructor(
    readonly node: number,
    readonly reading: ClockReading,
    readonly boundMs: number,
  ) {
    super(
      `load node ${node}'s clock is ${reading.offset_ms.toFixed(3)} ms (+/- ${reading.uncertainty_ms.toFixed(3)} ms) off ${reading.reference ? `the time server's (${reading.reference})` : "the control host's"}, past the instrument's bound of ${boundMs} ms: ` +
        'its share of the schedule would go out that late against the other nodes, unseen by any stream. Synchronise its clock (chrony/NTP) and run again',
    );
    this.name = 'ClockRefusal';
  }
}

/** Throws ClockRefusal naming the node when |offset| + uncertainty exceeds the bound. */
export function checkClock(node: number, reading: ClockReading, boundMs: number): void {
  if (Math.abs(reading.offset_ms) + reading.uncertainty_ms > boundMs) throw new ClockRefusal(node, reading, boundMs);
}

// Client-side timestamps (issue 35, item 2): every event carries the time its client says it happened,
// a share of them late or out of order. Pure and fixed before the load starts, like the batch sizes
// (batch-sizes.ts) and the clients (clients.ts): the generator stamps each event by it
// (lib/loadgen/body.ts), the stream's `#plan` record carries it (stream-plan.ts: `timestamps`, version
// 2), and the analysis counts the late and out-of-order events as sent (sent-events.ts).
//
// Event i of request k is stamped at its request's intended time (the schedule's, as a wall-clock
// instant: the generator's time 0 plus intended_us, in whole ms) less an offset:
// - late (a share late_share): lag_ms, a client that held its events (offline, a batch uploaded later);
// - out of order (a share out_of_order_share): a draw of 1..out_of_order_ms ms, so it arrives after
//   events stamped later than it;
// - otherwise 0: on time.
// Which kind an event is, and its draw, are functions of (seed, k, i) alone (hash32), so the analysis
// knows each event's kind from its row's index k without any column in the stream. A repeat of
// request j (duplicates) carries j's body, its timestamps included: the same events, sent again.
import { hash32 } from '../loadgen/prng';
import { MAX_BATCH } from './hardcount-api';

export interface TimestampsPlan {
  /** Share of events stamped lag_ms before their request's time, [0, 1]. */
  late_share: number;
  /** How late a late event is, ms (0 when late_share is 0). */
  lag_ms: number;
  /** Share of events stamped 1..out_of_order_ms ms before their request's time, [0, 1]. */
  out_of_order_share: number;
  out_of_order_ms: number;
  seed: number;
}

export const ON_TIME = 0;
export const LATE = 1;
export const OUT_OF_ORDER = 2;
export type StampKind = typeof ON_TIME | typeof LATE | typeof OUT_OF_ORDER;

/** A late event is at most this late: 30 days. */
export const MAX_LAG_MS = 30 * 86_400_000;
/** An out-of-order event is at most an hour early. */
export const MAX_OUT_OF_ORDER_MS = 3_600_000;
/** When outOfOrderMs is left out: within the second before its request. */
export const DEFAULT_OUT_OF_ORDER_MS = 1000;
const SALT = 0x1b873593;
const U32 = 0x100000000;

const share = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x <= 1;

/** What is wrong with a timestamps plan (naming the spec's field and the fix), or null. */
export function timestampsProblem(t: TimestampsPlan): string | null {
  if (!share(t.late_share)) return `timestamps.lateShare must be a share of events within [0, 1], got ${t.late_share} (0.1: one event in 10 is late)`;
  if (!share(t.out_of_order_share)) return `timestamps.outOfOrderShare must be a share of events within [0, 1], got ${t.out_of_order_share} (0.05: one event in 20)`;
  if (t.late_share + t.out_of_order_share > 1) return `timestamps.lateShare + timestamps.outOfOrderShare must be at most 1, got ${t.late_share + t.out_of_order_share}`;
  if (!(Number.isInteger(t.out_of_order_ms) && t.out_of_order_ms >= 1 && t.out_of_order_ms <= MAX_OUT_OF_ORDER_MS)) return `timestamps.outOfOrderMs must be a whole number of ms within 1..${MAX_OUT_OF_ORDER_MS}, got ${t.out_of_order_ms}`;
  if (t.late_share > 0) {
    if (!(Number.isInteger(t.lag_ms) && t.lag_ms >= 1 && t.lag_ms <= MAX_LAG_MS)) return `timestamps.lagMs must be a whole number of ms within 1..${MAX_LAG_MS} (30 days) with lateShare, got ${t.lag_ms} (3600000: an hour late)`;
    if (t.out_of_order_share > 0 && t.lag_ms <= t.out_of_order_ms) return `timestamps.lagMs (${t.lag_ms}) must be above timestamps.outOfOrderMs (${t.out_of_order_ms}), or a late event could not be told from an out-of-order one: raise lagMs or lower outOfOrderMs`;
  } else if (t.lag_ms !== 0) return `timestamps.lagMs is the late events' lag: give timestamps.lateShare too, or drop lagMs (got ${t.lag_ms} with no late share)`;
  if (!(Number.isInteger(t.seed) && t.seed >= 0 && t.seed <= 0xffffffff)) return `timestamps.seed must be a whole number within 0..4294967295, got ${t.seed}`;
  return null;
}

/** Each event's kind and offset under a plan: the stamps the generator writes and the analysis counts. */
export class ClientTimestamps {
  private readonly late: number;
  private readonly early: number;

  constructor(readonly plan: TimestampsPlan) {
    this.late = plan.late_share;
    this.early = plan.late_share + plan.out_of_order_share;
  }

  /** Event i (0-based) of request k: on time, late or out of order. */
  kindOf(k: number, i: number): StampKind {
    const u = hash32(this.plan.seed, k * MAX_BATCH + i) / U32;
    return u < this.late ? LATE : u < this.early ? OUT_OF_ORDER : ON_TIME;
  }

  /** How many ms before its request's intended time event i of request k is stamped. */
  offsetMs(k: number, i: number): number {
    const kind = this.kindOf(k, i);
    if (kind === ON_TIME) return 0;
    if (kind === LATE) return this.plan.lag_ms;
    return 1 + (hash32(this.plan.seed ^ SALT, k * MAX_BATCH + i) % this.plan.out_of_order_ms);
  }
}

/** Client timestamps as a spec or a caller gives them: every field may be left out. */
export interface TimestampsInput {
  lateShare?: number;
  lagMs?: number;
  outOfOrderShare?: number;
  outOfOrderMs?: number;
  seed?: number;
}

/** The plan of timestamps given with their seed (or `seed` when they have none) and defaults resolved. */
export function resolveTimestamps(t: TimestampsInput, seed: number): TimestampsPlan {
  return {
    late_share: t.lateShare ?? 0,
    lag_ms: t.lagMs ?? 0,
    out_of_order_share: t.outOfOrderShare ?? 0,
    out_of_order_ms: t.outOfOrderMs ?? DEFAULT_OUT_OF_ORDER_MS,
    seed: t.seed ?? seed,
  };
}

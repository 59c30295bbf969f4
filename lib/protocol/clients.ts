// Traffic that looks like several clients (issue 35, item 2): which tenant sends request k, and which
// request k repeats. Pure and fixed before the load starts, like the arrivals: the generator sends by
// it (lib/loadgen/generator.ts), the stream's `#plan` record carries it (stream-plan.ts: `tenants`,
// `duplicates`), and the analysis reads every row's tenant and original back from the row's index k
// (analysis.ts: unique events, each tenant's p99), so the stream's row format does not change.
//
// - Tenants {count, s, seed}: request k's tenant is a Zipf(s) draw over 1..count, from hash32(seed, k)
//   (the rig's counter-based generator), tenant 1 the hottest. Each tenant has its own API key,
//   customers and meter (the local target makes them: lib/targets/tenant-fixtures.ts).
// - Duplicates {share, mode, seed, after_ms}: request k (k > 0) is a repeat when its draw falls under
//   `share`; it then carries the body of an earlier request, the same idempotency keys and
//   quantities, sent with that request's tenant's key. `random`: one of the 1,000 requests before it;
//   `after-timeout`: the last request intended at least after_ms before it (a client that gave up
//   waiting and sent again), or none when the repeat is too early for one (then k is new). A repeat of
//   a repeat is a repeat of the first: `originalOf` follows the chain to a request that is new.
//
// A repeat takes a slot of the schedule (its time is the schedule's), so eventsPerSecond counts every
// request sent, repeats included, and the unique events are fewer by the repeats' share.
import { hash32 } from '../loadgen/prng';

export interface TenantsPlan {
  count: number;
  /** Zipf exponent: the share of tenant i is proportional to 1 / i^s (0: uniform). */
  s: number;
  seed: number;
}

export type DuplicateMode = 'random' | 'after-timeout';
export const DUPLICATE_MODES: readonly DuplicateMode[] = ['random', 'after-timeout'];

export interface DuplicatesPlan {
  /** Share of requests that are repeats, (0, 0.5]. */
  share: number;
  mode: DuplicateMode;
  seed: number;
  /** after-timeout: how long after its original a repeat is sent, ms. */
  after_ms: number;
}

export const MAX_TENANTS = 1000;
export const MAX_DUPLICATE_SHARE = 0.5;
/** A random repeat is of one of this many requests before it. */
export const RANDOM_WINDOW = 1000;
const DUP_SALT = 0x68e31da4;
const U32 = 0x100000000;

/** What is wrong with a tenants plan (naming the field and the fix), or null. */
export function tenantsProblem(t: TenantsPlan): string | null {
  if (!Number.isInteger(t.count) || t.count < 2 || t.count > MAX_TENANTS) return `tenants.count must be a whole number of tenants within 2..${MAX_TENANTS}, got ${t.count} (one tenant: leave tenants out)`;
  if (!(typeof t.s === 'number' && Number.isFinite(t.s) && t.s >= 0 && t.s <= 10)) return `tenants.s must be a Zipf exponent within 0..10 (0: every tenant alike; 1.1: the hottest gets most), got ${t.s}`;
  if (!Number.isInteger(t.seed) || t.seed < 0 || t.seed > 0xffffffff) return `tenants.seed must be a whole number within 0..4294967295, got ${t.seed}`;
  return null;
}

/** What is wrong with a duplicates plan (naming the field and the fix), or null. */
export function duplicatesProblem(d: DuplicatesPlan): string | null {
  if (!(typeof d.share === 'number' && d.share > 0 && d.share <= MAX_DUPLICATE_SHARE)) return `duplicates.share must be a share of requests within (0, ${MAX_DUPLICATE_SHARE}], got ${d.share} (0.05: one request in 20 is sent again)`;
  if (!DUPLICATE_MODES.includes(d.mode)) return `duplicates.mode must be "random" or "after-timeout", got ${JSON.stringify(d.mode)}`;
  if (!Number.isInteger(d.seed) || d.seed < 0 || d.seed > 0xffffffff) return `duplicates.seed must be a whole number within 0..4294967295, got ${d.seed}`;
  if (!(typeof d.after_ms === 'number' && Number.isFinite(d.after_ms) && d.after_ms >= 0 && d.after_ms <= 600_000)) return `duplicates.afterMs must be within 0..600000 ms, got ${d.after_ms}`;
  return null;
}

/** The Zipf distribution's cumulative weights over 1..count, normalised: cdf[i] = P(tenant <= i + 1). */
export function zipfCdf(count: number, s: number): Float64Array {
  const cdf = new Float64Array(count);
  let sum = 0;
  for (let i = 0; i < count; i++) cdf[i] = sum += 1 / Math.pow(i + 1, s);
  for (let i = 0; i < count; i++) cdf[i] /= sum;
  cdf[count - 1] = 1;
  return cdf;
}

/** Each tenant's expected share of the requests (index 0 is tenant 1). */
export function zipfShares(count: number, s: number): number[] {
  const cdf = zipfCdf(count, s);
  return Array.from(cdf, (c, i) => c - (i ? cdf[i - 1] : 0));
}

/**
 * Who sends which request: tenant and original of request k. `at` is the schedule's intended time of
 * request k (µs), which an after-timeout repeat needs to find its original.
 */
export class ClientMap {
  private readonly cdf: Float64Array | null;

  constructor(
    readonly tenants: TenantsPlan | null,
    readonly duplicates: DuplicatesPlan | null,
    private readonly at: (k: number) => number,
  ) {
    this.cdf = tenants ? zipfCdf(tenants.count, tenants.s) : null;
  }

  /** Tenant index (0-based, 0 the hottest) of a request that is new: its own Zipf draw. */
  private draw(k: number): number {
    const cdf = this.cdf;
    if (!cdf || !this.tenants) return 0;
    const u = hash32(this.tenants.seed, k) / U32;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (u < cdf[mid]) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The request k repeats directly (itself when it is new). */
  private repeatOf(k: number): number {
    const d = this.duplicates;
    if (!d || k === 0) return k;
    if (hash32(d.seed, k) / U32 >= d.share) return k;
    if (d.mode === 'random') return k - 1 - (hash32(d.seed ^ DUP_SALT, k) % Math.min(k, RANDOM_WINDOW));
    // The last j < k intended at or before at(k) - after: binary search over the increasing schedule.
    const limit = this.at(k) - Math.round(d.after_ms * 1000);
    if (limit < this.at(0)) return k;
    let lo = 0;
    let hi = k - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.at(mid) <= limit) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The first request whose body request k carries: k itself when k is new, else the original it repeats. */
  originalOf(k: number): number {
    let j = k;
    for (;;) {
      const r = this.repeatOf(j);
      if (r === j) return j;
      j = r;
    }
  }

  /** Tenant index of request k (0-based): its original's draw, since a repeat goes with its original's key. */
  tenantOf(k: number): number {
    return this.draw(this.originalOf(k));
  }
}

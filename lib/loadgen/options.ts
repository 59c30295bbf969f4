// The load generator's options, checked before anything is sent. Each error names the field (with
// its `rig measure` flag) and the fix, so a bad configuration never costs a run.
import { ArrivalsError, arrivalsProblem, type Arrivals } from '../protocol/arrivals';
import { MAX_BATCH } from '../protocol/hardcount-api';
import { duplicatesProblem, tenantsProblem, type DuplicateMode, type DuplicatesPlan, type TenantsPlan } from '../protocol/clients';
import { batchSizesProblem, resolveBatchSizes, type BatchSizesInput, type BatchSizesPlan } from '../protocol/batch-sizes';
import { resolveTimestamps, timestampsProblem, type TimestampsInput, type TimestampsPlan } from '../protocol/client-timestamps';
import { shareProblem, WHOLE, type NodeShare } from '../protocol/node-share';
import { seedFromString } from './prng';

/** Arrivals as a caller gives them: Poisson's seed may be left out (then it comes from the run tag). */
export type ArrivalsInput = Exclude<Arrivals, { shape: 'poisson' }> | { shape: 'poisson'; seed?: number };

export interface LoadOptions {
  /** Root URL of a Hardcount-compatible API, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Bearer key; default env RIG_API_KEY. Never written anywhere. */
  apiKey?: string;
  /** 'open' (default): a fixed schedule whatever the server does. 'closed': V workers (a ceiling). */
  mode?: 'open' | 'closed';
  /** Offered events per second (open loop). requests/s = rate / batch. */
  rate?: number;
  /** Events per request, 1..1000. */
  batch: number;
  /** Length of the repeat in seconds (>= 1). */
  seconds: number;
  /** Open loop: request slots (like k6's maximum VUs); a request whose time comes with none free is dropped. */
  maxInFlight?: number;
  /** Closed loop: workers, each waiting for its reply before its next request. */
  workers?: number;
  /** Probe requests per second (0 = no probe). */
  probeRate?: number;
  probeMaxInFlight?: number;
  /** Customers' external ids the events are spread over; default: the target's own list (pre-flight). */
  customers?: string[];
  /** Meter key of every event; default 'api_calls'. */
  meter?: string;
  /** Run tag in every event's properties.rig_run; default generated. [A-Za-z0-9._:-]{1,64}. */
  runTag?: string;
  /** Seed of quantities and customer choice; default derived from the run tag. */
  seed?: number;
  /** Quantities are drawn from [1, quantityMax]; default 100. */
  quantityMax?: number;
  /** Where the gzip CSV sample stream goes. */
  out: string;
  /** After the schedule ends, how long in-flight requests may still finish (default 10 s). */
  drainSeconds?: number;
  /** When cut short (signal, parent gone), how long in-flight requests may still finish (default 1 s). */
  graceSeconds?: number;
  /** A request with no answer after this long is a transport error (default 30 s). */
  requestTimeoutSeconds?: number;
  /**
   * Seconds the child first drives its own code against a loopback responder of its own, so the
   * measured run starts with an optimised generator (default 1; the target sees none of it).
   */
  warmupSeconds?: number;
  /** Connections opened before the first request (default: enough for ~20 ms of requests, at most maxInFlight). */
  warmConnections?: number;
  /**
   * Open loop: the schedule's shape (lib/protocol/arrivals.ts), `rate` being its base rate; absent or
   * null: the protocol's constant schedule, exactly as before.
   */
  arrivals?: ArrivalsInput | null;
  /**
   * Open loop: this load node's share of the schedule (lib/protocol/node-share.ts): it sends only the
   * requests k with k mod nodes = node, at the schedule's own times. Default: the whole schedule.
   */
  share?: NodeShare;
  /**
   * The instant (ms since the epoch, this host's clock) the repeat starts on every load node: the
   * schedule's time 0. 0 (default): as soon as the connections are warm.
   */
  startAtMs?: number;
  /**
   * Open loop: several tenants (lib/protocol/clients.ts), request k's tenant a seeded Zipf draw over
   * `count`; the seed left out comes from the run tag. Absent or null: the one tenant of apiKey.
   */
  tenants?: { count: number; s: number; seed?: number } | null;
  /** The API keys of tenants 2..count (tenant 1's is apiKey), in order. Never written anywhere. */
  tenantKeys?: string[];
  /** Open loop: a share of requests that repeat an earlier one's body and keys (clients.ts). */
  duplicates?: { share: number; mode: DuplicateMode; afterMs?: number; seed?: number } | null;
  /**
   * Open loop: each request's size drawn from a distribution of mean `batch` (lib/protocol/batch-sizes.ts);
   * the seed left out comes from the run tag. Absent or null: every request carries `batch` events.
   */
  batchSizes?: BatchSizesInput | null;
  /** Open loop: client-side timestamps on every event, a share late or out of order (client-timestamps.ts). */
  timestamps?: TimestampsInput | null;
}

/** Options with every default resolved, as the child receives them (minus the key, which goes by env). */
export interface ResolvedLoadOptions extends Required<Omit<LoadOptions, 'apiKey' | 'rate' | 'maxInFlight' | 'workers' | 'arrivals' | 'tenants' | 'tenantKeys' | 'duplicates' | 'batchSizes' | 'timestamps'>> {
  /** Batch sizes with their seed resolved, or null: `batch` events a request. */
  batchSizes: BatchSizesPlan | null;
  /** Client timestamps with their seed and defaults resolved, or null: events carry none. */
  timestamps: TimestampsPlan | null;
  /** Tenants with their seed resolved, or null: one tenant. */
  tenants: TenantsPlan | null;
  /** Duplicates with their seed and afterMs resolved, or null: none. */
  duplicates: DuplicatesPlan | null;
  /** The schedule's shape with every field resolved (Poisson's seed), or null: constant. */
  arrivals: Arrivals | null;
  rate: number;
  maxInFlight: number;
  workers: number;
  requestRate: number;
}

export class LoadOptionsError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'LoadOptionsError';
  }
}

const TAG_RE = /^[A-Za-z0-9._:-]{1,64}$/;

export function defaultRunTag(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `rig-${stamp}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Checks every field and fills the defaults. Throws LoadOptionsError naming the first bad field. */
export function resolveLoadOptions(o: LoadOptions): ResolvedLoadOptions {
  const bad = (field: string, flag: string, msg: string) => new LoadOptionsError(field, `${field} (${flag}) ${msg}`);
  const mode = o.mode ?? 'open';
  if (mode !== 'open' && mode !== 'closed') throw bad('mode', '--closed-loop', `must be 'open' or 'closed', got '${String(mode)}'`);
  let url: URL;
  try {
    url = new URL(o.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw bad('url', '--url', `must be an http(s) URL like http://127.0.0.1:8080, got '${o.url}'`);
  }
  const batch = o.batch;
  if (!Number.isInteger(batch) || batch < 1 || batch > MAX_BATCH) {
    throw bad('batch', '--batch', `must be a whole number of events per request within 1..${MAX_BATCH}, got ${batch}: e.g. --batch 10`);
  }
  if (!(Number.isFinite(o.seconds) && o.seconds >= 1)) {
    throw bad('seconds', '--seconds', `must be at least 1 second, got ${o.seconds}: e.g. --seconds 600 for a sustained repeat`);
  }
  let rate = 0;
  let workers = 0;
  if (mode === 'open') {
    rate = o.rate ?? NaN;
    if (!(Number.isFinite(rate) && rate > 0)) {
      throw bad('rate', '--rate', `must be > 0 events per second, got ${o.rate}: e.g. --rate 1000 (requests/s = rate / batch)`);
    }
    const nodes = o.share?.nodes ?? 1;
    if (rate / batch / nodes > 100_000) throw bad('rate', '--rate', `asks for ${rate / batch / nodes} requests/s${nodes > 1 ? ' of each load node' : ''}; one generator offers at most 100,000: raise --batch or split the rate over load hosts`);
  } else {
    workers = o.workers ?? NaN;
    if (!Number.isInteger(workers) || workers < 1 || workers > 10_000) {
      throw bad('workers', '--workers', `must be a whole number of closed-loop workers within 1..10000, got ${o.workers}: e.g. --workers 16`);
    }
  }
  const requestRate = mode === 'open' ? rate / batch : 0;
  const maxInFlight = o.maxInFlight ?? (mode === 'open' ? defaultMaxInFlight(requestRate) : workers);
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > 20_000) {
    throw bad('maxInFlight', '--max-in-flight', `must be a whole number of request slots within 1..20000, got ${o.maxInFlight}`);
  }
  const probeRate = o.probeRate ?? 0;
  if (!(Number.isFinite(probeRate) && probeRate >= 0 && probeRate <= 1000)) {
    throw bad('probeRate', '--probe-rate', `must be within 0..1000 requests per second (0 = no probe), got ${o.probeRate}`);
  }
  const probeMaxInFlight = o.probeMaxInFlight ?? Math.max(4, Math.ceil(probeRate * 2));
  if (!Number.isInteger(probeMaxInFlight) || probeMaxInFlight < 1) throw bad('probeMaxInFlight', '--probe-max-in-flight', `must be a whole number >= 1, got ${o.probeMaxInFlight}`);
  if (o.customers !== undefined) checkCustomers(o.customers);
  const meter = o.meter ?? 'api_calls';
  if (typeof meter !== 'string' || meter.length === 0) throw bad('meter', '--meter', 'must be a meter key of the tenant, e.g. --meter api_calls');
  const runTag = o.runTag ?? defaultRunTag();
  if (!TAG_RE.test(runTag)) throw bad('runTag', '--run-tag', `must match ${TAG_RE.source}, got '${runTag}'`);
  const quantityMax = o.quantityMax ?? 100;
  if (!Number.isInteger(quantityMax) || quantityMax < 1 || quantityMax > 1_000_000) throw bad('quantityMax', '--quantity-max', `must be a whole number within 1..1000000, got ${o.quantityMax}`);
  if (typeof o.out !== 'string' || o.out.length === 0) throw bad('out', '--out', 'must name where the sample stream is written');
  const seconds = (v: number | undefined, dflt: number, field: string, flag: string) => {
    const x = v ?? dflt;
    if (!(Number.isFinite(x) && x >= 0)) throw bad(field, flag, `must be >= 0 seconds, got ${v}`);
    return x;
  };
  const share = o.share ?? WHOLE;
  const shareBad = shareProblem(share);
  if (shareBad) throw bad('share', '--node', shareBad);
  if (share.nodes > 1 && mode !== 'open') throw bad('share', '--node', 'splits a schedule over load nodes: a closed loop (a ceiling) has none and runs from one node');
  const startAtMs = o.startAtMs ?? 0;
  if (!(Number.isFinite(startAtMs) && startAtMs >= 0)) throw bad('startAtMs', '--start-at', `must be an instant in ms since the epoch (0: at once), got ${o.startAtMs}`);
  const warm = o.warmConnections ?? Math.min(maxInFlight, Math.max(2, Math.ceil(requestRate * 0.02)), 256);
  const arrivals = resolveArrivals(o.arrivals ?? null, mode, rate, batch, o.seconds, runTag);
  const { tenants, duplicates } = resolveClients(o, mode, runTag);
  const { batchSizes, timestamps } = resolveEvents(o, mode, batch, runTag);
  return {
    url: url.origin + url.pathname.replace(/\/+$/, ''),
    mode,
    rate,
    batch,
    seconds: o.seconds,
    maxInFlight,
    workers,
    probeRate,
    probeMaxInFlight,
    customers: o.customers ?? [],
    meter,
    runTag,
    seed: o.seed ?? seedFromString(runTag),
    quantityMax,
    out: o.out,
    drainSeconds: seconds(o.drainSeconds, 10, 'drainSeconds', '--drain-seconds'),
    graceSeconds: seconds(o.graceSeconds, 1, 'graceSeconds', '--grace-seconds'),
    requestTimeoutSeconds: seconds(o.requestTimeoutSeconds, 30, 'requestTimeoutSeconds', '--request-timeout-seconds') || 30,
    warmConnections: Math.min(warm, maxInFlight),
    warmupSeconds: seconds(o.warmupSeconds, 1, 'warmupSeconds', '--warmup-seconds'),
    requestRate,
    arrivals,
    share,
    startAtMs,
    tenants,
    duplicates,
    batchSizes,
    timestamps,
  };
}

/** Salts of the tenant and duplicate seeds derived from the run tag. */
const TENANTS_SALT = ':tenants';
const DUPLICATES_SALT = ':duplicates';
/** A client's timeout before it sends again, when duplicates.afterMs is left out. */
export const DEFAULT_AFTER_MS = 1000;

function resolveClients(o: LoadOptions, mode: 'open' | 'closed', runTag: string): { tenants: TenantsPlan | null; duplicates: DuplicatesPlan | null } {
  const t = o.tenants ?? null;
  const d = o.duplicates ?? null;
  if ((t || d) && mode !== 'open') throw new LoadOptionsError(t ? 'tenants' : 'duplicates', `${t ? 'tenants' : 'duplicates'} are drawn over an open loop's schedule: a closed loop has none; drop them or the closed loop`);
  if ((t || d) && (o.share?.nodes ?? 1) > 1) throw new LoadOptionsError(t ? 'tenants' : 'duplicates', `${t ? 'tenants' : 'duplicates'} are sent from one load node so far: drop them or the node share`);
  const tenants = t ? { count: t.count, s: t.s, seed: t.seed ?? seedFromString(runTag + TENANTS_SALT) } : null;
  const tBad = tenants && tenantsProblem(tenants);
  if (tBad) throw new LoadOptionsError('tenants', tBad);
  const keys = o.tenantKeys ?? [];
  if (tenants && (keys.length !== tenants.count - 1 || keys.some((k) => typeof k !== 'string' || k.length === 0))) {
    throw new LoadOptionsError('tenantKeys', `tenantKeys must hold the API keys of tenants 2..${tenants.count} (${tenants.count - 1} keys; tenant 1's is apiKey), got ${keys.length}`);
  }
  if (!tenants && keys.length) throw new LoadOptionsError('tenantKeys', 'tenantKeys are the keys of tenants 2..count: give tenants too, or drop them');
  const duplicates = d ? { share: d.share, mode: d.mode, seed: d.seed ?? seedFromString(runTag + DUPLICATES_SALT), after_ms: d.afterMs ?? DEFAULT_AFTER_MS } : null;
  const dBad = duplicates && duplicatesProblem(duplicates);
  if (dBad) throw new LoadOptionsError('duplicates', dBad);
  return { tenants, duplicates };
}

/** Salts of the batch-size and timestamp seeds derived from the run tag. */
const BATCH_SIZES_SALT = ':batch-sizes';
const TIMESTAMPS_SALT = ':timestamps';

function resolveEvents(o: LoadOptions, mode: 'open' | 'closed', batch: number, runTag: string): { batchSizes: BatchSizesPlan | null; timestamps: TimestampsPlan | null } {
  const b = o.batchSizes ?? null;
  const t = o.timestamps ?? null;
  const which = b ? 'batchSizes' : 'timestamps';
  if ((b || t) && mode !== 'open') throw new LoadOptionsError(which, `${which} are drawn over an open loop's requests: a closed loop (a ceiling) sends \`batch\` events without them; drop them or the closed loop`);
  if ((b || t) && (o.share?.nodes ?? 1) > 1) throw new LoadOptionsError(which, `${which} are sent from one load node so far: drop them or the node share`);
  const batchSizes = b ? resolveBatchSizes(b, seedFromString(runTag + BATCH_SIZES_SALT)) : null;
  const bBad = batchSizes && batchSizesProblem(batchSizes, batch);
  if (bBad) throw new LoadOptionsError('batchSizes', bBad);
  const timestamps = t ? resolveTimestamps(t, seedFromString(runTag + TIMESTAMPS_SALT)) : null;
  const tBad = timestamps && timestampsProblem(timestamps);
  if (tBad) throw new LoadOptionsError('timestamps', tBad);
  return { batchSizes, timestamps };
}

/** Salt of a Poisson seed derived from the run tag (so it differs from the quantities' seed). */
const ARRIVALS_SALT = ':arrivals';

function resolveArrivals(a: ArrivalsInput | null, mode: 'open' | 'closed', rate: number, batch: number, seconds: number, runTag: string): Arrivals | null {
  if (a === null) return null;
  if (mode !== 'open') throw new LoadOptionsError('arrivals', 'arrivals (--arrivals) shape an open loop\'s schedule: a closed loop has none; drop them or the closed loop');
  const resolved: Arrivals = a.shape === 'poisson' ? { shape: 'poisson', seed: a.seed ?? seedFromString(runTag + ARRIVALS_SALT) } : a;
  const why = arrivalsProblem(resolved, rate, batch, seconds);
  if (why) throw new LoadOptionsError('arrivals', new ArrivalsError(why).message);
  return resolved;
}

/**
 * Arrivals with Poisson's seed fixed from `runTag` when left out: what the N load nodes of one repeat
 * are given (activities/node-repeat.ts), seeded from the REPEAT's tag, since each node runs under its
 * own (`<tag>.n<i>`) and a seed of its own would give each node another schedule to take its share of.
 */
export function seededArrivals(a: ArrivalsInput | null, runTag: string): ArrivalsInput | null {
  return a?.shape === 'poisson' && a.seed === undefined ? { shape: 'poisson', seed: seedFromString(runTag + ARRIVALS_SALT) } : a;
}

export function checkCustomers(customers: unknown): asserts customers is string[] {
  if (!Array.isArray(customers) || customers.length === 0 || customers.some((c) => typeof c !== 'string' || c.length === 0)) {
    throw new LoadOptionsError('customers', 'customers (--customers) must list at least one customer external id: give --customers FILE (one id per line, or a JSON array)');
  }
}

/**
 * One second of requests, within [32, 2000]: the server may stall for about a second before the
 * generator starts dropping. More slots than that would hide a stall as queueing.
 */
export function defaultMaxInFlight(requestRate: number): number {
  return Math.min(2000, Math.max(32, Math.ceil(requestRate)));
}

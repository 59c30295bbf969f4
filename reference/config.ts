// The service's configuration: the three switches reproduce the spec's walls and their fixes, so a
// campaign can measure either side of each; the slowed builds (added delay, CPU, wait, WAL) add a known
// cost per request, for history and sensitivity to find.

import { extraWalProblem } from './extra-wal';

/** HC_ADDED_CPU_US's ceiling: 100 ms of CPU per request is already a service that does nothing else. */
export const MAX_ADDED_CPU_US = 100_000;
/** HC_ADDED_WAIT_US's ceiling: 60 s, as HC_ADDED_DELAY_MS's. */
export const MAX_ADDED_WAIT_US = 60_000_000;

export type LastUsedMode = 'per-minute' | 'every-request';
export type InsertMode = 'per-event' | 'multi-row';
export type AggregateMode = 'scan' | 'rollup';

export interface ServiceConfig {
  /** The app role's URL (password inside; never logged). */
  databaseUrl: string;
  /** 0 = a free port. Default 0. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Connections in the request pool. Default 20 (the spec's pool; 60 was measured worse). */
  poolSize?: number;
  /**
   * per-minute (default): #818's fix, api_keys.last_used_at written at most once a minute per key.
   * every-request: the hot row, one UPDATE of the key's row per request, held until commit.
   */
  lastUsed?: LastUsedMode;
  /**
   * per-event (default): one `WITH rate AS (SELECT … provider_cost_rates …) INSERT …` per event, as measured.
   * multi-row: one INSERT per batch (#823's lever).
   */
  insert?: InsertMode;
  /**
   * scan (default): count + sum GROUP BY meter over the customer's rows (#819, linear in events).
   * rollup: read usage_daily_rollup (whole days) plus a scan of partial edge days; the ingest path
   * maintains the rollup in the same transaction.
   */
  aggregate?: AggregateMode;
  /**
   * Milliseconds every data request (ingest, aggregate, the lists; not /healthz) waits before its
   * work. Default 0. A slowed build with a known cost: what a history's change point must find and
   * name (issue 36), with the delay it added known exactly.
   */
  addedDelayMs?: number;
  /**
   * Microseconds of CPU work every data request does on the event loop before its work (cpu-work.ts: a
   * busy loop calibrated at start-up, not a sleep). Default 0. A slowed build whose cost is CPU: it
   * holds the event loop, so it also lowers the ceiling (issue 45).
   */
  addedCpuUs?: number;
  /**
   * Microseconds every data request waits before its work, holding neither the CPU nor the event loop
   * (precise-wait.ts: a helper thread's timed wait, finer than Node's 1-ms timers). Default 0 (issue 45).
   */
  addedWaitUs?: number;
  /**
   * Bytes of extra WAL per event written: one more WAL record of exactly this size in the request's
   * transaction per new event (extra-wal.ts: a logical-decoding message). Default 0 (issue 45).
   */
  extraWalBytes?: number;
  /**
   * Seconds over which a burst's added delay falls back to 0 (reference/slow-recovery.ts). Default 0:
   * off. A build that recovers slowly after a spike, for the spike's recovery gate (issue 35).
   */
  slowRecoveryS?: number;
  /** With slowRecoveryS: more data requests than this in a sliding second is a burst. Required then. */
  burstRps?: number;
  /** With slowRecoveryS: the added delay during a burst and at its end, ms. Default 50. */
  slowRecoveryMs?: number;
  /**
   * A TEST SWITCH (reference/drop-late.ts): events whose client timestamp is more than this many ms
   * before the request's arrival are answered as accepted but never written, a lossy build for the
   * reconciliation to catch (issue 35). Default 0: off.
   */
  dropLateMs?: number;
  /** The build this service says it is (its /healthz `build`), e.g. a CI-stamped commit; default none. */
  build?: string;
}

export type ResolvedConfig = Required<ServiceConfig>;

export function resolveConfig(c: ServiceConfig): ResolvedConfig {
  const r: ResolvedConfig = {
    databaseUrl: c.databaseUrl,
    port: c.port ?? 0,
    host: c.host ?? '127.0.0.1',
    poolSize: c.poolSize ?? 20,
    lastUsed: c.lastUsed ?? 'per-minute',
    insert: c.insert ?? 'per-event',
    aggregate: c.aggregate ?? 'scan',
    addedDelayMs: c.addedDelayMs ?? 0,
    addedCpuUs: c.addedCpuUs ?? 0,
    addedWaitUs: c.addedWaitUs ?? 0,
    extraWalBytes: c.extraWalBytes ?? 0,
    slowRecoveryS: c.slowRecoveryS ?? 0,
    burstRps: c.burstRps ?? 0,
    slowRecoveryMs: c.slowRecoveryMs ?? 50,
    dropLateMs: c.dropLateMs ?? 0,
    build: c.build ?? '',
  };
  if (!r.databaseUrl) throw new Error('databaseUrl (HC_DATABASE_URL) is required');
  if (!Number.isInteger(r.port) || r.port < 0 || r.port > 65535) throw new Error(`port ${r.port} is not a TCP port`);
  if (!Number.isInteger(r.addedDelayMs) || r.addedDelayMs < 0 || r.addedDelayMs > 60_000) throw new Error(`added delay ${r.addedDelayMs} (HC_ADDED_DELAY_MS) is not a whole number of milliseconds from 0 to 60000`);
  if (!Number.isInteger(r.addedCpuUs) || r.addedCpuUs < 0 || r.addedCpuUs > MAX_ADDED_CPU_US) throw new Error(`added CPU work ${r.addedCpuUs} (HC_ADDED_CPU_US) is not a whole number of microseconds from 0 (off) to ${MAX_ADDED_CPU_US}`);
  if (!Number.isInteger(r.addedWaitUs) || r.addedWaitUs < 0 || r.addedWaitUs > MAX_ADDED_WAIT_US) throw new Error(`added wait ${r.addedWaitUs} (HC_ADDED_WAIT_US) is not a whole number of microseconds from 0 (off) to ${MAX_ADDED_WAIT_US}`);
  const walProblem = extraWalProblem(r.extraWalBytes);
  if (walProblem) throw new Error(`extra WAL ${r.extraWalBytes} (HC_EXTRA_WAL_BYTES) ${walProblem}`);
  if (!Number.isInteger(r.slowRecoveryS) || r.slowRecoveryS < 0 || r.slowRecoveryS > 3600) throw new Error(`slow recovery ${r.slowRecoveryS} (HC_SLOW_RECOVERY_S) is not a whole number of seconds from 0 (off) to 3600`);
  if (r.slowRecoveryS > 0) {
    if (!Number.isInteger(r.burstRps) || r.burstRps < 1) throw new Error(`HC_SLOW_RECOVERY_S needs HC_BURST_RPS, the requests per second over which the service is in a burst (a whole number >= 1; got ${r.burstRps})`);
    if (!Number.isInteger(r.slowRecoveryMs) || r.slowRecoveryMs < 1 || r.slowRecoveryMs > 60_000) throw new Error(`slow recovery delay ${r.slowRecoveryMs} (HC_SLOW_RECOVERY_MS) is not a whole number of milliseconds from 1 to 60000`);
  }
  if (!Number.isInteger(r.dropLateMs) || r.dropLateMs < 0) throw new Error(`drop-late threshold ${r.dropLateMs} (HC_DROP_LATE_MS, a test switch) is not a whole number of milliseconds >= 0 (0: off)`);
  if (r.build.length > 200 || /[\u0000-\u001f]/.test(r.build)) throw new Error('build (HC_BUILD) must be one line of at most 200 characters');
  if (!Number.isInteger(r.poolSize) || r.poolSize < 1) throw new Error(`pool size ${r.poolSize} is not a positive integer`);
  oneOf('lastUsed (HC_LAST_USED)', r.lastUsed, ['per-minute', 'every-request']);
  oneOf('insert (HC_INSERT)', r.insert, ['per-event', 'multi-row']);
  oneOf('aggregate (HC_AGGREGATE)', r.aggregate, ['scan', 'rollup']);
  return r;
}

function oneOf(name: string, value: string, allowed: string[]): void {
  if (!allowed.includes(value)) throw new Error(`${name} must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
}

/** HC_* environment variables -> config. Throws (without echoing HC_DATABASE_URL) when one is invalid. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const int = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    if (!/^\d+$/.test(v)) throw new Error(`${name} must be a non-negative integer, not ${JSON.stringify(v)}`);
    return Number(v);
  };
  return resolveConfig({
    databaseUrl: env.HC_DATABASE_URL ?? '',
    port: int('HC_PORT'),
    host: env.HC_HOST || undefined,
    poolSize: int('HC_POOL_SIZE'),
    lastUsed: (env.HC_LAST_USED || undefined) as LastUsedMode | undefined,
    insert: (env.HC_INSERT || undefined) as InsertMode | undefined,
    aggregate: (env.HC_AGGREGATE || undefined) as AggregateMode | undefined,
    addedDelayMs: int('HC_ADDED_DELAY_MS'),
    addedCpuUs: int('HC_ADDED_CPU_US'),
    addedWaitUs: int('HC_ADDED_WAIT_US'),
    extraWalBytes: int('HC_EXTRA_WAL_BYTES'),
    slowRecoveryS: int('HC_SLOW_RECOVERY_S'),
    burstRps: int('HC_BURST_RPS'),
    slowRecoveryMs: int('HC_SLOW_RECOVERY_MS'),
    dropLateMs: int('HC_DROP_LATE_MS'),
    build: env.HC_BUILD || undefined,
  });
}

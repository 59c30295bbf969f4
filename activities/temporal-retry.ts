// A call to Temporal itself from inside an activity (the baseline search's visibility queries and
// describe) that a cluster failover or a rolling restart interrupts: the frontend answers UNAVAILABLE
// (or a call runs past its deadline) for a minute or two, then answers again. Such a call is retried
// with backoff through that window, heartbeating, and gives up only once the window is spent: a
// failover never costs a scheduled run its baseline. Any other error (a bad query, not found) goes up
// at once. The activities that are nothing but a Temporal call (requestLease, campaignRunState) get
// the same from their retry policy instead (workflows/temporal-calls.ts).
import { isGrpcServiceError } from '@temporalio/client';

/**
 * The gRPC codes a failover or a restart answers with (grpc/status.proto): retried. The client's own
 * retry of UNAVAILABLE gives up after some 10 attempts in seconds, shorter than a failover.
 */
const TRANSIENT: ReadonlyMap<number, string> = new Map([
  [4, 'DEADLINE_EXCEEDED'],
  [8, 'RESOURCE_EXHAUSTED'],
  [10, 'ABORTED'],
  [14, 'UNAVAILABLE'],
]);

/** The gRPC code of an error or of any error in its cause chain (the client wraps them). */
export function grpcCode(err: unknown): number | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e)) return e.code;
  }
  return undefined;
}

export interface FailoverOptions {
  /** How long to keep retrying (default 5 minutes: a failover's window, well inside the activity's start-to-close). */
  windowMs?: number;
  /** Told each retry (the activity heartbeats it). */
  onRetry?: (line: string) => void;
}

export async function throughFailover<T>(what: string, fn: () => Promise<T>, opts: FailoverOptions = {}): Promise<T> {
  const windowMs = opts.windowMs ?? 5 * 60_000;
  const until = Date.now() + windowMs;
  for (let attempt = 1, delay = 500; ; attempt++, delay = Math.min(delay * 2, 15_000)) {
    try {
      return await fn();
    } catch (err) {
      const code = grpcCode(err);
      if (code === undefined || !TRANSIENT.has(code)) throw err;
      const left = until - Date.now();
      if (left <= 0) throw new Error(`${what}: Temporal did not answer for ${Math.round(windowMs / 1000)} s (${attempt} attempts; last: ${(err as Error).message})`, { cause: err });
      opts.onRetry?.(`${what}: Temporal answered ${TRANSIENT.get(code)} (attempt ${attempt}); trying again in ${Math.min(delay, left)} ms`);
      await new Promise((r) => setTimeout(r, Math.min(delay, left)));
    }
  }
}

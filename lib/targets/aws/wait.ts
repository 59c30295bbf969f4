// Polling AWS until a resource reaches a state (available, deleted, terminated): the SDK's own
// waiters would do, but one small loop with progress lines serves RDS and EC2 alike and heartbeats
// through the activity's progress callback. eventually() is the other kind of wait: a call that fails
// only because AWS has not caught up with itself yet.
import type { ProgressFn } from '../target';
import { isNamed } from './errors';

export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, opts: { timeoutMs: number; intervalMs?: number; onProgress?: ProgressFn }): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(opts.timeoutMs / 60_000)} min waiting for ${what}`);
    opts.onProgress?.(`waiting for ${what}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 5000));
  }
}

/** How long eventually() keeps trying: at most `timeoutMs` (2 minutes), the first pause `firstDelayMs` (2 s), doubling to 30 s. */
export interface EventuallyOptions {
  timeoutMs?: number;
  firstDelayMs?: number;
}

/**
 * Runs `call` again while it fails with one of `notYet` (an eventual-consistency error: a resource
 * just made that another endpoint does not know yet), 2 s doubling to 30 s, for at most `timeoutMs`
 * (2 minutes); any other error, or the last one, is thrown as it is.
 */
export async function eventually<T>(what: string, call: () => Promise<T>, notYet: string[], onProgress: ProgressFn = () => {}, opts: EventuallyOptions = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 2 * 60_000);
  let delay = opts.firstDelayMs ?? 2000;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (!isNamed(err, ...notYet) || Date.now() + delay > deadline) throw err;
      onProgress(`${what}: ${(err as Error).name}, not consistent yet; again in ${Math.round(delay / 1000)} s`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }
}

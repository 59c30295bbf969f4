// Polling AWS until a resource reaches a state (available, deleted, terminated): the SDK's own
// waiters would do, but one small loop with progress lines serves RDS and EC2 alike and heartbeats
// through the activity's progress callback.
import type { ProgressFn } from '../target';

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

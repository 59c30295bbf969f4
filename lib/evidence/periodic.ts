// A sampler loop: take a sample now and then every intervalMs (on a fixed schedule, not drifting with
// the time a sample takes), until stopped. A failing sample is recorded as an error row, not fatal:
// a gap in the evidence is better than a dead sampler.
export interface Periodic {
  /** Stop; resolves after the sample in flight (if any) is done. */
  stop(): Promise<void>;
}

export function runPeriodic(intervalMs: number, tick: (seq: number) => Promise<void>, unref = false): Periodic {
  if (!(intervalMs > 0)) throw new Error(`sampler interval must be positive, not ${intervalMs}`);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const t0 = Date.now();
  const loop = (async () => {
    for (let seq = 0; !stopped; seq++) {
      await tick(seq);
      if (stopped) break;
      // The next tick on the schedule after now: a slow sample skips ticks instead of bunching them.
      const next = t0 + (Math.floor((Date.now() - t0) / intervalMs) + 1) * intervalMs;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, Math.max(0, next - Date.now()));
        if (unref) timer.unref();
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}

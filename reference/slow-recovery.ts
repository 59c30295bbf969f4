// The slow-recovering build's switch (HC_SLOW_RECOVERY_S, issue 35): a service that recovers slowly
// after a spike, with a known shape, so that a spike's recovery gate (lib/protocol/phases.ts) has a
// truth to find. A burst is any moment at which more than HC_BURST_RPS data requests arrived in the
// last second; from then on every data request waits an added delay that starts at
// HC_SLOW_RECOVERY_MS and falls linearly to 0 over HC_SLOW_RECOVERY_S seconds after the burst's last
// moment. At a rate under the threshold the service is the normal one (no delay at all), so its level
// before a spike is the normal service's. The wait is a sleep before any work, like HC_ADDED_DELAY_MS:
// it holds no connection or lock, and costs no CPU.

export interface SlowRecoveryOptions {
  /** More data requests than this in a sliding second is a burst. */
  burstRps: number;
  /** Seconds over which the added delay falls to 0 after the burst's last moment. */
  recoveryS: number;
  /** The added delay during a burst and at its end, ms. */
  delayMs: number;
}

export class SlowRecovery {
  /** Arrival instants (ms) of the last second, oldest at `head`. */
  private arrivals: number[] = [];
  private head = 0;
  /** The last instant the sliding second held more than burstRps arrivals (ms); -Infinity: never. */
  private lastBurstMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly o: SlowRecoveryOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Counts a data request arriving now; returns the ms it must wait before its work. */
  arrive(): number {
    const t = this.now();
    this.arrivals.push(t);
    while (this.arrivals[this.head] <= t - 1000) this.head++;
    // Compact now and then so the array holds about one second of arrivals.
    if (this.head > 4096 && this.head * 2 > this.arrivals.length) {
      this.arrivals = this.arrivals.slice(this.head);
      this.head = 0;
    }
    if (this.arrivals.length - this.head > this.o.burstRps) this.lastBurstMs = t;
    return this.delayAt(t);
  }

  /** The added delay (ms) at instant t: full in a burst, falling linearly to 0 over recoveryS after it. */
  delayAt(t: number): number {
    const since = (t - this.lastBurstMs) / 1000;
    if (!(since < this.o.recoveryS)) return 0;
    return this.o.delayMs * (1 - Math.max(0, since) / this.o.recoveryS);
  }
}

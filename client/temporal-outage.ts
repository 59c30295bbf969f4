// What the waiting commands (`rig campaign start --wait`, `rig campaign watch`, `rig rehearse`) say
// and do while Temporal does not answer: keep waiting, say so once ("Temporal unreachable since T,
// retrying"), then now and then, and once more when it answers again (issue 33). A campaign runs on
// the server and its workers, not in this process: an outage of the server (a restart, a Cloud
// failover of up to 5 minutes) is no reason for the command to die with "Failed to get Workflow
// execution history" (the SDK's ServiceError once its own gRPC retry gives up).

/**
 * gRPC UNAVAILABLE: nobody answered (connection refused or dropped). Not DEADLINE_EXCEEDED: a query
 * that no worker answers ends with it too, and that is no outage.
 */
const UNAVAILABLE = 14;

/** True for an error (or one in its cause chain) that says the server could not be reached. */
export function isTemporalUnreachable(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 8; e = e.cause as typeof e, depth++) {
    if (e.code === UNAVAILABLE) return true;
  }
  return false;
}

/** How often a long outage is mentioned again after the first line. */
export const OUTAGE_REMIND_MS = 60_000;

export class OutageReporter {
  private since: Date | undefined;
  private saidAtMs = 0;

  constructor(
    private readonly say: (line: string) => void,
    private readonly remindMs = OUTAGE_REMIND_MS,
  ) {}

  /** A call that started at `startedAt` failed with `err`: true when it was an outage (then said, once or now and then). */
  failed(err: unknown, startedAt: Date, now = new Date()): boolean {
    if (!isTemporalUnreachable(err)) return false;
    if (!this.since || startedAt < this.since) {
      const first = !this.since;
      this.since = startedAt;
      if (first) {
        this.saidAtMs = now.getTime();
        this.say(`Temporal unreachable since ${this.since.toISOString()}, retrying (the campaign goes on on its workers; this command waits for it)`);
        return true;
      }
    }
    if (now.getTime() - this.saidAtMs >= this.remindMs) {
      this.saidAtMs = now.getTime();
      this.say(`Temporal still unreachable since ${this.since.toISOString()} (${minutes(now.getTime() - this.since.getTime())}), retrying`);
    }
    return true;
  }

  /** A call succeeded: the outage, if any, is over. */
  answered(now = new Date()): void {
    if (!this.since) return;
    this.say(`Temporal answers again (unreachable from ${this.since.toISOString()}, ${minutes(now.getTime() - this.since.getTime())}); following the campaign`);
    this.since = undefined;
  }

  get unreachableSince(): Date | undefined {
    return this.since;
  }
}

function minutes(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 90 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

// A bounded wait for data the cloud publishes late. CloudWatch's AWS/RDS metrics appear minutes after
// the minute they describe (and Enhanced Monitoring's log events seconds to a minute after theirs), so
// a collection started the moment a repeat's load ends would keep a window whose last minute is
// missing. fetchUntilComplete asks again every `pollMs` until the data says it is complete or the
// deadline passes, heartbeating through `onWait` so the repeat activity is not taken for dead, and
// returns what it has at the deadline, marked incomplete (never an error: a short series is still
// evidence, and the file says it is short). When the first answer is already complete, nothing waits:
// that is the case in the tests, whose data is put there before the collection runs.

export interface WaitOptions {
  /** When to stop asking (epoch ms); shared by the collectors of one repeat so the total is bounded. */
  deadline: number;
  pollMs?: number;
  onWait?: (message: string) => void;
  /** For tests: how to sleep. */
  sleep?: (ms: number) => Promise<void>;
}

export async function fetchUntilComplete<T>(fetch: () => Promise<T>, complete: (t: T) => boolean, what: string, opts: WaitOptions): Promise<{ value: T; complete: boolean; waitedS: number }> {
  const began = Date.now();
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const pollMs = opts.pollMs ?? 15_000;
  let value = await fetch();
  while (!complete(value)) {
    const left = opts.deadline - Date.now();
    if (left <= 0) return { value, complete: false, waitedS: Math.round((Date.now() - began) / 1000) };
    opts.onWait?.(`waiting for ${what} to publish the window's end (${Math.ceil(left / 1000)} s left)`);
    await sleep(Math.min(pollMs, left));
    value = await fetch();
  }
  return { value, complete: true, waitedS: Math.round((Date.now() - began) / 1000) };
}

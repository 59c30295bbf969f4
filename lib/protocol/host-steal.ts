// CPU steal on the load host: time the hypervisor gave this VM's CPUs to someone else. On a shared
// 2-core VM it comes in bursts (3.5-9 % seen here during one 30-s rehearsal repeat), and a burst in
// a repeat's last third reads as drift. The verdict never changes for it (a failed repeat is counted
// as failed, as the protocol's "4/5, not rounded up"), but the page names the steal beside the
// failure, so a reader can tell a disturbed host from a target that slowed down.

/** Steal at or over this share of the host's CPU time, in any one sample of a repeat, is named beside the repeat. */
export const STEAL_NOTE_PCT = 2;

export interface StealSpread {
  median: number;
  max: number;
}

/** The note for one repeat's host steal, or null when the host was not disturbed (or not sampled). */
export function stealNote(steal: StealSpread | null | undefined): string | null {
  if (!steal || steal.max < STEAL_NOTE_PCT) return null;
  return `host CPU steal up to ${fmt(steal.max)} % (median ${fmt(steal.median)} %) during this repeat: the hypervisor took CPU from the load host`;
}

function fmt(x: number): string {
  return x >= 10 ? x.toFixed(0) : x.toFixed(1);
}

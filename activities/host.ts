// claimHost: a campaign's first step, taken from the shared queue `rig` by whichever worker is free.
// Its answer names that worker's own host queue, where every step that acts on one machine's disk and
// processes (calibrate, clean-check, provision, teardown, report) then goes, and the watchdog's too.
// Safe to run twice: it makes nothing and only says which host took it (a retry may name another host;
// nothing has been made on either yet).
import { hostQueue } from '../lib/temporal/queues';
import { hostName } from '../lib/tools/host-name';
import type { ClaimHostOutput } from './contract';

/** The claim of a worker serving `host` (a worker started for another host name than this machine's). */
export function claimHostFor(host: string): () => Promise<ClaimHostOutput> {
  return async () => ({ host, hostQueue: hostQueue(host) });
}

export async function claimHost(): Promise<ClaimHostOutput> {
  return claimHostFor(hostName())();
}

// The host sampler of a rig node that serves rather than measures (aws: the app node, where the
// service under test runs). It runs all campaign long inside that node's worker, started with the
// service and checked after every repeat (activities/nodes.ts), writing the campaign's hourly
// app-node/host-samples-*.jsonl files; the page cuts each repeat's window out of them. A sampler that
// lived in the activity of each repeat would need that activity to start before the load and end
// after it on another host; one that runs throughout has no such race, and a worker restart shows up
// as a gap the page names (and a warning in campaign.log), never as a silent zero.
import path from 'node:path';
import { campaignDir, appNodeHostFile } from './layout';
import { startHostSampler, type HostSampler } from './host-sampler';

/** Same interval as the load host's sampler in a repeat, so the two columns compare like with like. */
export const NODE_HOST_INTERVAL_MS = 5000;

interface Running {
  sampler: HostSampler;
  since: string;
  /** Time of the newest row written (ms). */
  lastRowMs: number;
  waiters: Array<() => void>;
}

const running = new Map<string, Running>();

/**
 * Starts the campaign's node host sampler in this process unless it runs already. Returns whether it
 * started now and since when it has run. Idempotent: a retried activity does not start a second one.
 */
export function ensureNodeHostSampler(campaignId: string, intervalMs = NODE_HOST_INTERVAL_MS): { started: boolean; since: string } {
  const have = running.get(campaignId);
  if (have) return { started: false, since: have.since };
  const dir = campaignDir(campaignId);
  const since = new Date().toISOString();
  const seen: Pick<Running, 'lastRowMs' | 'waiters'> = { lastRowMs: 0, waiters: [] };
  // unref: the sampler outlives the activity that started it but never holds a worker's exit.
  const sampler = startHostSampler({
    file: (at) => path.join(dir, ...appNodeHostFile(at).split('/')),
    intervalMs,
    unref: true,
    onSample: (s) => {
      seen.lastRowMs = Date.parse(s.t);
      for (const wake of seen.waiters.splice(0)) wake();
    },
  });
  running.set(campaignId, Object.assign(seen, { sampler, since }));
  return { started: true, since };
}

/**
 * Resolves once a row taken at or after `atMs` is in the file (the row that covers a repeat's end is
 * written up to one interval after it), or after `timeoutMs`; says which.
 */
export async function nodeSamplesThrough(campaignId: string, atMs: number, timeoutMs: number): Promise<boolean> {
  const r = running.get(campaignId);
  if (!r) return false;
  const deadline = Date.now() + timeoutMs;
  while (r.lastRowMs < atMs) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, left);
      r.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
  return true;
}

/** Stops it (tests; a worker that shuts down). */
export async function stopNodeHostSampler(campaignId: string): Promise<number> {
  const have = running.get(campaignId);
  if (!have) return 0;
  running.delete(campaignId);
  return (await have.sampler.stop()).samples;
}

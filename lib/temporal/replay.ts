// Replaying live histories against the code about to be deployed: a change to benchCampaign or
// rigWatchdog that is not behind patched() fails here, before a worker with it strands a campaign in
// flight (an overnight series, a kept rig's watchdog) with a nondeterminism error.
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';

/** The rig's workflow types; the default query lists every execution of them, open or closed. */
export const RIG_WORKFLOW_TYPES = ['benchCampaign', 'rigWatchdog', 'hostLease'];
export const DEFAULT_REPLAY_QUERY = `WorkflowType IN (${RIG_WORKFLOW_TYPES.map((t) => `'${t}'`).join(', ')})`;
/** The executions a deploy must not strand: the rig's workflows still running (`rig replay --open`, the gate before a deploy). */
export const OPEN_REPLAY_QUERY = `${DEFAULT_REPLAY_QUERY} AND ExecutionStatus = 'Running'`;

export interface ReplayOutcome {
  workflowId: string;
  /** The replay's error (a nondeterminism error names the command that no longer matches). */
  error?: string;
}

export interface ReplayOptions {
  query?: string;
  /** At most this many histories, most recent first. */
  limit?: number;
  /** The workflow code to replay against (default: this checkout's workflows). */
  workflowsPath?: string;
  onOutcome?: (o: ReplayOutcome) => void;
}

/** Replays the namespace's histories that `query` lists; each outcome as it is known. */
export async function replayNamespace(client: Client, opts: ReplayOptions = {}): Promise<ReplayOutcome[]> {
  const limit = opts.limit ?? 100;
  const listed = client.workflow.list({ query: opts.query ?? DEFAULT_REPLAY_QUERY, pageSize: Math.min(limit, 100) });
  async function* firstN() {
    let n = 0;
    for await (const h of listed.intoHistories({ concurrency: 4 })) {
      if (n++ >= limit) return;
      yield h;
    }
  }
  const outcomes: ReplayOutcome[] = [];
  for await (const r of Worker.runReplayHistories({ workflowsPath: opts.workflowsPath ?? require.resolve('../../workflows') }, firstN())) {
    const o: ReplayOutcome = { workflowId: r.workflowId, ...(r.error ? { error: r.error.message } : {}) };
    outcomes.push(o);
    opts.onOutcome?.(o);
  }
  return outcomes;
}

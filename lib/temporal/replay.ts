// Replaying live histories against the code about to be deployed: a change to the rig's workflows
// that is not behind patched() fails here, before a worker with it strands an execution in flight (a
// kept rig's watchdog, a host's lease, a campaign started before workers were versioned) with a
// nondeterminism error. A PINNED campaign is left out: it runs to its end on the build whose worker
// took its first task and never on the one being deployed, so replaying it against this checkout says
// nothing, and it would fail once the campaign's old patch branches are gone (docs/architecture.md,
// "Retiring the campaign's patches").
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';

/** The rig's workflow types. */
export const RIG_WORKFLOW_TYPES = ['benchCampaign', 'rigWatchdog', 'hostLease'];
/**
 * Not pinned: the server's TemporalWorkflowVersioningBehavior is 'Pinned' or 'AutoUpgrade' once a
 * versioned worker completed a task, and unset on an execution no versioned worker has touched (a
 * campaign from before versioning, which moves to each new build). `!= 'Pinned'` alone would drop
 * those too (a comparison with an unset attribute is false, as in SQL; so on the dev server), hence
 * the IS NULL. The server's query converter takes IS NULL on its SQL and Elasticsearch stores (and the
 * dev server here); Temporal's List Filter page does not list it, and no test reaches Temporal Cloud.
 */
export const NOT_PINNED = "(TemporalWorkflowVersioningBehavior IS NULL OR TemporalWorkflowVersioningBehavior != 'Pinned')";
/** The default: every execution of the rig's workflows, open or closed, that a new build could run. */
export const DEFAULT_REPLAY_QUERY = `WorkflowType IN (${RIG_WORKFLOW_TYPES.map((t) => `'${t}'`).join(', ')}) AND ${NOT_PINNED}`;
/** The executions a deploy must not strand: those still running that the new build will run (`rig replay --open`, the gate before a deploy). */
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

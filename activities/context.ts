// What every activity needs from its Temporal context, usable outside one too (`rig step` runs the
// same functions in-process): heartbeats with progress, the cancellation signal, the attempt number.
import { Context } from '@temporalio/activity';

function current(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // not inside an activity: `rig step`
  }
}

/** Heartbeat with small progress details (never samples, never secrets); prints when run by hand. */
export function heartbeat(details: unknown): void {
  const ctx = current();
  if (ctx) ctx.heartbeat(details);
  else if (typeof details === 'string') console.error(details);
}

export function attempt(): number {
  return current()?.info.attempt ?? 1;
}

/**
 * When this activity was first scheduled (epoch ms; a retry keeps the first attempt's), so that a
 * bound meant for the whole step counts from there. Undefined outside an activity (`rig step`).
 */
export function firstScheduledMs(): number | undefined {
  return current()?.info.scheduledTimestampMs;
}

/** Aborted when Temporal cancels the activity (delivered through heartbeats). */
export function cancellationSignal(): AbortSignal | undefined {
  return current()?.cancellationSignal;
}

/** The worker's own Temporal client, inside an activity. */
export function workerClient() {
  return current()?.client;
}

export function namespace(): string | undefined {
  return current()?.info.workflowNamespace;
}

/** The task queue this activity was taken from (undefined outside an activity). */
export function activityTaskQueue(): string | undefined {
  return current()?.info.taskQueue;
}

/** The workflow that scheduled this activity (undefined outside an activity). */
export function activityWorkflowId(): string | undefined {
  return current()?.info.workflowExecution?.workflowId;
}

/** The workflow run that scheduled this activity: its id and run id (undefined outside an activity). */
export function activityRun(): { workflowId: string; runId: string } | undefined {
  const wf = current()?.info.workflowExecution;
  return wf ? { workflowId: wf.workflowId, runId: wf.runId } : undefined;
}

// What lets a repeat ride out a Temporal outage without measuring twice (issue 33).
//
// During an outage the worker keeps running its activity: heartbeats fail with a warning (sdk-core's
// heartbeat manager only cancels on NotFound), and a completion that cannot be delivered is retried
// for ~10 s and then dropped ("Network error while completing activity": sdk-core's default client
// retry, max_elapsed_time 10 s). When the server comes back it finds the heartbeat timeout passed and
// schedules the next attempt, and the old attempt's next heartbeat is answered NotFound, which the SDK
// turns into a cancellation with `cancellationDetails.notFound`.
//
// So, in one worker process:
// - a NotFound while the campaign still runs does not stop the load (`loadSignal`): the attempt runs to
//   its end and is judged as usual; only a real cancellation (the workflow asked), the worker shutting
//   down, the local start-to-close, or a campaign that is gone stop it;
// - the next attempt first waits for any earlier attempt of the same repeat still running here
//   (`awaitEarlierAttempts`), then judges what it left (activities/repeat.ts), so two loads never run
//   side by side and a finished load is never measured again. Cancelled while it waits (the campaign
//   cancelled, the worker shutting down), it stops the earlier one's load too: the server no longer
//   reaches that one, only this one.
// Another process cannot be running one: the data queue is this host's, and one worker per build and
// host holds it (lib/tools/worker-lock.ts); a worker that died left its attempt to the files.
import { CancelledFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { heartbeat } from './context';

interface Running {
  work: Promise<unknown>;
  /** Stops its load (a later attempt of the same repeat was cancelled while it waited for it). */
  stop: AbortController;
}

const running = new Map<string, Running>();

/** Registers an attempt as running in this process until `work` settles. */
export function trackAttempt<T>(key: string, work: Promise<T>, stop: AbortController): Promise<T> {
  const entry = { work, stop };
  running.set(key, entry);
  const done = () => {
    if (running.get(key) === entry) running.delete(key);
  };
  work.then(done, done);
  return work;
}

function current(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // `rig step`: no Temporal around it
  }
}

/**
 * Waits for earlier attempts still running in this process, heartbeating meanwhile; says which it
 * waited on. Cancelled while waiting (not by a NotFound: then the attempt after this one waits for
 * both), it stops them, waits for them to record themselves, and throws the cancellation.
 */
export async function awaitEarlierAttempts(keys: readonly string[], details: (key: string) => unknown): Promise<string[]> {
  const waited: string[] = [];
  const ctx = current();
  for (const key of keys) {
    const entry = running.get(key);
    if (!entry) continue;
    waited.push(key);
    const beat = setInterval(() => heartbeat(details(key)), 5_000);
    heartbeat(details(key));
    const own = ctx?.cancellationSignal;
    const onCancel = () => {
      if (!ctx?.cancellationDetails?.notFound) entry.stop.abort(own?.reason);
    };
    own?.addEventListener('abort', onCancel, { once: true });
    if (own?.aborted) onCancel();
    try {
      await entry.work.catch(() => undefined);
    } finally {
      clearInterval(beat);
      own?.removeEventListener('abort', onCancel);
    }
    if (entry.stop.signal.aborted) throw own?.reason instanceof CancelledFailure ? own.reason : new CancelledFailure('repeat cancelled');
  }
  return waited;
}

/**
 * The signal a load stops on: the activity's cancellation, except a NotFound while the campaign is
 * still running (the server timed this attempt out while it could not hear its heartbeats; the next
 * attempt waits for this one and judges it), and `stop` (a later attempt, cancelled while it waited).
 * Outside an activity (`rig step`) only `stop`.
 */
export function loadSignal(stop: AbortSignal): AbortSignal {
  const ctx = current();
  if (!ctx) return stop;
  const own = ctx.cancellationSignal;
  const ctl = new AbortController();
  const follow = () => {
    const d = ctx.cancellationDetails;
    if (!d?.notFound) return ctl.abort(own.reason);
    // Which workflow closed or lost the attempt: ask (the worker's own client). A campaign gone or
    // closed stops the load; one still running keeps it; no answer (the server away again) keeps it.
    const wf = ctx.info.workflowExecution;
    let client: Context['client'];
    try {
      client = ctx.client;
    } catch {
      return ctl.abort(own.reason); // no client to ask: stop, as before
    }
    if (!wf) return ctl.abort(own.reason);
    // The worker ties its client's calls inside an activity to the activity's own (now aborted)
    // signal: this one gets a signal of its own.
    void client
      .withAbortSignal(new AbortController().signal, () => client.workflow.getHandle(wf.workflowId, wf.runId).describe())
      .then(
        (desc) => {
          if (desc.status.name !== 'RUNNING') ctl.abort(own.reason);
        },
        (err: unknown) => {
          if ((err as { name?: string }).name === 'WorkflowNotFoundError') ctl.abort(own.reason);
        },
      );
  };
  if (own.aborted) follow();
  else own.addEventListener('abort', follow, { once: true });
  return AbortSignal.any([ctl.signal, stop]);
}

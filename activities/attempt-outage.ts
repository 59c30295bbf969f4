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
//   side by side and a finished load is never measured again.
// Another process cannot be running one: the data queue is this host's, and one worker per build and
// host holds it (lib/tools/worker-lock.ts); a worker that died left its attempt to the files.
import { Context } from '@temporalio/activity';
import { heartbeat } from './context';

const running = new Map<string, Promise<unknown>>();

/** Registers an attempt as running in this process until `work` settles. */
export function trackAttempt<T>(key: string, work: Promise<T>): Promise<T> {
  running.set(key, work);
  const done = () => {
    if (running.get(key) === work) running.delete(key);
  };
  work.then(done, done);
  return work;
}

/** Waits for earlier attempts still running in this process, heartbeating meanwhile; says which it waited on. */
export async function awaitEarlierAttempts(keys: readonly string[], details: (key: string) => unknown): Promise<string[]> {
  const waited: string[] = [];
  for (const key of keys) {
    const work = running.get(key);
    if (!work) continue;
    waited.push(key);
    const beat = setInterval(() => heartbeat(details(key)), 5_000);
    heartbeat(details(key));
    try {
      await work.catch(() => undefined);
    } finally {
      clearInterval(beat);
    }
  }
  return waited;
}

/**
 * The signal a load stops on: the activity's cancellation, except a NotFound while the campaign is
 * still running (the server timed this attempt out while it could not hear its heartbeats; the next
 * attempt waits for this one and judges it). Undefined outside an activity (`rig step`).
 */
export function loadSignal(): AbortSignal | undefined {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return undefined;
  }
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
    void client.workflow
      .getHandle(wf.workflowId, wf.runId)
      .describe()
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
  return ctl.signal;
}

// Reading Temporal failures in workflow code: the reason a step stopped, and whether it was a
// refusal (a check that said no) rather than an infrastructure failure.
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, TemporalFailure, TimeoutFailure } from '@temporalio/workflow';

/** The innermost message: an ActivityFailure's own message is generic, its cause says what happened. */
export function failureReason(err: unknown): string {
  let e: unknown = err;
  while ((e instanceof ActivityFailure || e instanceof ChildWorkflowFailure) && e.cause) e = e.cause;
  if (e instanceof TemporalFailure || e instanceof Error) return e.message;
  return String(e);
}

function innermostApplicationFailure(err: unknown): ApplicationFailure | undefined {
  let e: unknown = err;
  while (e instanceof TemporalFailure) {
    if (e instanceof ApplicationFailure) return e;
    e = e.cause;
  }
  return undefined;
}

/** Refusals are non-retryable ApplicationFailures whose type ends in "Refusal" (see activities/refusal.ts). */
export function isRefusal(err: unknown): boolean {
  return innermostApplicationFailure(err)?.type?.endsWith('Refusal') ?? false;
}

/** The refusal's type ("EvidenceOwnerRefusal", ...), or undefined for any other failure. */
export function refusalType(err: unknown): string | undefined {
  return isRefusal(err) ? innermostApplicationFailure(err)?.type ?? undefined : undefined;
}

/**
 * An activity no worker took within its schedule-to-start timeout, as a failure that names the task
 * queue and how to start a worker for it (undefined for any other failure). Without the timeout a
 * campaign whose data-plane worker is missing waits forever, and a schedule then skips every later run.
 */
export function noWorkerFailure(err: unknown, queue: string, timeout: string): ApplicationFailure | undefined {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof TimeoutFailure) || err.cause.timeoutType !== 'SCHEDULE_TO_START') return undefined;
  return ApplicationFailure.nonRetryable(
    `no worker took ${err.activityType} from the task queue ${queue} within ${timeout}: start one on the rig's host ` +
      `(npx rig worker polls rig, rig-host-<its host name> and rig-data-<its host name>), then start the campaign again`,
    'NoWorker',
  );
}

type AsyncFns = Record<string, (...args: never[]) => Promise<unknown>>;

/** The same activities, each of whose schedule-to-start timeouts fails naming `queue` (noWorkerFailure). */
export function namingQueue<A extends object>(acts: A, queue: string, timeout: string): A {
  return new Proxy(acts, {
    get(target, prop) {
      const fn = (target as unknown as AsyncFns)[prop as string];
      if (typeof fn !== 'function') return fn;
      return (...args: never[]) =>
        fn(...args).catch((err: unknown) => {
          throw noWorkerFailure(err, queue, timeout) ?? err;
        });
    },
  });
}

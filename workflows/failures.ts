// Reading Temporal failures in workflow code: the reason a step stopped, and whether it was a
// refusal (a check that said no) rather than an infrastructure failure.
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, TemporalFailure } from '@temporalio/workflow';

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

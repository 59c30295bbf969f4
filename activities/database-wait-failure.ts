// The database wait's "no" in Temporal's terms. DatabaseNotAvailable (past the step's bound, or a
// status the database will not leave by itself) becomes a non-retryable ApplicationFailure, so the
// activity's retry policy cannot stretch the bound into several bounds. Other errors (a throttled
// describe, a network blip) stay retryable, within the step's schedule-to-close timeout.
import { ApplicationFailure } from '@temporalio/common';
import { DatabaseNotAvailable } from '../lib/targets/database-not-available';

export function databaseWaitFailure(err: unknown): unknown {
  if (!(err instanceof DatabaseNotAvailable)) return err;
  return ApplicationFailure.nonRetryable(err.message, 'DatabaseNotAvailable', { reason: err.reason, ...(err.status ? { status: err.status } : {}) });
}

// Turning the libraries' "no" into Temporal's: a refusal is a non-retryable ApplicationFailure whose
// type ends in "Refusal" (workflows/failures.ts reads that), carrying the reason. Other errors are left
// as they are, so Temporal retries them with backoff.
import { ApplicationFailure } from '@temporalio/common';
import { BringupRefusal } from '../lib/targets/bringup/refusal';
import { PartitionMismatchError } from '../lib/targets/fixtures-scope';
import { ClusterPlaceRefusal } from '../lib/targets/cluster-place-refusal';
import { PreflightRefusal } from '../lib/targets/preflight-refusal';
import { ServiceRefusal } from '../lib/targets/service-refusal';
import { TestSwitchRefusal } from '../lib/tools/test-switch';

export function refusal(type: `${string}Refusal`, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, type, ...(details === undefined ? [] : [details]));
}

/** Runs fn, converting the libraries' refusals; everything else passes through unchanged. */
export async function refusing<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof BringupRefusal) throw refusal('BringupRefusal', err.message, { check: err.check });
    if (err instanceof PartitionMismatchError) throw refusal('PartitionRefusal', err.message);
    if (err instanceof ServiceRefusal) throw refusal('ServiceRefusal', err.message);
    if (err instanceof ClusterPlaceRefusal) throw refusal('ClusterPlaceRefusal', err.message);
    if (err instanceof PreflightRefusal) throw refusal('PreflightRefusal', err.message, { failed: err.failed });
    if (err instanceof TestSwitchRefusal) throw refusal('TestSwitchRefusal', err.message, { variable: err.variable });
    throw err;
  }
}

// resolveSpec: the campaign's spec with every default applied, run as the workflow's first activity
// so that its result is recorded in the history (older campaigns: a local activity's marker). A default changed later in
// lib/protocol/spec.ts then changes only new campaigns: one in flight replays the spec it started with,
// because its defaults are history, not code.
// Safe to run twice: pure; the same input gives the same spec.
import { ApplicationFailure } from '@temporalio/common';
import { parseCampaignSpec, SpecError, type CampaignSpec, type CampaignSpecInput } from '../lib/protocol/spec';

export async function resolveSpec(input: CampaignSpecInput): Promise<CampaignSpec> {
  let spec: CampaignSpec;
  try {
    spec = parseCampaignSpec(input);
  } catch (err) {
    // A bad spec is not retried: the failure names each field (SpecError's message) and carries the issues.
    if (err instanceof SpecError) throw ApplicationFailure.nonRetryable(err.message, 'InvalidSpec', err.issues);
    throw err;
  }
  return spec;
}

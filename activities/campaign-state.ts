// The run state of a campaign's workflow, as its server sees it, for the watchdog: a campaign that was
// terminated (or timed out) ran none of its own teardown, so its watchdog tears down then instead of
// at the deadline. Read-only: safe to run any number of times.
import { WorkflowNotFoundError } from '@temporalio/client';
import type { CampaignRunStateInput, CampaignRunStateOutput } from './contract';
import { workerClient } from './context';

export async function campaignRunState(input: CampaignRunStateInput): Promise<CampaignRunStateOutput> {
  const client = workerClient();
  if (!client) throw new Error('campaignRunState runs only inside a worker (it asks the worker\'s Temporal client)');
  try {
    const d = await client.workflow.getHandle(input.workflowId).describe();
    return { status: d.status.name };
  } catch (err) {
    // Gone from the server (retention): nothing to say; the watchdog keeps its deadline.
    if (err instanceof WorkflowNotFoundError) return { status: 'NOT_FOUND' };
    throw err;
  }
}

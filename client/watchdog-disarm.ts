// Disarming a campaign's watchdog from outside the campaign: `rig step teardown` removes a kept rig
// (end: keep) by hand, and its watchdog must not stay armed until the deadline for a rig that is gone.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { disarmSignal } from '../workflows/messages';

/** Disarms `<campaign workflow id>.watchdog` when it is still armed; says what it found, in one line. */
export async function disarmWatchdog(client: Client, campaignWorkflowId: string): Promise<string> {
  const id = `${campaignWorkflowId}.watchdog`;
  const handle = client.workflow.getHandle(id);
  try {
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return `watchdog ${id}: already ${d.status.name.toLowerCase()}, nothing to disarm`;
    await handle.signal(disarmSignal);
    return `watchdog ${id}: disarmed`;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return `watchdog ${id}: not on this server, nothing to disarm`;
    throw err;
  }
}

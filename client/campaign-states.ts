// For `rig check --target aws --reap`: how a campaign's workflow stands, asked of Temporal, so that a
// rig resource whose rig:expires stamp never landed is reaped once its campaign is closed
// (lib/targets/aws/reap.ts). The campaign id is the workflow id made folder-safe
// (lib/protocol/campaign-id.ts): for the ids that change (a schedule's runs carry a ':' time) the
// lookup finds nothing and the resource is skipped, never guessed. A server that does not answer
// leaves every such resource skipped, saying so.
import { WorkflowNotFoundError } from '@temporalio/client';
import { connectClient, type RigClient } from './connect';

export interface CampaignStates {
  /** The workflow's status name (COMPLETED, RUNNING, ...), NOT_FOUND, or undefined when it could not be asked. */
  of(campaignId: string): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Connects on the first question only: a reap that meets no resource without an expiry needs no Temporal. */
export function campaignStates(say: (line: string) => void = (l) => console.error(l)): CampaignStates {
  let connecting: Promise<RigClient | undefined> | undefined;
  const client = () =>
    (connecting ??= connectClient().catch((err: unknown) => {
      say(`note: Temporal did not answer (${(err as Error).message.split('\n')[0]}): a rig resource without rig:expires is skipped, not reaped`);
      return undefined;
    }));
  return {
    async of(campaignId) {
      const rc = await client();
      if (!rc) return undefined;
      try {
        return (await rc.client.workflow.getHandle(campaignId).describe()).status.name;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
        return undefined;
      }
    },
    close: async () => {
      if (connecting) await (await connecting)?.close();
    },
  };
}

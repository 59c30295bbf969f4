// Following a running campaign: its `progress` query once a second until the workflow closes, then
// its result. Used by `rig campaign watch`, `rig campaign start --wait` and `rig rehearse`.
import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { CampaignResult } from '../lib/protocol/campaign-result';
import { progressQuery } from '../workflows/messages';
import { progressLine } from './progress-view';

export async function watchCampaign(client: Client, campaignId: string, out: NodeJS.WriteStream = process.stdout): Promise<CampaignResult> {
  const handle = client.workflow.getHandle(campaignId);
  const tty = Boolean(out.isTTY);
  let last = '';
  let lastKey = '';
  let closed = false;
  const result = handle.result().then(
    (r) => r as CampaignResult,
    (err: unknown) => {
      // A failed campaign carries its result as the failure's details (see workflows/campaign.ts).
      const details = err instanceof WorkflowFailedError ? (err.cause as { details?: unknown[] } | undefined)?.details : undefined;
      if (details && details[0] && typeof details[0] === 'object') return details[0] as CampaignResult;
      throw err;
    },
  );
  void result.finally(() => (closed = true)).catch(() => {});
  while (!closed) {
    try {
      const p = await handle.query(progressQuery);
      const line = progressLine(p, Date.now());
      // A terminal redraws every second (the elapsed time moves); a log gets a line when the state changes.
      const key = tty ? line : progressLine(p);
      if (key !== lastKey) {
        out.write(tty ? `\r\x1b[K${line}` : `${line}\n`);
        last = line;
        lastKey = key;
      }
    } catch {
      // no worker to answer the query right now (a restart, say): keep waiting for the result
    }
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
  }
  if (tty && last) out.write('\n');
  return result;
}

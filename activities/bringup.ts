// bring-up: the fixtures (200 live customers, a meter, one API key) and the checks that refuse a rig
// which would measure the wrong thing (lib/targets/bringup). The API key goes to the rig's 0600
// secrets file; the customers to a plain file the load generator reads. Neither enters history.
// Safe to run twice: the tenant and its customers are found and reused, and the API key is replaced
// (the old one stops working), so a retry leaves one tenant and one live key.
import fs from 'node:fs';
import path from 'node:path';
import { EvidenceStore } from '../lib/evidence/store';
import { bringUp as bringUpRig } from '../lib/targets/bringup/bringup';
import { rigDbUrls, storeApiKey } from '../lib/targets/local';
import { rigPaths } from '../lib/targets/local/rig-paths';
import type { BringUpInput, StepSummary } from './contract';
import { heartbeat } from './context';
import { refusing } from './refusal';

/** The fixtures' customer external ids, one per line, beside the rig's other files. */
export function customersFile(campaignId: string): string {
  return path.join(rigPaths(campaignId).dir, 'customers.txt');
}

export async function bringUp(input: BringUpInput): Promise<StepSummary> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  const urls = rigDbUrls(input.campaignId);
  const res = await refusing(() =>
    bringUpRig({
      ownerUrl: urls.ownerUrl,
      serviceUrl: input.rig.serviceUrl,
      fixtures: { customers: input.customers },
      log: (line) => heartbeat(line),
    }),
  );
  storeApiKey(input.campaignId, res.fixtures.apiKey.reveal());
  fs.writeFileSync(customersFile(input.campaignId), res.fixtures.customers.join('\n') + '\n');
  for (const c of res.checks) store.appendLog('info', `bring-up check ${c.check}: ${c.detail}`);
  return {
    summary: `${res.fixtures.customers.length} customers in livemode=${res.fixtures.livemode}, meter ${res.fixtures.meter}; checks passed: ${res.checks.map((c) => c.check).join(', ')}`,
  };
}

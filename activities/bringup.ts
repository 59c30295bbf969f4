// bring-up: the fixtures (200 live customers, a meter, one API key) and the checks that refuse a rig
// which would measure the wrong thing (lib/targets/bringup). The API key goes to the target's secret
// store; the customers to a plain file in the target's working folder that the load generator reads.
// Neither enters history.
// Safe to run twice: the tenant and its customers are found and reused, and the API key is replaced
// (the old one stops working), so a retry leaves one tenant and one live key.
import fs from 'node:fs';
import path from 'node:path';
import { EvidenceStore } from '../lib/evidence/store';
import { bringUp as bringUpRig } from '../lib/targets/bringup/bringup';
import type { Target } from '../lib/targets/target';
import type { BringUpInput, StepSummary } from './contract';
import { heartbeat } from './context';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';
import { refusing } from './refusal';

/** The fixtures' customer external ids, one per line, beside the rig's other files. */
export function customersFile(target: Target, campaignId: string): string {
  return path.join(target.workDir(campaignId), 'customers.txt');
}

export function bringUpActivities(deps: ActivityDeps) {
  async function bringUp(input: BringUpInput): Promise<StepSummary> {
    const target = rigTarget(deps, input.rig);
    const store = EvidenceStore.forCampaign(input.campaignId);
    const urls = await target.dbUrls(input.campaignId);
    const availabilityZones = await target.availabilityZones(input.campaignId);
    const res = await refusing(() =>
      bringUpRig({
        ownerUrl: urls.ownerUrl,
        serviceUrl: input.rig.serviceUrl,
        fixtures: { customers: input.customers },
        ...(availabilityZones ? { availabilityZones } : {}),
        log: (line) => heartbeat(line),
      }),
    );
    await target.apiKeys.store(input.campaignId, res.fixtures.apiKey.reveal());
    fs.writeFileSync(customersFile(target, input.campaignId), res.fixtures.customers.join('\n') + '\n');
    for (const c of res.checks) store.appendLog('info', `bring-up check ${c.check}: ${c.detail}`);
    return {
      summary: `${res.fixtures.customers.length} customers in livemode=${res.fixtures.livemode}, meter ${res.fixtures.meter}; checks passed: ${res.checks.map((c) => c.check).join(', ')}`,
    };
  }
  return { bringUp };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { bringUp } = bringUpActivities(defaultDeps);

// bring-up: the fixtures (200 live customers, a meter, one API key) and the checks that refuse a rig
// which would measure the wrong thing (lib/targets/bringup). The API key goes to the target's secret
// store; the customers to a plain file in the target's working folder that the load generator reads.
// Neither enters history.
// Safe to run twice: the tenant and its customers are found and reused, and the API key is replaced
// (the old one stops working), so a retry leaves one tenant and one live key.
import fs from 'node:fs';
import path from 'node:path';
import { SERVICE_FILE } from '../lib/evidence/layout';
import { EvidenceStore } from '../lib/evidence/store';
import { HEALTH_PATH, type HealthResponse } from '../lib/protocol/hardcount-api';
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

/** GET /healthz's `settings` (string values only; null when it has none) and `build` (when a one-line string). */
async function reportedSettings(serviceUrl: string, apiKey: string): Promise<{ settings: Record<string, string> | null; build?: string }> {
  const res = await fetch(new URL(HEALTH_PATH, serviceUrl), { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as HealthResponse;
  const build = typeof body.build === 'string' && body.build.trim() && body.build.length <= 200 && !/[\u0000-\u001f]/.test(body.build) ? { build: body.build.trim() } : {};
  const s = body.settings as Record<string, unknown> | undefined;
  if (!s || typeof s !== 'object') return { settings: null, ...build };
  return { settings: Object.fromEntries(Object.entries(s).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v)).map(([k, v]) => [k, String(v)])), ...build };
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
    // The settings the service says it runs with, beside the numbers: the spec says what was asked,
    // this is what the build that answered reports (null when its /healthz has no `settings`).
    // Its build too, when it names one (`rig history` names the run by it: issue 36).
    const said = await reportedSettings(input.rig.serviceUrl, res.fixtures.apiKey.reveal()).catch((err: unknown) => {
      store.logWarning(`could not read the service's settings from its /healthz: ${(err as Error).message}`);
      return { settings: null } as { settings: null; build?: string };
    });
    const reported = said.settings;
    // Write-once evidence: a retried bring-up (whose service may have been restarted elsewhere) keeps the first.
    if (!store.exists(SERVICE_FILE)) store.writeJson(SERVICE_FILE, { serviceUrl: input.rig.serviceUrl, reported, ...(said.build ? { build: said.build } : {}) });
    store.appendLog('info', `the service at ${input.rig.serviceUrl} reports settings: ${reported ? Object.entries(reported).map(([k, v]) => `${k}=${v}`).join(', ') : 'none (its /healthz has no "settings")'}${said.build ? `; build ${said.build}` : ''}`);
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

// The steps that make a rig whole on its own hosts after provisioning, where the target has such hosts
// (Target.nodes: AWS). prepareRig runs on the rig's data-plane queue (the load node, the only host that
// reaches the database): roles, database, default privileges, migrations. startRigService runs on the
// app node's queue: the service under test; its URL (the app node's address) replaces the handle's.
// Both are idempotent: a retry after a kill makes nothing twice and keeps a service that answers.
// The app node also samples its own host (lib/evidence/node-host-sampler.ts) from the service's start;
// keepAppNodeEvidence, after every repeat, makes sure it still runs and (through withShipping) sends
// what it wrote home.
import fs from 'node:fs';
import { APP_NODE_DIR } from '../lib/evidence/layout';
import { ensureNodeHostSampler, NODE_HOST_INTERVAL_MS, nodeSamplesThrough } from '../lib/evidence/node-host-sampler';
import { EvidenceStore } from '../lib/evidence/store';
import type { RigHandle } from '../lib/protocol/campaign-result';
import type { ServiceParameters } from '../lib/targets/target';
import type { RigInput, StepSummary } from './contract';
import { heartbeat } from './context';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';
import { refusing } from './refusal';

export interface StartRigServiceInput extends RigInput {
  service: ServiceParameters;
}

function nodesOf(deps: ActivityDeps, rig: Pick<RigHandle, 'target'>) {
  const target = rigTarget(deps, rig);
  if (!target.nodes) throw new Error(`the ${target.name} target has no nodes to prepare: its provision makes the rig whole`);
  return target.nodes;
}

export function nodeActivities(deps: ActivityDeps) {
  async function prepareRig(input: RigInput): Promise<StepSummary> {
    const summary = await nodesOf(deps, input.rig).prepareDatabase(input.campaignId, (line) => heartbeat(line));
    EvidenceStore.forCampaign(input.campaignId).appendLog('info', `database prepared on the load node: ${summary}`);
    return { summary };
  }

  async function startRigService(input: StartRigServiceInput): Promise<{ serviceUrl: string; summary: string }> {
    const r = await refusing(() => nodesOf(deps, input.rig).startService(input.campaignId, input.service, (line) => heartbeat(line)));
    const sampler = appNodeSampler(input.campaignId);
    const summary = `service ${r.reused ? 'already running' : 'started'} on the app node at ${r.serviceUrl}; ${sampler}`;
    EvidenceStore.forCampaign(input.campaignId).appendLog('info', summary);
    return { serviceUrl: r.serviceUrl, summary };
  }

  async function keepAppNodeEvidence(input: RigInput): Promise<StepSummary> {
    nodesOf(deps, input.rig);
    const summary = appNodeSampler(input.campaignId);
    // The repeat has ended (the workflow calls this after it): wait for the row that covers its end.
    const through = await nodeSamplesThrough(input.campaignId, Date.now(), 2 * NODE_HOST_INTERVAL_MS + 1000);
    return { summary: through ? summary : `${summary}; no row since the repeat ended within ${2 * NODE_HOST_INTERVAL_MS + 1000} ms` };
  }
  return { prepareRig, startRigService, keepAppNodeEvidence };
}

/**
 * Makes sure the app node's host sampler runs in this worker. One that has to start again after it
 * ran before (its files exist: the worker restarted) leaves a gap, said in campaign.log.
 */
function appNodeSampler(campaignId: string): string {
  const store = EvidenceStore.forCampaign(campaignId);
  const ranBefore = fs.existsSync(store.path(APP_NODE_DIR));
  const s = ensureNodeHostSampler(campaignId);
  if (!s.started) return `app node host sampler running since ${s.since}`;
  if (ranBefore) {
    store.logWarning(`the app node's host sampler was not running (its worker restarted); started again at ${s.since}: repeats before then have a gap in the app node's host samples`);
    return `app node host sampler started again at ${s.since} (its worker restarted)`;
  }
  return `app node host sampler started at ${s.since}`;
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { prepareRig, startRigService, keepAppNodeEvidence } = nodeActivities(defaultDeps);

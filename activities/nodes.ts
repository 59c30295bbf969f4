// The steps that make a rig whole on its own hosts after provisioning, where the target has such hosts
// (Target.nodes: AWS). prepareRig runs on the rig's data-plane queue (the load node, the only host that
// reaches the database): roles, database, default privileges, migrations. startRigService runs on the
// app node's queue: the service under test; its URL (the app node's address) replaces the handle's.
// Both are idempotent: a retry after a kill makes nothing twice and keeps a service that answers.
import { EvidenceStore } from '../lib/evidence/store';
import type { RigHandle } from '../lib/protocol/campaign-result';
import type { ServiceParameters } from '../lib/targets/target';
import type { RigInput, StepSummary } from './contract';
import { heartbeat } from './context';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';

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
    const r = await nodesOf(deps, input.rig).startService(input.campaignId, input.service, (line) => heartbeat(line));
    const summary = `service ${r.reused ? 'already running' : 'started'} on the app node at ${r.serviceUrl}`;
    EvidenceStore.forCampaign(input.campaignId).appendLog('info', summary);
    return { serviceUrl: r.serviceUrl, summary };
  }
  return { prepareRig, startRigService };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { prepareRig, startRigService } = nodeActivities(defaultDeps);

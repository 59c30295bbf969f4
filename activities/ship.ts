// Evidence written on a rig's own nodes (AWS: the load node, the app node) must reach the control host
// (lib/targets/aws/evidence-sync.ts). withShipping wraps each step that runs on a node so that what it
// wrote is shipped BEFORE the step reports done: a completed repeat the workflow has counted is a
// repeat whose files are off the node. A ship that fails fails the step; its retry measures nothing
// again (a completed attempt is judged from its files, activities/repeat.ts) and ships again.
// On a target without nodes (local) it does nothing.
import type { RigHandle } from '../lib/protocol/campaign-result';
import { heartbeat } from './context';
import { rigTarget, type ActivityDeps } from './deps';

type OnRig = { campaignId: string; rig?: Pick<RigHandle, 'target'> };

export async function shipFromNode(deps: ActivityDeps, input: OnRig): Promise<void> {
  if (!input.rig) return;
  const nodes = rigTarget(deps, input.rig).nodes;
  if (nodes) await nodes.shipEvidence(input.campaignId, (line) => heartbeat(line));
}

export function withShipping<I extends OnRig, O>(deps: ActivityDeps, fn: (input: I) => Promise<O>): (input: I) => Promise<O> {
  return async (input: I) => {
    const out = await fn(input);
    await shipFromNode(deps, input);
    return out;
  };
}

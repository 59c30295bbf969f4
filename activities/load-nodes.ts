// The rig's load nodes (issue 37): startLoadNodes makes (or finds) the N workers that each send a
// node's share of a repeat, on the claimed host's queue, right after provisioning. Safe to run twice:
// the target reuses what lives (the local target's load-workers.ts) and replaces what died, or finds
// what its provisioning launched and launches a lost node again (the aws target's load-nodes.ts, relaunch.ts).
import type { RigHandle } from '../lib/protocol/campaign-result';
import { EvidenceStore } from '../lib/evidence/store';
import type { LoadNodeHandle } from '../lib/targets/target';
import { TestSwitchRefusal } from '../lib/tools/test-switch';
import { heartbeat } from './context';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';
import { refusal } from './refusal';

export interface StartLoadNodesInput {
  campaignId: string;
  rig: RigHandle;
  nodes: number;
}

export function loadNodeActivities(deps: ActivityDeps) {
  async function startLoadNodes(input: StartLoadNodesInput): Promise<LoadNodeHandle[]> {
    const target = rigTarget(deps, input.rig);
    if (!target.startLoadNodes) throw refusal('LoadNodesRefusal', `target "${target.name}" has one load host: load.nodes > 1 runs on targets "local" and "aws"`);
    const store = EvidenceStore.forCampaign(input.campaignId);
    try {
      const nodes = await target.startLoadNodes(input.campaignId, input.nodes, (line) => heartbeat(line));
      store.appendLog('info', `load nodes: ${nodes.map((n) => `node ${n.node} at ${n.address} on ${n.queue}`).join('; ')}`);
      return nodes;
    } catch (err) {
      // Not root, or no free subnet (the local target's LoadNamespaceRefusal, by name: activities never import a target): no retry changes that.
      if ((err as Error).name === 'LoadNamespaceRefusal') throw refusal('LoadNodesRefusal', (err as Error).message);
      // A test-only switch set outside the test suite (RIG_AWS_TIME_SYNC): until it is unset, the same.
      if (err instanceof TestSwitchRefusal) throw refusal('TestSwitchRefusal', err.message, { variable: err.variable });
      throw err;
    }
  }
  return { startLoadNodes };
}

/** Bound to the real targets, for in-process callers. */
export const { startLoadNodes } = loadNodeActivities(defaultDeps);

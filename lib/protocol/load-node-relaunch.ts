// Which of an AWS rig's load nodes are launched again, and with which RunInstances ClientToken
// (issue 37: a lost node is replaced when the load-nodes step runs again after an attempt with a
// failed node, as the local target replaces a dead worker). Pure: the instances AWS lists and the
// relaunches the rig's record holds in, the decisions out (lib/targets/aws/relaunch.ts acts on them).
//
// Why a token of its own per relaunch: EC2 keeps a ClientToken bound to the instance it launched for
// at least 24 hours, even after that instance is terminated ("Ensuring idempotency", EC2 API
// reference): RunInstances with the lost node's original token returns the lost instance, not a new
// one. So relaunch k of node i gets `<node i's token>-r<k>-<suffix>`, and the entry carrying it is
// written to the record BEFORE RunInstances is called: a retry after a crash anywhere after that
// write finds the entry without an instance and sends the same token (one instance, never two).
//
// The rules, per node i of 1..N-1 (node 0, the rig's own load node, serves the data plane and is
// never relaunched here: a lost node 0 stays an error naming it):
// - an instance of node i pending or running: nothing to do. A pending entry (no instance recorded)
//   then gets that instance: it is the relaunch's own (a lost instance is terminated before its entry
//   is written, and never comes back up);
// - else the node is lost (terminated, shutting-down, stopped, stopping, or not listed at all): its
//   stopped or stopping instances are terminated first (a stopped instance still bills its volume and
//   address), and it is launched with the last entry's token when that entry has no instance yet
//   (a retry), else with a new entry's (k = the last k + 1).

/** States in which an instance is, or is becoming, a node whose worker answers. */
export const UP_STATES: readonly string[] = ['pending', 'running'];
/** States of a lost node that still bill and must be terminated before its replacement (a stopped instance keeps its volume). */
export const TERMINATE_FIRST_STATES: readonly string[] = ['stopped', 'stopping'];

/** One load node instance as AWS lists it (a terminated one may be left out: it counts as lost). */
export interface NodeInstance {
  id: string;
  state: string;
  /** 0: the rig's own load node; 1..N-1: the rig:load-node tag. */
  node: number;
}

/** One relaunch as the rig's record keeps it (lib/targets/aws/record.ts `relaunches`). */
export interface LoadNodeRelaunch {
  node: number;
  /** 1, 2, ... per node: the token's -r<k>. */
  k: number;
  clientToken: string;
  /** The lost node's instances seen when it was decided (a terminated one AWS no longer lists is not among them). */
  replaces: string[];
  /** When the entry was written (ISO 8601). */
  decidedAt: string;
  /** The user data's own deadline and build id, fixed here: a retried RunInstances must send the same parameters as the first. */
  lifetimeMinutes: number;
  buildId: string;
  /** The instance RunInstances returned (or found as its own later); absent: the call may not have been made yet. */
  instanceId?: string;
}

export interface RelaunchDecision {
  node: number;
  k: number;
  clientToken: string;
  /** Stopped or stopping instances of the node, terminated before the launch. */
  terminate: string[];
  /** The lost node's instances that AWS still lists. */
  replaces: string[];
  /** The record's entry without an instance: its token (and parameters) again, not a new one. */
  pending?: LoadNodeRelaunch;
}

export interface RelaunchPlan {
  relaunch: RelaunchDecision[];
  /** Entries without an instance whose node is up again: the instance is the relaunch's (recorded, so a later loss gets a new token). */
  settle: Array<{ node: number; k: number; instanceId: string }>;
}

/** Relaunch k of a node: its provisioning token, -r<k>, and the provisioning's suffix (64 ASCII characters at most, EC2's limit). */
export function relaunchToken(nodeToken: string, k: number, suffix: string): string {
  const token = `${nodeToken}-r${k}${suffix ? `-${suffix}` : ''}`;
  if (token.length > 64) throw new Error(`a ClientToken has at most 64 characters: ${token}`);
  return token;
}

/**
 * The decision for nodes 1..nodes-1 (pure). `nodeToken(i)` is node i's provisioning token (rigNames'
 * extraLoadNode(i).clientToken), `suffix` the provisioning's token suffix.
 */
export function relaunchPlan(input: {
  nodes: number;
  instances: readonly NodeInstance[];
  relaunches: readonly LoadNodeRelaunch[];
  nodeToken: (node: number) => string;
  suffix: string;
}): RelaunchPlan {
  const plan: RelaunchPlan = { relaunch: [], settle: [] };
  for (let node = 1; node < input.nodes; node++) {
    const mine = input.instances.filter((i) => i.node === node);
    const entries = input.relaunches.filter((r) => r.node === node).sort((a, b) => a.k - b.k);
    const last = entries.at(-1);
    const open = last && last.instanceId === undefined ? last : undefined;
    const up = mine.find((i) => UP_STATES.includes(i.state));
    if (up) {
      if (open && !open.replaces.includes(up.id)) plan.settle.push({ node, k: open.k, instanceId: up.id });
      continue;
    }
    const terminate = mine.filter((i) => TERMINATE_FIRST_STATES.includes(i.state)).map((i) => i.id);
    const replaces = mine.map((i) => i.id);
    if (open) {
      plan.relaunch.push({ node, k: open.k, clientToken: open.clientToken, terminate, replaces, pending: open });
    } else {
      const k = (last?.k ?? 0) + 1;
      plan.relaunch.push({ node, k, clientToken: relaunchToken(input.nodeToken(node), k, input.suffix), terminate, replaces });
    }
  }
  return plan;
}

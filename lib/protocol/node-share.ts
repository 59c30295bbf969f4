// One schedule, split over N load nodes (issue 37): node i of N sends the requests k of the
// configuration's schedule with k mod N = i, so the N nodes together send every request of it at its
// own intended time (the merged arrivals are the configured rate exactly) and each offers rate / N.
// The same for the probe's schedule (its request k goes to node k mod N).
//
// The split is a filter over the request INDEX k, never over time: whatever gives request k its
// intended time (today stream-plan.ts's scheduledUs, floor(k x 1e6 / rate); other arrival shapes
// later) composes with it unchanged. Pure.
export interface NodeShare {
  /** This node's index, 0-based. */
  node: number;
  /** Load nodes that share the schedule (>= 1). */
  nodes: number;
}

export const WHOLE: NodeShare = { node: 0, nodes: 1 };

/** What is wrong with a share, or null. */
export function shareProblem(s: NodeShare): string | null {
  if (!Number.isInteger(s.nodes) || s.nodes < 1 || s.nodes > 1024) return `nodes must be a whole number within 1..1024, got ${s.nodes}`;
  if (!Number.isInteger(s.node) || s.node < 0 || s.node >= s.nodes) return `node must be a whole number within 0..${s.nodes - 1}, got ${s.node}`;
  return null;
}

/** Request k of the schedule is this node's. */
export function owns(s: NodeShare, k: number): boolean {
  return k % s.nodes === s.node;
}

/** The schedule's index of this node's m-th request (m = 0, 1, 2, ...). */
export function requestOf(s: NodeShare, m: number): number {
  return s.node + m * s.nodes;
}

/** How many of the schedule's first `total` requests (k in [0, total)) are this node's. */
export function shareCount(s: NodeShare, total: number): number {
  return total <= s.node ? 0 : Math.floor((total - s.node - 1) / s.nodes) + 1;
}

/** The shares of N nodes, in node order. */
export function sharesOf(nodes: number): NodeShare[] {
  return Array.from({ length: nodes }, (_, node) => ({ node, nodes }));
}

/** Node i's run tag: unique per node (its idempotency keys, its rows in the database), derived from the repeat's. */
export function nodeRunTag(runTag: string, s: NodeShare): string {
  return s.nodes === 1 ? runTag : `${runTag}.n${s.node}`;
}

// The local target's load hosts (issue 37): with `load.nodes: N`, each load node is a rig worker in a
// network namespace of its own, with its own address, made by the rig and removed at teardown.
//
// Node i of campaign C lives in namespace `rigload-<h>-<i>` (h: 8 hex of sha256(C), so a second run of
// the same step finds the same names), joined to this machine by a veth pair on a /30 of 10.231.S.0/24:
// this machine's end 10.231.S.(4i+1), the node 10.231.S.(4i+2). S is picked once, free on this machine,
// and recorded by the caller (the ledger): the same campaign then always reads the same addresses. No
// default route: a node reaches this machine's end of its own pair (where the rig's service, Temporal
// and the control host's clock must listen or be relayed), and nothing else.
//
// Every step is idempotent: a namespace or link already there is kept (checked by name), and removal of
// one already gone is a no-op, so a retry after a kill makes nothing twice and a second teardown
// finds nothing. Needs root (ip netns); a host without it is refused before anything is made.
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { appendLedger, liveResources } from './ledger';

export interface LoadNamespace {
  node: number;
  /** The namespace's name (`ip netns exec <ns> ...`). */
  ns: string;
  /** This machine's end of the pair. */
  hostIp: string;
  /** The node's own address, inside the namespace. */
  nodeIp: string;
  hostLink: string;
  nodeLink: string;
}

export class LoadNamespaceRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoadNamespaceRefusal';
  }
}

const ip = (args: string[]): string => {
  try {
    return execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`ip ${args.join(' ')}: ${e.stderr?.toString().trim() || e.message}`);
  }
};

function campaignHash(campaignId: string): string {
  return crypto.createHash('sha256').update(campaignId).digest('hex').slice(0, 8);
}

/** The names and addresses of node i of a campaign on subnet 10.231.`subnet`.0/24 (pure). */
export function loadNamespaceOf(campaignId: string, node: number, subnet: number): LoadNamespace {
  if (!Number.isInteger(node) || node < 0 || node > 62) throw new RangeError(`a local rig has load nodes 0..62, got ${node}`);
  if (!Number.isInteger(subnet) || subnet < 0 || subnet > 255) throw new RangeError(`subnet must be within 0..255, got ${subnet}`);
  const h = campaignHash(campaignId);
  // Link names are at most 15 bytes (IFNAMSIZ - 1): `rl` + 8 hex + `h`/`n` + node.
  return { node, ns: `rigload-${h}-${node}`, hostIp: `10.231.${subnet}.${4 * node + 1}`, nodeIp: `10.231.${subnet}.${4 * node + 2}`, hostLink: `rl${h}h${node}`, nodeLink: `rl${h}n${node}` };
}

/** The namespaces of this machine whose names are the campaign's (`rig check`, teardown's last look). */
export function campaignNamespaces(campaignId: string): string[] {
  const prefix = `rigload-${campaignHash(campaignId)}-`;
  return listNamespaces().filter((n) => n.startsWith(prefix));
}

function listNamespaces(): string[] {
  return ip(['netns', 'list'])
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0])
    .filter(Boolean);
}

/**
 * A 10.231.S.0/24 that no address of this machine is in (for a campaign's first namespace). The search
 * starts at a subnet drawn from the campaign's id, not at 1: two campaigns making their namespaces at
 * the same moment (test files side by side) both saw S = 1 free and made the same addresses twice, and
 * one's worker could not reach its gateway ("exited during start-up"). From different starts they
 * collide only when their ids hash near each other, about 1 in 250.
 */
export function freeSubnet(campaignId = ''): number {
  const used = ip(['-o', 'addr']);
  const start = parseInt(campaignHash(campaignId), 16) % 254;
  for (let k = 0; k < 254; k++) {
    const s = ((start + k) % 254) + 1;
    if (!used.includes(` 10.231.${s}.`)) return s;
  }
  throw new LoadNamespaceRefusal('no free 10.231.S.0/24 on this machine for the load nodes\' namespaces: remove leftovers (ip netns list | grep rigload-)');
}

/** Makes node i's namespace and its veth pair (or finds them made). */
export function createLoadNamespace(campaignId: string, node: number, subnet: number): LoadNamespace {
  if (process.getuid?.() !== 0) throw new LoadNamespaceRefusal(`load.nodes > 1 on the local target needs root (ip netns add): run the rig worker as root, or set load.nodes to 1`);
  const n = loadNamespaceOf(campaignId, node, subnet);
  if (!listNamespaces().includes(n.ns)) ip(['netns', 'add', n.ns]);
  const inNs = (...args: string[]) => ip(['netns', 'exec', n.ns, 'ip', ...args]);
  const hostHas = ip(['-o', 'link', 'show']).includes(` ${n.hostLink}@`);
  if (!hostHas) {
    // A pair half made (the node's end already moved in, the host's gone) is rebuilt whole.
    if (inNs('-o', 'link', 'show').includes(` ${n.nodeLink}@`)) inNs('link', 'del', n.nodeLink);
    ip(['link', 'add', n.hostLink, 'type', 'veth', 'peer', 'name', n.nodeLink]);
    ip(['link', 'set', n.nodeLink, 'netns', n.ns]);
  }
  if (!ip(['-o', 'addr', 'show', 'dev', n.hostLink]).includes(` ${n.hostIp}/30`)) ip(['addr', 'add', `${n.hostIp}/30`, 'dev', n.hostLink]);
  ip(['link', 'set', n.hostLink, 'up']);
  if (!inNs('-o', 'addr', 'show', 'dev', n.nodeLink).includes(` ${n.nodeIp}/30`)) inNs('addr', 'add', `${n.nodeIp}/30`, 'dev', n.nodeLink);
  inNs('link', 'set', n.nodeLink, 'up');
  inNs('link', 'set', 'lo', 'up');
  return n;
}

/** Removes node i's namespace and its pair; false when both were gone already. */
export function removeLoadNamespace(n: Pick<LoadNamespace, 'ns' | 'hostLink'>): boolean {
  let removed = false;
  // Deleting either end of a veth pair deletes both; the namespace's removal takes its end with it.
  if (ip(['-o', 'link', 'show']).includes(` ${n.hostLink}@`)) {
    ip(['link', 'del', n.hostLink]);
    removed = true;
  }
  if (listNamespaces().includes(n.ns)) {
    ip(['netns', 'del', n.ns]);
    removed = true;
  }
  return removed;
}

/**
 * The campaign's N load nodes' namespaces, each written to its ledger BEFORE it is made (so a crash
 * mid-way leaves a ledger that names it, and teardown removes it), and recorded made after. A second
 * call (a retry) reuses the subnet the ledger recorded and makes nothing twice.
 */
export function provisionLoadNamespaces(campaignId: string, nodes: number): LoadNamespace[] {
  const live = liveResources(campaignId).filter((r) => r.kind === 'load-netns');
  const subnet = live.find((r) => r.detail.subnet !== undefined)?.detail.subnet ?? freeSubnet(campaignId);
  const out: LoadNamespace[] = [];
  for (let i = 0; i < nodes; i++) {
    const id = `load-netns-${i}`;
    const n = loadNamespaceOf(campaignId, i, subnet);
    const detail = { ns: n.ns, hostLink: n.hostLink, subnet, node: i };
    if (!live.some((r) => r.id === id)) appendLedger(campaignId, 'intend', id, 'load-netns', detail);
    out.push(createLoadNamespace(campaignId, i, subnet));
    if (!live.some((r) => r.id === id && r.madeAt)) appendLedger(campaignId, 'made', id, 'load-netns', { ...detail, url: `http://${n.nodeIp}` });
  }
  return out;
}

/** The argv that runs `argv` inside node i's namespace (its worker, as a child of this one). */
export function inLoadNamespace(n: Pick<LoadNamespace, 'ns'>, argv: readonly string[]): string[] {
  return ['ip', 'netns', 'exec', n.ns, ...argv];
}

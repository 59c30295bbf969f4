// `load.nodes`: how many load hosts offer one repeat's schedule (issue 37). Given on the spec (every
// open-loop schedule of the campaign) or on one configuration (that configuration's repeats and its
// warm-up); the configuration's wins. Absent everywhere: 1, and nothing of the campaign changes (no
// default is written into the resolved spec, so a spec without it resolves, hashes and runs exactly as
// before). Pure.
//
// N nodes split ONE schedule (node-share.ts): node i sends requests i, i+N, i+2N, ... so the merged
// arrivals are the configured rate exactly. The ceiling is a closed loop (no schedule to split) and
// always runs from one node.
import { z } from 'zod';

/** One load node as the workflow addresses it: its worker's queue, the clock it reads its own against, its own address. */
export interface LoadNodeHandle {
  node: number;
  queue: string;
  /**
   * What the node reads its clock against before the load (lib/loadgen/clock-offset.ts): the control
   * host's `GET /clock` (http://, the local target's gateway), or a time server every node of the rig
   * shares (ntp://host:port, the aws target's Amazon Time Sync Service); null: not measured.
   */
  clockUrl: string | null;
  address: string;
}

/**
 * Set in a load node's worker whose network reaches this machine only through a gateway (the local
 * target's namespaces: lib/targets/local/load-workers.ts): the address at which the node reaches what
 * listens on this machine's loopback (the service), port for port.
 */
export const LOAD_NODE_GATEWAY_ENV = 'RIG_LOAD_NODE_GATEWAY';

/** The URL a load node uses for `url`: a loopback host is the gateway's address when there is one (pure). */
export function throughGateway(url: string, gateway: string | undefined): string {
  if (!gateway) return url;
  const u = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) return url;
  u.hostname = gateway;
  return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
}

/** More load hosts than this is not a rig's job (and each is a worker, a namespace, a clock to check). */
export const MAX_LOAD_NODES = 64;
/** One generator offers at most this many requests per second (lib/loadgen/options.ts says the same). */
export const MAX_REQUESTS_PER_NODE = 100_000;

export const LoadSpec = z.strictObject({
  nodes: z
    .number({ error: (iss) => (iss.input === undefined ? 'load.nodes is required in a "load" block' : `load.nodes must be a whole number of load hosts within 1..${MAX_LOAD_NODES} (got ${String(iss.input)})`) })
    .int(`load.nodes must be a whole number of load hosts within 1..${MAX_LOAD_NODES}`)
    .min(1, `load.nodes must be at least 1 (one load host)`)
    .max(MAX_LOAD_NODES, `load.nodes must be at most ${MAX_LOAD_NODES}`),
});
export type LoadSpec = z.infer<typeof LoadSpec>;

interface NodesInput {
  target: string;
  load?: LoadSpec;
  sustained?: { configurations: Array<{ name: string; eventsPerSecond: number; batch: number; load?: LoadSpec }> };
  ladder?: { rates: number[]; batch: number };
  variants?: unknown;
}

/** Load hosts of one configuration's repeats: its own `load.nodes`, else the spec's, else 1. */
export function loadNodesOf(spec: { load?: LoadSpec }, configuration?: { load?: LoadSpec }): number {
  return configuration?.load?.nodes ?? spec.load?.nodes ?? 1;
}

/**
 * The load hosts a campaign makes: the most any of its sustained configurations asks for (1: none
 * beyond the rig's own). What an AWS rig launches, bills and asks its quota for; the workflow's
 * fan-out starts this many.
 */
export function campaignLoadNodes(spec: { load?: LoadSpec; sustained?: { configurations: Array<{ load?: LoadSpec }> } }): number {
  if (!spec.sustained) return 1;
  return Math.max(1, ...spec.sustained.configurations.map((c) => loadNodesOf(spec, c)));
}

/** The targets whose rigs make several load hosts (Target.startLoadNodes): local (namespaces), aws (instances). */
export const LOAD_NODE_TARGETS: readonly string[] = ['local', 'aws'];

/**
 * Whether the campaign workflow's repeat phase fans a repeat out to its load nodes
 * (workflows/phases/load-nodes.ts, behind patched('load-nodes')): it does, on targets local and aws. Kept as a
 * switch so that the rules below can still be tested as they were before the fan-out.
 */
export const LOAD_NODES_WIRED = true;

/** What the spec's `load` blocks cannot be (path and message each), for the spec's superRefine. */
export function loadProblems(s: NodesInput, wired = LOAD_NODES_WIRED): Array<{ path: Array<string | number>; message: string }> {
  const out: Array<{ path: Array<string | number>; message: string }> = [];
  const many = (s.load?.nodes ?? 1) > 1 || (s.sustained?.configurations ?? []).some((c) => (c.load?.nodes ?? 1) > 1);
  if (many && !wired) {
    const path = (s.load?.nodes ?? 1) > 1 ? ['load', 'nodes'] : ['sustained', 'configurations'];
    return [{ path, message: 'load.nodes > 1 is not run by the campaign yet (the repeat phase does not fan out to load nodes): set load.nodes to 1 or leave it out' }];
  }
  if (many && !LOAD_NODE_TARGETS.includes(s.target)) {
    // Only a target that makes its own load hosts can make more of them (an existing deployment has none of the rig's).
    const path = (s.load?.nodes ?? 1) > 1 ? ['load', 'nodes'] : ['sustained', 'configurations'];
    out.push({ path, message: `load.nodes > 1 runs on targets "local" and "aws" (target "${s.target}" has one load host): remove "load" or use one of those targets` });
  }
  if ((s.load?.nodes ?? 1) > 1 && s.ladder && !s.sustained) {
    // A ladder's rungs are sent from one node (the fan-out is the sustained repeats'): never silently.
    out.push({ path: ['load', 'nodes'], message: 'load.nodes > 1 splits sustained repeats only (a ladder runs from one load host): remove "load" or measure sustained configurations' });
  }
  if (many && s.variants !== undefined) {
    // A variant restarts the service on another port, which the load nodes' gateway does not follow yet.
    const path = (s.load?.nodes ?? 1) > 1 ? ['load', 'nodes'] : ['sustained', 'configurations'];
    out.push({ path, message: 'load.nodes > 1 with "variants" is not run yet (a variant restarts the service where the load nodes do not follow): remove one of them' });
  }
  (s.sustained?.configurations ?? []).forEach((c, i) => {
    const n = loadNodesOf(s, c);
    const perNode = c.eventsPerSecond / c.batch / n;
    // Intended times are whole µs: above 1M requests/s two requests of one schedule would share one.
    if (c.eventsPerSecond / c.batch > 1_000_000) {
      out.push({ path: ['sustained', 'configurations', i, 'eventsPerSecond'], message: `configuration "${c.name}" asks for ${c.eventsPerSecond / c.batch} requests/s; a schedule of µs times holds at most 1,000,000: raise its batch` });
    } else if (n > 1 && perNode > MAX_REQUESTS_PER_NODE) {
      out.push({
        path: ['sustained', 'configurations', i, 'load', 'nodes'],
        message: `configuration "${c.name}" asks each of its ${n} load nodes for ${Math.ceil(perNode)} requests/s; one generator offers at most ${MAX_REQUESTS_PER_NODE}: give load.nodes >= ${Math.ceil(c.eventsPerSecond / c.batch / MAX_REQUESTS_PER_NODE)}`,
      });
    }
  });
  return out;
}

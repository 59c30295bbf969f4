// Several load nodes (issue 37): a configuration with `load.nodes: N` > 1 sends each repeat from N
// workers, one per node's queue, each its share of ONE schedule from ONE start instant, and the data
// plane judges the merged stream (activities/node-repeat.ts says what each side does). Behind
// patched('load-nodes'), asked only where a configuration has N > 1: a one-node campaign issues
// exactly the commands it always did.
//
// Attempt A of a repeat: startAtMs = now + LEAD; runNodeLoad on every node (one attempt each: a node
// re-run alone would miss its start instant), all awaited to their end; then judgeNodeRepeat. A node
// that failed (its worker lost, its load cut short) or a merge refused (RepeatInterrupted) makes the
// attempt interrupted: it is recorded and attempt A + 1 runs on ALL nodes. A node whose activity
// failed may have lost its worker with it (nobody polls its queue then, and A + 1 would wait for it in
// vain): the nodes are made again first (patched('load-nodes-replace-lost'); live workers are kept, a
// dead one replaced). A refusal (ClockRefusal: a node's clock past the instrument's bound) stops the
// campaign, naming the node.
//
// When they are made (patched('load-nodes-early')): right after the rig's own provisioning and
// calibration, before bring-up and seed (makeLoadNodesEarly), so a node that cannot be made or fails
// its calibration stops the campaign before provisioning goes further, naming the node (issue 37 item
// 4). The local target's gateway relays the service's port, known once provisioned: that is the
// earliest point. Campaigns started before it made them at their first repeat on N nodes.
import { ActivityCancellationType, isCancellation, patched } from '@temporalio/workflow';
import type { InterruptedAttempt, RepeatSummary } from '../../lib/protocol/campaign-result';
import { campaignLoadNodes, loadNodesOf, type LoadNodeHandle } from '../../lib/protocol/load-nodes';
import type { CampaignSpec } from '../../lib/protocol/spec';
import type { RepeatInput } from '../../activities/contract';
import { failureReason, isRefusal } from '../failures';
import type { Campaign } from './context';
import { repeatActs } from './repeat';

/** Active: a configuration with load.nodes > 1 runs its repeats on its load nodes (asked only for such a configuration). */
export const LOAD_NODES_PATCH = 'load-nodes';

/**
 * Active: after an attempt in which a node's activity failed, the load-nodes step runs again before
 * the next attempt (asked only on that path). Without it a node whose worker was lost is never
 * replaced, and every later attempt fails on its empty queue until the campaign gives up.
 */
export const LOAD_NODES_REPLACE_PATCH = 'load-nodes-replace-lost';

/**
 * Active: a campaign whose largest load.nodes > 1 makes and calibrates its load nodes right after
 * provisioning (and an AWS rig's own calibration), before bring-up and seed; its repeats reuse them.
 * Asked only for such a campaign. Before it, they were made at the first repeat that needed them.
 */
export const LOAD_NODES_EARLY_PATCH = 'load-nodes-early';

/**
 * From the workflow's now to the nodes' common start: each node's worker spawns its generator, warms
 * its connections and reads its clock first (a few seconds on a loaded 2-core host), all before it.
 */
export const LEAD_MS = 15_000;

/** Attempts of one repeat on all nodes before the campaign fails (as runRepeat's maximumAttempts). */
export const MAX_NODE_ATTEMPTS = 4;

/** The most load nodes any sustained configuration of the spec asks for (1: the fan-out is never used). */
export function mostLoadNodes(spec: CampaignSpec): number {
  return campaignLoadNodes(spec);
}

/** Whether this configuration's repeats run on load nodes (and the patch is taken, only then). */
export function fansOut(cx: Campaign, configuration: { load?: { nodes: number } }, kind: RepeatInput['kind']): number {
  if (kind !== 'sustained') return 1;
  const n = loadNodesOf(cx.spec, configuration);
  return n > 1 && patched(LOAD_NODES_PATCH) ? n : 1;
}

/**
 * The load nodes made and calibrated as a step of the campaign's own, right after provisioning and
 * before bring-up (LOAD_NODES_EARLY_PATCH): a node that fails stops the campaign there, naming it, with
 * nothing seeded. A one-node campaign asks nothing and issues the commands it always did.
 */
export async function makeLoadNodesEarly(cx: Campaign): Promise<void> {
  if (mostLoadNodes(cx.spec) <= 1 || !patched(LOAD_NODES_EARLY_PATCH)) return;
  await ensureLoadNodes(cx, false, false);
}

/**
 * The rig's load nodes' workers, made once (early, makeLoadNodesEarly; in a campaign before it, at the
 * first repeat that needs them), and made again (`again`) after an attempt that may have lost one: the
 * step keeps what lives and replaces what died, and each node's calibration is asked for again (a node
 * that calibrated returns its recorded judgement, activities/calibrate.ts; a new machine in a lost
 * one's place measures). `within`: its steps run inside the series step (progress keeps the series).
 */
export async function ensureLoadNodes(cx: Campaign, again = false, within = true): Promise<LoadNodeHandle[]> {
  if (cx.loadNodes && !again) return cx.loadNodes;
  const nodes = mostLoadNodes(cx.spec);
  const rig = cx.theRig;
  cx.loadNodes = await cx.step(
    'load-nodes',
    () => cx.machine({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '2 minutes', retry: { initialInterval: '5 seconds', maximumAttempts: 2 } }).startLoadNodes({ campaignId: cx.campaignId, rig, nodes }),
    (r) => r.map((n) => `node ${n.node} ${n.address}`).join(', '),
    within,
  );
  // Each node's own instrument, in its own worker, one after another (they share this host's CPU): a
  // node that fails stops the campaign (CalibrationRefusal naming it) before any repeat is sent from it.
  if (cx.spec.calibrate) {
    const limits = cx.spec.sustained?.configurations.map((c) => c.p99LimitMs) ?? [];
    const p99LimitMs = limits.length ? Math.min(...limits) : undefined;
    for (const h of cx.loadNodes) {
      const acts = cx.on(h.queue, { startToCloseTimeout: '5 minutes', heartbeatTimeout: '30 seconds' });
      await cx.step('calibrate', () => acts.calibrateInstrument({ campaignId: cx.campaignId, p99LimitMs, node: h.node }), (r) => r.summary, within);
    }
  }
  return cx.loadNodes;
}

/** One repeat from N load nodes, re-run on all of them until an attempt is judged (or MAX_NODE_ATTEMPTS). */
export async function nodeRepeat(cx: Campaign, input: RepeatInput, nodes: number): Promise<{ summary: RepeatSummary; interrupted: InterruptedAttempt[] }> {
  let handles = (await ensureLoadNodes(cx)).slice(0, nodes);
  const interrupted: InterruptedAttempt[] = [];
  const before = input.attemptsBefore ?? 0;
  const nodeOpts = {
    startToCloseTimeout: `${input.seconds + 300} seconds`,
    heartbeatTimeout: '30 seconds',
    retry: { maximumAttempts: 1 },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  };
  for (let attempt = 1; ; attempt++) {
    const att = before + attempt;
    const lost = (reason: string): void => {
      interrupted.push({ configuration: input.configuration.name, index: input.index, attempt: att, runTag: null, dir: `repeats/${input.configuration.name}/r${input.index}-a${att}`, reason });
      if (attempt >= MAX_NODE_ATTEMPTS) throw new Error(`${input.configuration.name} repeat ${input.index}: ${MAX_NODE_ATTEMPTS} attempts on all ${nodes} load nodes were interrupted; the last: ${reason}`);
    };
    const startAtMs = Date.now() + LEAD_MS;
    // Every node to its end (settled), never the first failure alone: the next attempt must not overlap this one.
    const ran = await Promise.allSettled(handles.map((h) => cx.on(h.queue, nodeOpts).runNodeLoad({ ...input, attempt, node: h.node, nodes, startAtMs, clockUrl: h.clockUrl })));
    const failed = ran.flatMap((r, i) => (r.status === 'rejected' ? [{ node: handles[i].node, err: r.reason as unknown }] : []));
    const cancelled = failed.find((f) => isCancellation(f.err));
    if (cancelled) throw cancelled.err;
    const refused = failed.find((f) => isRefusal(f.err));
    if (refused) throw refused.err; // a node's clock past the bound: the campaign stops, naming it
    if (failed.length) {
      lost(failed.map((f) => `load node ${f.node}: ${failureReason(f.err)}`).join('; '));
      // Its worker may be gone with it (a heartbeat timeout): the next attempt needs one on every queue.
      if (patched(LOAD_NODES_REPLACE_PATCH)) handles = (await ensureLoadNodes(cx, true)).slice(0, nodes);
      continue;
    }
    try {
      const summary = await repeatActs(cx, input.seconds).judgeNodeRepeat({ ...input, attempt, nodes, startAtMs });
      return { summary, interrupted };
    } catch (err) {
      if (isCancellation(err) || !isRepeatInterrupted(err)) throw err;
      lost(failureReason(err));
    }
  }
}

function isRepeatInterrupted(err: unknown): boolean {
  let e = err as { type?: string; cause?: unknown } | undefined;
  while (e) {
    if (e.type === 'RepeatInterrupted') return true;
    e = e.cause as typeof e;
  }
  return false;
}

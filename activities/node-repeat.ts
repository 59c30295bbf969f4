// One repeat sent from N load nodes (issue 37): runNodeLoad runs on each node's own queue and sends
// that node's share of the schedule; judgeNodeRepeat runs on the rig's data-plane queue once every
// node has returned, merges their streams into the repeat's and judges it as one.
//
// The workflow's part (the repeat phase), for attempt A of repeat K of a configuration with N nodes:
//   startAtMs = workflow now + lead time (the nodes' spawn and warm-up: >= 10 s on a loaded host)
//   await Promise.all(nodes.map(i => runNodeLoad({ ...repeatInput, attempt: A, node: i, nodes: N, startAtMs, clockUrl })))
//     (each on node i's queue, maximumAttempts 1: a node is never re-run alone: its start instant is gone)
//   summary = await judgeNodeRepeat({ ...repeatInput, attempt: A, nodes: N, startAtMs })
//   a node activity that failed (its worker lost: heartbeat timeout) or a judge that throws
//   RepeatInterrupted: the attempt is interrupted; run attempt A + 1 on ALL nodes.
//
// Safe to run twice: a node whose stream of this attempt is committed returns it without measuring
// again; the judge of an attempt with a verdict reads it back (judge() writes verdict.json once), and
// one whose merge was refused stays refused (interrupted.json).
// Evidence of attempt A: repeats/<config>/rK-aA/nodes/n<i>/{samples.csv.gz,node.json} per node, and
// the merged samples.csv.gz, load.json, nodes.json (a row per node), reconcile.json (all nodes' tags),
// verdict.json beside them, where a one-node repeat keeps its own.
import fs from 'node:fs';
import { ApplicationFailure } from '@temporalio/common';
import { INTERRUPTED, LOAD, SAMPLES, VERDICT } from '../lib/evidence/layout';
import type { InterruptedFile, LoadFile } from '../lib/evidence/records';
import { EvidenceStore } from '../lib/evidence/store';
import { measureClockOffset } from '../lib/loadgen/clock-offset';
import { measureNtpOffset } from '../lib/loadgen/ntp-clock';
import { readCustomersFile } from '../lib/loadgen/customers';
import { mergeNodeStreams } from '../lib/loadgen/merge-streams';
import { seededArrivals } from '../lib/loadgen/options';
import { runLoad, type LoadSummary } from '../lib/loadgen/run-load';
import { loadArrivals } from '../lib/loadgen/trace-file';
import { checkClock, clockBoundMs, ClockRefusal, type ClockReading } from '../lib/protocol/clock-offset';
import type { RepeatSummary } from '../lib/protocol/campaign-result';
import { LOAD_NODE_GATEWAY_ENV, throughGateway } from '../lib/protocol/load-nodes';
import { NodeMergeRefusal } from '../lib/protocol/node-merge';
import { nodeRows, type NodeRow } from '../lib/protocol/node-gates';
import { nodeRunTag, sharesOf } from '../lib/protocol/node-share';
import type { Target } from '../lib/targets/target';
import { hostName } from '../lib/tools/host-name';
import { customersFile } from './bringup';
import type { RepeatInput } from './contract';
import { cancellationSignal, heartbeat } from './context';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';
import { refusal } from './refusal';
import { attemptDir, judge, runTagFor } from './repeat';

export interface NodeLoadInput extends RepeatInput {
  /** The attempt every node of it shares (the workflow's count, never Temporal's per-activity one). */
  attempt: number;
  node: number;
  nodes: number;
  /** The common start instant (ms since the epoch, the control host's clock). */
  startAtMs: number;
  /** The control host's clock (lib/loadgen/clock-offset.ts startClockServer); null: not measured. */
  clockUrl: string | null;
}

/** What node.json holds, and what runNodeLoad returns. */
export interface NodeLoadFile {
  node: number;
  nodes: number;
  run_tag: string;
  host: string;
  start_at_ms: number;
  clock: ClockReading | null;
  clock_bound_ms: number;
  cut_short: boolean;
  generator: LoadSummary;
  /** The network namespace the node's worker ran in (/proc/self/ns/net), so the evidence shows the nodes were apart. */
  net_ns?: string | null;
}

export interface NodeRepeatInput extends RepeatInput {
  attempt: number;
  nodes: number;
  /** The instant the nodes were given (the load's start, in load.json). */
  startAtMs: number;
}

export const NODE_FILE = 'node.json';
export const NODES_FILE = 'nodes.json';
export const nodeDir = (dir: string, node: number) => `${dir}/nodes/n${node}`;

export function nodeRepeatActivities(deps: ActivityDeps) {
  async function runNodeLoad(input: NodeLoadInput): Promise<NodeLoadFile> {
    const target = rigTarget(deps, input.rig);
    const store = EvidenceStore.forCampaign(input.campaignId);
    const att = (input.attemptsBefore ?? 0) + input.attempt;
    const dir = nodeDir(attemptDir(input, att), input.node);
    const kept = readJson<NodeLoadFile>(store, `${dir}/${NODE_FILE}`);
    if (kept && store.exists(`${dir}/${SAMPLES}`)) return kept; // measured already: never again
    const share = { node: input.node, nodes: input.nodes };
    const repeatTag = runTagFor(input.campaignId, input.configuration.name, input.index, att);
    const runTag = nodeRunTag(repeatTag, share);
    // The clock first: a node whose clock is past the instrument's bound sends nothing.
    const bound = clockBoundMs(input.kind === 'sustained' ? input.configuration.p99LimitMs : null);
    let clock: ClockReading | null = null;
    if (input.clockUrl) {
      // The control host's /clock (local), or the time server the rig's nodes share (aws: ntp://, lib/targets/aws/load-nodes.ts).
      clock = input.clockUrl.startsWith('ntp://') ? await measureNtpOffset(input.clockUrl) : await measureClockOffset(input.clockUrl);
      try {
        checkClock(input.node, clock, bound);
      } catch (err) {
        if (err instanceof ClockRefusal) throw refusal('ClockRefusal', err.message, { node: input.node, clock });
        throw err;
      }
    }
    const apiKey = await target.apiKeys.read(input.campaignId);
    if (!apiKey) throw new Error(`rig ${input.campaignId} has no API key yet: bring-up has not run`);
    const tmp = store.tempPath(`${dir}/${SAMPLES}`);
    const load = await runLoad(
      {
        // A node in a namespace reaches the rig's loopback service through its gateway (the local target's load-workers.ts).
        url: throughGateway(input.rig.serviceUrl, process.env[LOAD_NODE_GATEWAY_ENV]),
        apiKey,
        rate: input.configuration.eventsPerSecond,
        batch: input.configuration.batch,
        seconds: input.seconds,
        maxInFlight: input.maxInFlight,
        probeRate: input.probe.rate,
        // The configuration's workload (issue 35), one schedule for every node: a Poisson seed left out
        // comes from the repeat's tag (a one-node repeat's own), never the node's.
        arrivals: seededArrivals(loadArrivals(input.configuration.workload), repeatTag),
        customers: await nodeCustomers(target, input.campaignId),
        runTag,
        out: tmp,
        share,
        startAtMs: input.startAtMs,
      },
      (p) => heartbeat({ runTag, node: input.node, second: p.second, sent: p.sent, dropped: p.dropped }),
      { signal: cancellationSignal() },
    );
    store.commit(`${dir}/${SAMPLES}`, tmp);
    const file: NodeLoadFile = { node: input.node, nodes: input.nodes, run_tag: runTag, host: hostName(), start_at_ms: input.startAtMs, clock, clock_bound_ms: bound, cut_short: load.interrupted, generator: load.summary, net_ns: netNamespace() };
    store.writeJson(`${dir}/${NODE_FILE}`, file);
    // A node cut short is written down (its stream says so too) and fails: the judge refuses the merge.
    if (load.interrupted) throw new Error(`load node ${input.node} was cut short (${load.summary.reason ?? 'stopped'}): the repeat is interrupted and runs again on all nodes`);
    return file;
  }

  async function judgeNodeRepeat(input: NodeRepeatInput): Promise<RepeatSummary> {
    const target = rigTarget(deps, input.rig);
    const store = EvidenceStore.forCampaign(input.campaignId);
    const att = (input.attemptsBefore ?? 0) + input.attempt;
    const dir = attemptDir(input, att);
    const runTag = runTagFor(input.campaignId, input.configuration.name, input.index, att);
    const interrupted = readJson<InterruptedFile>(store, `${dir}/${INTERRUPTED}`);
    if (interrupted) throw repeatInterrupted(interrupted.reason);
    const shares = sharesOf(input.nodes);
    const merging = !store.exists(`${dir}/${VERDICT}`) && !store.exists(`${dir}/${SAMPLES}`);
    // A node on a host of its own (aws) wrote its stream there and shipped it: it comes here first.
    // One that is not found stays missing, and the merge below refuses it (the node was lost).
    const fetchShipped = target.nodes?.fetchLoadNodeEvidence;
    if (merging && fetchShipped) {
      for (const s of shares) {
        const want = [SAMPLES, NODE_FILE].map((f) => `${nodeDir(dir, s.node)}/${f}`).filter((rel) => !store.exists(rel));
        if (want.length) await fetchShipped(input.campaignId, s.node, want, (line) => heartbeat(line));
      }
    }
    const files = shares.map((s) => store.path(`${nodeDir(dir, s.node)}/${SAMPLES}`));
    const nodeFiles = shares.map((s) => readJson<NodeLoadFile>(store, `${nodeDir(dir, s.node)}/${NODE_FILE}`));
    if (merging) {
      const tmp = store.tempPath(`${dir}/${SAMPLES}`);
      try {
        const merged = await mergeNodeStreams(files, tmp, runTag);
        store.commit(`${dir}/${SAMPLES}`, tmp);
        const rows = nodeRows(
          merged.nodes.map((n) => n.analysis),
          input.kind === 'sustained' ? input.configuration.p99LimitMs : null,
          nodeFiles.map((f) => ({ clock_offset_ms: f?.clock?.offset_ms ?? null, clock_uncertainty_ms: f?.clock?.uncertainty_ms ?? null, start_late_ms: f?.generator.start_late_ms ?? null })),
        );
        store.writeJson(`${dir}/${NODES_FILE}`, { nodes: input.nodes, rows, latency_buckets: merged.latency.buckets() });
        const g = nodeFiles.map((f) => f?.generator);
        store.writeJson(`${dir}/${LOAD}`, {
          mode: 'open',
          started_at: new Date(input.startAtMs).toISOString(),
          ended_at: new Date().toISOString(),
          cut_short: false,
          run_tag: runTag,
          rate: input.configuration.eventsPerSecond,
          batch: input.configuration.batch,
          seconds: input.seconds,
          offered: g.reduce((a, x) => a + (x?.offered ?? 0), 0),
          sent: g.reduce((a, x) => a + (x?.sent ?? 0), 0),
          dropped: g.reduce((a, x) => a + (x?.dropped ?? 0), 0),
          host: nodeFiles.map((f) => f?.host ?? '?').join(','),
        } satisfies LoadFile);
      } catch (err) {
        fs.rmSync(tmp, { force: true });
        if (!(err instanceof NodeMergeRefusal)) throw err;
        store.writeJson(`${dir}/${INTERRUPTED}`, { reason: err.message, detected_by_attempt: att, detected_at: new Date().toISOString() } satisfies InterruptedFile);
        store.logWarning(`${input.configuration.name} repeat ${input.index} attempt ${att}: ${err.message}`);
        throw repeatInterrupted(err.message);
      }
    }
    const nodes = readJson<{ rows: NodeRow[] }>(store, `${dir}/${NODES_FILE}`);
    return judge(target, store, input, att, [], { runTags: shares.map((s) => nodeRunTag(runTag, s)), rows: nodes?.rows ?? [] });
  }

  return { runNodeLoad, judgeNodeRepeat };
}

/** Non-retryable (the streams will not change), and not a Refusal (the campaign goes on): the workflow runs the next attempt on all nodes. */
function repeatInterrupted(reason: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(reason, 'RepeatInterrupted');
}

/**
 * The fixtures' customers the load is sent for: the file bring-up wrote on the data-plane host, else
 * (a load node on a host of its own: aws) read where that node can, once, and kept in the same place.
 */
async function nodeCustomers(target: Target, campaignId: string): Promise<string[]> {
  const file = customersFile(target, campaignId);
  const read = target.nodes?.fixtureCustomers;
  if (!fs.existsSync(file) && read) {
    const ids = await read(campaignId);
    if (!ids.length) throw new Error(`rig ${campaignId} has no fixtures' customers yet: bring-up has not run`);
    fs.writeFileSync(file, ids.join('\n') + '\n');
  }
  return readCustomersFile(file);
}

function netNamespace(): string | null {
  try {
    return fs.readlinkSync('/proc/self/ns/net');
  } catch {
    return null;
  }
}

function readJson<T>(store: EvidenceStore, rel: string): T | null {
  if (!store.exists(rel)) return null;
  try {
    return JSON.parse(fs.readFileSync(store.path(rel), 'utf8')) as T;
  } catch {
    return null;
  }
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { runNodeLoad, judgeNodeRepeat } = nodeRepeatActivities(defaultDeps);

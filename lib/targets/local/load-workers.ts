// The local rig's load nodes (issue 37): with `load.nodes: N`, N rig workers, each in a network
// namespace of its own (load-netns.ts), each polling its node's queue (loadNodeQueue), and one gateway
// on this machine's side of the pairs (load-gateway-main.ts) that relays the service and Temporal to
// each pair's host end and answers the control host's clock there. Started right after provisioning
// (the service's port is known from then on), before bring-up; removed by teardown.
//
// Every process is written to the ledger BEFORE it is spawned (kind load-gateway / load-worker, with
// the script its argv must hold) and marked (RIG_LOCAL_*), so a retry finds and reuses a live one,
// teardown stops exactly it, and a dead worker's leftovers are found by `rig check` and cleaned by the
// next teardown. Idempotent: a second call reuses what lives and replaces what died.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { LOAD_NODE_GATEWAY_ENV } from '../../protocol/load-nodes';
import { loadConnection } from '../../temporal/connection-env';
import { loadNodeQueue } from '../../temporal/queues';
import { freePort } from '../../tools/free-port';
import { hostName } from '../../tools/host-name';
import { projectRoot } from '../../tools/paths';
import type { LoadNodeHandle, ProgressFn } from '../target';
import { connectionLocal } from './connection';
import { appendLedger, liveResources, type LedgerResource } from './ledger';
import type { GatewayConfig } from './load-gateway-main';
import { inLoadNamespace, provisionLoadNamespaces, type LoadNamespace } from './load-netns';
import { withCampaignLock } from './lock';
import { isAlive, pidMatches, sleep } from './proc';
import { MARKER_CAMPAIGN, MARKER_RESOURCE, MARKER_RIG_DIR, rigPaths } from './rig-paths';

export const GATEWAY_SCRIPT = 'lib/targets/local/load-gateway-main.ts';
export const WORKER_SCRIPT = 'bin/rig.cjs';
/** What a node's worker reads to reach this machine's side of its pair (activities/node-repeat.ts). */
const GATEWAY_ENV = LOAD_NODE_GATEWAY_ENV;
const GATEWAY_ID = 'load-gateway';
const workerId = (node: number) => `load-worker-${node}`;

/** How long a node's worker may take to connect and say so (tsx, the SDK's runtime, its first poll). */
const READY_MS = 90_000;

/** The host:port of a Temporal address (`host:port`, `[v6]:port`). */
function splitAddress(address: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address);
  if (!m) throw new Error(`the Temporal address ${JSON.stringify(address)} has no port: the load nodes' gateway cannot relay it`);
  return { host: m[1], port: Number(m[2]) };
}

function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function live(campaignId: string, id: string): LedgerResource | undefined {
  return liveResources(campaignId).find((r) => r.id === id);
}

/** Spawns `argv` detached and marked, its output to `logFile`; the ledger has its intent before and its pid after. */
function spawnMarked(campaignId: string, id: string, kind: 'load-gateway' | 'load-worker', argv: string[], env: NodeJS.ProcessEnv, logFile: string, detail: { script: string; node?: number; ns?: string }): number {
  appendLedger(campaignId, 'intend', id, kind, { ...detail, logFile });
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const out = fs.openSync(logFile, 'a', 0o600);
  try {
    const child = spawn(argv[0], argv.slice(1), {
      cwd: projectRoot,
      env: { ...env, [MARKER_CAMPAIGN]: campaignId, [MARKER_RESOURCE]: id, [MARKER_RIG_DIR]: rigPaths(campaignId).dir },
      detached: true, // its own group: the worker that started it may die; teardown stops it
      stdio: ['ignore', out, out],
    });
    child.on('error', () => undefined);
    if (child.pid === undefined) throw new Error(`could not start ${id}: see ${logFile}`);
    appendLedger(campaignId, 'made', id, kind, { pid: child.pid });
    child.unref();
    return child.pid;
  } finally {
    fs.closeSync(out);
  }
}

async function waitForLine(pid: number, logFile: string, what: string, re: RegExp, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
    const m = re.exec(text);
    if (m) return m[0];
    if (!isAlive(pid)) throw new Error(`${what} exited during start-up; last lines of ${logFile}:\n${tail(logFile)}`);
    await sleep(250);
  }
  throw new Error(`${what} did not say it was ready within ${timeoutMs / 1000} s; last lines of ${logFile}:\n${tail(logFile)}`);
}

/** Whether the ledger's process `id` lives and is still the one it recorded (a recycled pid is not). */
function alive(campaignId: string, id: string, script: string): number | undefined {
  const r = live(campaignId, id);
  const pid = r?.detail.pid;
  return pid !== undefined && pidMatches(pid, { cmdlineHas: script, campaignId, resourceId: id }) ? pid : undefined;
}

/** The gateway: relays for the service and Temporal on every pair's host end, and the clock. */
async function ensureGateway(campaignId: string, spaces: LoadNamespace[], relays: GatewayConfig['relays'], onProgress: ProgressFn): Promise<number> {
  const prev = live(campaignId, GATEWAY_ID);
  const wanted = { listen: spaces.map((s) => s.hostIp), relays };
  const logFile = path.join(rigPaths(campaignId).dir, `${GATEWAY_ID}.log`);
  if (alive(campaignId, GATEWAY_ID, GATEWAY_SCRIPT) && prev?.detail.note === JSON.stringify(wanted) && prev.detail.port !== undefined) return prev.detail.port;
  if (prev) appendLedger(campaignId, 'removed', GATEWAY_ID, 'load-gateway', { note: 'replaced' }); // dead, or relaying what is no longer there
  const clockPort = await freePort(spaces[0].hostIp);
  const config: GatewayConfig = { ...wanted, clockPort };
  onProgress(`starting the load nodes' gateway on ${wanted.listen.join(', ')} (clock port ${clockPort})`);
  fs.rmSync(logFile, { force: true });
  const pid = spawnMarked(campaignId, GATEWAY_ID, 'load-gateway', [process.execPath, '--import', 'tsx', path.join(projectRoot, GATEWAY_SCRIPT), JSON.stringify(config)], process.env, logFile, { script: GATEWAY_SCRIPT });
  await waitForLine(pid, logFile, "the load nodes' gateway", /"ready":true/, 30_000);
  appendLedger(campaignId, 'made', GATEWAY_ID, 'load-gateway', { port: clockPort, note: JSON.stringify(wanted) });
  return clockPort;
}

/**
 * The campaign's `nodes` load nodes on this machine: their namespaces, the gateway, and a rig worker in
 * each namespace polling loadNodeQueue(campaign, i). Needs root (the namespaces). Resolves once every
 * worker has connected.
 */
export function startLoadNodesLocal(campaignId: string, nodes: number, onProgress: ProgressFn = () => {}): Promise<LoadNodeHandle[]> {
  return withCampaignLock(campaignId, async () => {
    const spaces = provisionLoadNamespaces(campaignId, nodes);
    const temporal = loadConnection().env;
    const t = splitAddress(temporal.address);
    const service = new URL((await connectionLocal(campaignId)).serviceUrl);
    const relays = [t, { host: service.hostname, port: Number(service.port) }];
    const clockPort = await ensureGateway(campaignId, spaces, relays, onProgress);
    const host = hostName();
    const started: Array<{ node: number; pid: number; logFile: string }> = [];
    for (const s of spaces) {
      const id = workerId(s.node);
      const logFile = path.join(rigPaths(campaignId).dir, `${id}.log`);
      if (alive(campaignId, id, WORKER_SCRIPT)) continue;
      if (live(campaignId, id)) appendLedger(campaignId, 'removed', id, 'load-worker', { note: 'dead: replaced' });
      onProgress(`starting load node ${s.node}'s worker in ${s.ns} (${s.nodeIp})`);
      fs.rmSync(logFile, { force: true });
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        // Temporal through the gateway (same port, this pair's host end); TLS keeps the server's own name.
        TEMPORAL_ADDRESS: `${s.hostIp}:${t.port}`,
        ...(temporal.tls && !process.env.TEMPORAL_TLS_SERVER_NAME ? { TEMPORAL_TLS_SERVER_NAME: t.host } : {}),
        // A host name of its own: its worker lock and identity are the node's, never the control host's.
        RIG_HOST: `${host}.n${s.node}`,
        [GATEWAY_ENV]: s.hostIp,
      };
      delete env.NODE_TEST_CONTEXT;
      const argv = inLoadNamespace(s, [process.execPath, path.join(projectRoot, WORKER_SCRIPT), 'worker', '--task-queue', loadNodeQueue(campaignId, s.node)]);
      const pid = spawnMarked(campaignId, id, 'load-worker', argv, env, logFile, { script: WORKER_SCRIPT, node: s.node, ns: s.ns });
      started.push({ node: s.node, pid, logFile });
    }
    for (const w of started) await waitForLine(w.pid, w.logFile, `load node ${w.node}'s worker`, /rig worker on .*task queues: \S+/, READY_MS);
    return spaces.map((s) => ({ node: s.node, queue: loadNodeQueue(campaignId, s.node), clockUrl: `http://${s.hostIp}:${clockPort}/clock`, address: s.nodeIp }));
  });
}

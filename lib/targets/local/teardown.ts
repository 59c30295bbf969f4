// Teardown of a local rig: stop and remove exactly what the campaign's ledger lists, newest first
// (services, then the cluster, then the rig folder), marking each removed as it goes. Idempotent: run
// twice, or after a crash halfway (service already dead, folder half gone), it finishes the job. It never
// signals a pid unless /proc says that pid is still the process the ledger recorded.
import fs from 'node:fs';
import path from 'node:path';
import { resultsDir } from '../../tools/paths';
import type { ProgressFn, TeardownResult } from '../target';
import { appendLedger, closeLedger, liveResources, type LedgerResource } from './ledger';
import { removeLoadNamespace } from './load-netns';
import { withCampaignLock } from './lock';
import { PgCluster } from './pg-cluster';
import { findPostmaster, isAlive, postmasterDataDir, readCmdline, waitGone } from './proc';
import { stopLedgerService } from './service-process';

export function teardownLocal(campaignId: string, onProgress: ProgressFn = () => {}): Promise<TeardownResult> {
  return withCampaignLock(campaignId, () => teardownUnlocked(campaignId, onProgress));
}

/** The work of teardownLocal, for callers that hold the campaign lock already (provision redoing a half-made rig). */
export async function teardownUnlocked(campaignId: string, onProgress: ProgressFn = () => {}): Promise<TeardownResult> {
  const result: TeardownResult = { campaignId, removed: [], alreadyGone: [], keptLogs: [] };
  const live = liveResources(campaignId).reverse();
  for (const [i, r] of live.entries()) {
    // What is left, for the watcher's progress line (the heartbeat carries it).
    onProgress(`removing ${r.kind} ${r.id} (${describe(r)}); ${live.length - i} of ${live.length} resource(s) left`);
    // Evidence first: the Postgres log and the service logs outlive the rig folder.
    result.keptLogs!.push(...keepLogs(r));
    const outcome = await removeResource(r, onProgress);
    (outcome === 'gone' ? result.alreadyGone : result.removed).push(`${r.id} (${describe(r)})`);
    appendLedger(campaignId, 'removed', r.id, r.kind, { note: outcome });
  }
  closeLedger(campaignId);
  return result;
}

/** Copy a resource's logs to <results>/<campaign>/rig-logs/ before it is removed (never overwriting). */
function keepLogs(r: LedgerResource): string[] {
  const files: string[] = [];
  if (r.kind === 'cluster' && r.detail.path) files.push(path.join(r.detail.path, 'postgres.log'));
  if ((r.kind === 'service' || r.kind === 'load-worker' || r.kind === 'load-gateway') && r.detail.logFile) files.push(r.detail.logFile);
  const kept: string[] = [];
  for (const src of files) {
    if (!fs.existsSync(src)) continue;
    const dir = path.join(resultsDir(), r.campaignId, 'rig-logs');
    fs.mkdirSync(dir, { recursive: true });
    let dest = path.join(dir, path.basename(src));
    for (let i = 1; fs.existsSync(dest); i++) dest = path.join(dir, `${path.basename(src)}.${i}`);
    fs.copyFileSync(src, dest);
    kept.push(dest);
  }
  return kept;
}

function describe(r: LedgerResource): string {
  const d = r.detail;
  if (r.kind === 'load-worker') return `load node ${d.node ?? '?'}'s worker, pid ${d.pid ?? '?'}`;
  if (r.kind === 'load-gateway') return `the load nodes' gateway, pid ${d.pid ?? '?'}`;
  if (r.kind === 'service') return `pid ${d.pid ?? '?'}, port ${d.port ?? '?'}`;
  if (r.kind === 'cluster') return `${d.dataDir ?? d.path ?? '?'}, port ${d.port ?? '?'}`;
  if (r.kind === 'load-netns') return `namespace ${d.ns ?? '?'}, node ${d.node ?? '?'}`;
  return d.path ?? '?';
}

async function removeResource(r: LedgerResource, onProgress: ProgressFn): Promise<'removed' | 'gone'> {
  switch (r.kind) {
    case 'service':
    case 'load-gateway': // the load nodes' (load-workers.ts): stopped as a service is, by pid and marker
    case 'load-worker':
      return removeService(r, onProgress);
    case 'cluster':
      return removeCluster(r, onProgress);
    case 'load-netns': {
      const { ns, hostLink } = r.detail;
      if (!ns || !hostLink) throw new Error(`ledger entry ${r.id} of ${r.campaignId} names no namespace; cannot tell which is its`);
      onProgress(`removing network namespace ${ns}`);
      return removeLoadNamespace({ ns, hostLink }) ? 'removed' : 'gone';
    }
    case 'rig-dir': {
      const dir = r.detail.path;
      if (!dir || !fs.existsSync(dir)) return 'gone';
      onProgress(`removing ${dir}`);
      fs.rmSync(dir, { recursive: true, force: true });
      return 'removed';
    }
  }
}

async function removeService(r: LedgerResource, onProgress: ProgressFn): Promise<'removed' | 'gone'> {
  const stopped = await stopLedgerService(r, onProgress);
  if (stopped) onProgress(`stopped ${r.id}`);
  if (r.detail.pidFile) fs.rmSync(r.detail.pidFile, { force: true });
  return stopped ? 'removed' : 'gone';
}

async function removeCluster(r: LedgerResource, onProgress: ProgressFn): Promise<'removed' | 'gone'> {
  const dir = r.detail.path;
  const dataDir = r.detail.dataDir ?? (dir ? path.join(dir, 'data') : undefined);
  if (!dataDir) throw new Error(`ledger entry ${r.id} of ${r.campaignId} names no data folder; cannot tell which postmaster is its`);
  let acted = false;
  const pid = findPostmaster(dataDir);
  if (pid !== undefined) {
    onProgress(`stopping the postmaster ${pid} (${dataDir})`);
    acted = true;
    let viaPgCtl = false;
    if (dir && fs.existsSync(path.join(dir, 'cluster.json')) && fs.existsSync(path.join(dataDir, 'postmaster.pid'))) {
      try {
        await PgCluster.attach(dir).stop();
        viaPgCtl = true;
      } catch (err) {
        onProgress(`pg_ctl stop failed (${(err as Error).message.split('\n')[0]}); signalling the postmaster`);
      }
    }
    if (!viaPgCtl || isAlive(pid)) await signalPostmaster(pid, dataDir);
  }
  if (dir && fs.existsSync(dir)) {
    onProgress(`removing ${dir}`);
    fs.rmSync(dir, { recursive: true, force: true });
    acted = true;
  }
  return acted ? 'removed' : 'gone';
}

/** Fast shutdown (SIGINT), then immediate (SIGQUIT), then SIGKILL; each only while the pid is still it. */
async function signalPostmaster(pid: number, dataDir: string): Promise<void> {
  // The data folder is the rig's alone: a live process running `postgres -D <it>` is its postmaster
  // (marked or, if someone restarted it by hand, not).
  // A process that is exiting has no command line left (the kernel drops it before the process is
  // gone): that is the postmaster finishing the stop pg_ctl asked for (pg_ctl returns once
  // postmaster.pid is removed, a moment before the process ends), so it is waited for, not refused.
  // Only a live process whose command line names something else is a pid that is no longer ours.
  const still = () => isAlive(pid) && postmasterDataDir(readCmdline(pid) ?? []) === dataDir;
  const exiting = () => isAlive(pid) && readCmdline(pid) === undefined;
  for (const [sig, waitMs] of [
    ['SIGINT', 30_000],
    ['SIGQUIT', 10_000],
    ['SIGKILL', 5_000],
  ] as const) {
    if (!isAlive(pid)) return;
    if (exiting() && (await waitGone(pid, 10_000))) return;
    if (!still()) throw new Error(`pid ${pid} no longer runs on ${dataDir}; not signalled`);
    try {
      process.kill(pid, sig);
    } catch {
      return;
    }
    if (await waitGone(pid, waitMs)) return;
  }
  if (isAlive(pid)) throw new Error(`the postmaster ${pid} on ${dataDir} survived SIGKILL`);
}

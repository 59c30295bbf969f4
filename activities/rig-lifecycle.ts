// Clean-check, provision and teardown: the control-plane steps that make and remove rigs. Every thing
// a target makes is recorded before it is made, so teardown and the clean check never guess; the
// target comes from the spec (or the rig handle) through the registry the worker passes in.
// Safe to run twice: the clean-check only reads; provision finds a rig the ledger already lists and
// reuses it; teardown removes what the ledger lists and is still there, and reports the rest as gone.
import fs from 'node:fs';
import { plannedEvidenceBytes } from '../lib/protocol/evidence-size';
import { EvidenceStore } from '../lib/evidence/store';
import { RIG_FILE } from '../lib/evidence/layout';
import type { RigHandle } from '../lib/protocol/campaign-result';
import { serviceBuild, serviceLaunch, serviceSettingsList, variantRuns } from '../lib/protocol/service-spec';
import { expectedFromProvisioning, watchdogNeed } from '../lib/protocol/plan';
import { campaignLoadNodes } from '../lib/protocol/load-nodes';
import type { CampaignSpec } from '../lib/protocol/spec';
import type { CleanCheckResult, Hardware, Leftover } from '../lib/targets/target';
import type { CleanCheckInput, CleanCheckOutput, NodeConsoleTail, ProvisionInput, RetagExpiryInput, StepSummary, TeardownInput } from './contract';
import type { TargetName } from '../lib/protocol/spec';
import { activityTaskQueue, cancellationSignal, firstScheduledMs, heartbeat } from './context';
import { databaseWaitFailure } from './database-wait-failure';
import { defaultDeps } from './default-deps';
import type { ActivityDeps } from './deps';
import { dataQueue, hostOfQueue } from '../lib/temporal/queues';
import { hostName } from '../lib/tools/host-name';
import { workerBuild } from '../lib/tools/worker-build';
import type { RigFile } from '../lib/evidence/records';
import { refusal, refusing } from './refusal';

/**
 * The data-plane queue of this worker's host: on the local target the rig lives on this machine. The
 * host is the one of the queue this activity was taken from (rig-host-<host>: a worker serving another
 * host name than the OS's, as two workers on one machine do), else this machine's (`rig step`).
 */
export function localDataQueue(): string {
  return dataQueue(thisHost());
}

/** The host this activity acts for: the one of the queue it was taken from, else this machine's. */
function thisHost(): string {
  const queue = activityTaskQueue();
  return (queue && hostOfQueue(queue)) || hostName();
}

function describeLeftover(l: Leftover): string {
  return `${l.kind}${l.campaignId ? ` of ${l.campaignId}` : ''}${l.ageSeconds !== undefined ? ` (${Math.round(l.ageSeconds / 60)} min old)` : ''}: ${l.detail}`;
}

/** The rig's price as rig.json keeps it for the page: $/hour, and where a target has them, its source and what it covers. */
function costOf(h: Hardware): { costPerHour: number; priceSource?: string; priceCovers?: string; costNotes?: string[] } {
  return { costPerHour: h.costPerHour, ...(h.priceSource ? { priceSource: h.priceSource } : {}), ...(h.priceCovers ? { priceCovers: h.priceCovers } : {}), ...(h.costNotes?.length ? { costNotes: h.costNotes } : {}) };
}

export function describeCleanCheck(r: CleanCheckResult): string {
  if (r.status === 'clean') return 'clean';
  if (r.status === 'dirty') return `dirty: ${r.leftovers.map(describeLeftover).join('; ')}`;
  return `COULD NOT LOOK: ${r.reason}`;
}

export function rigLifecycleActivities({ targetFor }: ActivityDeps) {
  async function cleanCheck(input: CleanCheckInput): Promise<CleanCheckOutput> {
    const target = targetFor(input.target);
    const r = await target.cleanCheck();
    const summary = describeCleanCheck(r);
    const store = EvidenceStore.forCampaign(input.campaignId);
    if (input.phase === 'before') {
      store.appendLog('info', `clean-check before provisioning: ${summary}`);
      if (r.status === 'dirty') throw refusal('CleanCheckRefusal', `the ${target.name} target is not clean: ${summary}. Tear it down (rig step teardown --campaign ID) or check with rig check --target ${target.name}`);
      if (r.status === 'could-not-look') throw refusal('CleanCheckRefusal', `${summary}`);
    } else {
      store.appendLog(r.status === 'clean' ? 'info' : 'warning', `clean-check after teardown: ${summary}`);
    }
    return { clean: r.status === 'clean', summary };
  }

  async function provisionRig(input: ProvisionInput): Promise<RigHandle> {
    const { spec, campaignId } = input;
    const target = targetFor(spec.target);
    const store = EvidenceStore.forCampaign(campaignId);
    store.logStepStart('provision');
    // A service the target cannot start as the spec says (a command not on this machine) is a ServiceRefusal: not retried.
    const res = await refusing(() => target.provision(
      campaignId,
      {
        db: { ...spec.database },
        service: serviceLaunch(spec.service),
        // The expiry tag: the watchdog's deadline as armed just before provisioning.
        ...(spec.aws
          ? { aws: { spec: spec.aws, expiresAt: new Date(Date.now() + spec.watchdogMinutes * 60_000).toISOString(), lifetimeMinutes: spec.watchdogMinutes, planMinutes: watchdogNeed(spec).planMinutes, expectedMinutes: expectedFromProvisioning(spec), evidenceBytes: plannedEvidenceBytes(spec), ...(input.databaseApart ? { waitForDatabase: false } : {}), ...(campaignLoadNodes(spec) > 1 ? { loadNodes: campaignLoadNodes(spec) } : {}) } }
          : {}),
        ...(spec.existing ? { existing: spec.existing } : {}),
        ...(spec.local ? { local: spec.local } : {}),
        ...(variantRuns(spec).length ? { variantRuns: variantRuns(spec) } : {}),
      },
      (line) => heartbeat(line),
    ));
    // Waited for apart (awaitRigDatabase): the rig is not whole yet, and rig.json is the wait's to write.
    if (input.databaseApart && target.awaitDatabase) return rigHandle(campaignId, spec);
    const handle = rigHandle(campaignId, spec);
    writeRigFile(store, campaignId, spec, res.serviceUrl, handle, await rigBuildFor(store));
    if (target.name === 'existing') store.appendLog('info', `connected to the existing deployment, nothing made: service ${res.serviceUrl}, database ${handle.database}`);
    else store.appendLog('info', `provisioned: service ${res.serviceUrl}, database ${handle.database}${res.reused ? ' (an existing rig was found and reused)' : ''}`);
    return handle;
  }

  /**
   * The worker build rig.json names: the first attempt's (a retry on a worker of another build writes
   * the same bytes again; a rig.json from before the field has none, and keeps none), else this one's.
   */
  async function rigBuildFor(store: EvidenceStore): Promise<string | null> {
    if (store.exists(RIG_FILE)) return (JSON.parse(fs.readFileSync(store.path(RIG_FILE), 'utf8')) as RigFile).rigBuild ?? null;
    return workerBuild();
  }

  /** rig.json: written once; a retried step that reused the rig writes the same bytes again. */
  function writeRigFile(store: EvidenceStore, campaignId: string, spec: CampaignSpec, serviceUrl: string, handle: RigHandle, rigBuild: string | null): void {
    const target = targetFor(spec.target);
    store.writeJson(RIG_FILE, {
      target: target.name,
      hardware: handle.hardware,
      serviceUrl,
      database: handle.database,
      postgresParameters: handle.parameters,
      // Which build is measured and its settings, beside the numbers (the page's conditions).
      serviceBuild: serviceBuild(spec.service.run),
      ...(rigBuild ? { rigBuild } : {}),
      service: Object.fromEntries(serviceSettingsList(spec.service)),
      ...costOf(target.hardware(campaignId, spec.hardware)),
    });
  }

  /**
   * The rig's database, waited for in an activity of its own (aws: RDS takes 10-20 minutes and more to
   * create, beyond provisioning's timeout): at most the spec's aws.database.availableWaitMinutes for
   * the whole step, counted from its first scheduling, so a retry after a dead worker (heartbeat
   * timeout) waits only for what is left; a heartbeat every poll; read-only (a second attempt changes
   * nothing). Past the bound, or at a status the database will not leave by itself, it fails
   * non-retryably. The nodes boot meanwhile.
   */
  async function awaitRigDatabase(input: ProvisionInput): Promise<RigHandle> {
    const { spec, campaignId } = input;
    const target = targetFor(spec.target);
    if (!target.awaitDatabase) throw new Error(`the ${target.name} target has no database to wait for apart: its provision makes the rig whole`);
    const store = EvidenceStore.forCampaign(campaignId);
    const sinceMs = firstScheduledMs();
    const signal = cancellationSignal();
    const res = await target
      .awaitDatabase(campaignId, spec.aws?.database.availableWaitMinutes ?? 60, (line) => heartbeat(line), { ...(sinceMs ? { sinceMs } : {}), ...(signal ? { signal } : {}) })
      .catch((err: unknown) => {
        throw databaseWaitFailure(err);
      });
    const handle = rigHandle(campaignId, spec);
    writeRigFile(store, campaignId, spec, res.serviceUrl, handle, await rigBuildFor(store));
    store.appendLog('info', `provisioned: service ${res.serviceUrl}, database ${handle.database} (available)`);
    return handle;
  }

  /** How the campaign reaches a provisioned rig (no secrets); also used by `rig step` on a kept rig. */
  function rigHandle(campaignId: string, spec: Pick<CampaignSpec, 'hardware' | 'target'>): RigHandle {
    const target = targetFor(spec.target);
    const rig = target.describe(campaignId);
    return {
      campaignId,
      target: target.name,
      dataQueue: target.dataQueue(campaignId, thisHost()),
      ...(target.nodes ? { appQueue: target.nodes.appQueue(campaignId) } : {}),
      serviceUrl: rig.serviceUrl,
      database: rig.database,
      rigDir: rig.rigDir,
      hardware: target.hardware(campaignId, spec.hardware).line,
      parameters: rig.parameters,
    };
  }

  async function teardownRig(input: TeardownInput): Promise<StepSummary> {
    const r = await targetFor(input.target).teardown(input.campaignId, (line) => heartbeat(line), input.region ? { region: input.region } : {});
    // A rig with nodes (AWS) says what became of their evidence (gathered from its bucket first).
    const gathered = targetFor(input.target).nodes && r.keptLogs?.length ? `; ${r.keptLogs.join('; ')}` : '';
    // Which host's worker did it: after the claimed host's worker was gone, another one may have (tearsDownFromAnyHost).
    const summary = `removed ${r.removed.length} (${r.removed.join(', ') || 'nothing'})${r.alreadyGone.length ? `; already gone: ${r.alreadyGone.join(', ')}` : ''}${gathered}; by the worker of host ${thisHost()}`;
    try {
      EvidenceStore.forCampaign(input.campaignId).appendLog('info', `teardown by ${input.by}: ${summary}`);
    } catch {
      // the watchdog may tear down a campaign whose evidence folder is elsewhere: the ledger is the record
    }
    return { summary };
  }

  /** The watchdog moved its deadline: the rig's expiry tag follows it (a no-op where a target has none). */
  async function retagRigExpiry(input: RetagExpiryInput): Promise<void> {
    await targetFor(input.target).extendExpiry(input.campaignId, input.expiresAt);
  }

  /**
   * When no worker on the rig's own hosts took a step: what their consoles say (the campaign's failure
   * carries it). Read-only; a failed read is part of the answer, never a failure of its own.
   */
  async function nodeConsoleTail(input: { campaignId: string; target: TargetName }): Promise<NodeConsoleTail> {
    const read = targetFor(input.target).nodeConsole;
    if (!read) return {};
    try {
      return { tail: await read(input.campaignId) };
    } catch (err) {
      return { tail: `the nodes' consoles could not be read: ${(err as Error).message.slice(0, 300)}` };
    }
  }

  return { cleanCheck, provisionRig, awaitRigDatabase, rigHandle, teardownRig, retagRigExpiry, nodeConsoleTail };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { cleanCheck, provisionRig, awaitRigDatabase, rigHandle, teardownRig, retagRigExpiry, nodeConsoleTail } = rigLifecycleActivities(defaultDeps);

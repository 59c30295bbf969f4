// Clean-check, provision and teardown: the control-plane steps that make and remove rigs. Every thing
// a target makes is recorded in its ledger before it is made, so teardown and the clean check never
// guess (lib/targets/local).
// Safe to run twice: the clean-check only reads; provision finds a rig the ledger already lists and
// reuses it; teardown removes what the ledger lists and is still there, and reports the rest as gone.
import os from 'node:os';
import { EvidenceStore } from '../lib/evidence/store';
import { RIG_FILE } from '../lib/evidence/layout';
import type { RigHandle } from '../lib/protocol/campaign-result';
import { localTarget } from '../lib/targets/local';
import { completeRecord, connectionFromRecord } from '../lib/targets/local/connection';
import { readRigRecord } from '../lib/targets/local/rig-record';
import type { CampaignSpec } from '../lib/protocol/spec';
import type { CleanCheckResult, Leftover } from '../lib/targets/target';
import type { CleanCheckInput, CleanCheckOutput, ProvisionInput, StepSummary, TeardownInput } from './contract';
import { activityTaskQueue, heartbeat } from './context';
import { dataQueue, hostOfQueue } from '../lib/temporal/queues';
import { hostName } from '../lib/tools/host-name';
import { refusal } from './refusal';

/**
 * The data-plane queue of this worker's host: on the local target the rig lives on this machine. The
 * host is the one of the queue this activity was taken from (rig-host-<host>: a worker serving another
 * host name than the OS's, as two workers on one machine do), else this machine's (`rig step`).
 */
export function localDataQueue(): string {
  const queue = activityTaskQueue();
  return dataQueue((queue && hostOfQueue(queue)) || hostName());
}

function describeLeftover(l: Leftover): string {
  return `${l.kind}${l.campaignId ? ` of ${l.campaignId}` : ''}${l.ageSeconds !== undefined ? ` (${Math.round(l.ageSeconds / 60)} min old)` : ''}: ${l.detail}`;
}

export function describeCleanCheck(r: CleanCheckResult): string {
  if (r.status === 'clean') return 'clean';
  if (r.status === 'dirty') return `dirty: ${r.leftovers.map(describeLeftover).join('; ')}`;
  return `COULD NOT LOOK: ${r.reason}`;
}

export async function cleanCheck(input: CleanCheckInput): Promise<CleanCheckOutput> {
  const r = await localTarget.cleanCheck();
  const summary = describeCleanCheck(r);
  const store = EvidenceStore.forCampaign(input.campaignId);
  if (input.phase === 'before') {
    store.appendLog('info', `clean-check before provisioning: ${summary}`);
    if (r.status === 'dirty') throw refusal('CleanCheckRefusal', `the local target is not clean: ${summary}. Tear it down (rig step teardown --campaign ID) or check with rig check --target local`);
    if (r.status === 'could-not-look') throw refusal('CleanCheckRefusal', `${summary}`);
  } else {
    store.appendLog(r.status === 'clean' ? 'info' : 'warning', `clean-check after teardown: ${summary}`);
  }
  return { clean: r.status === 'clean', summary };
}

export async function provisionRig(input: ProvisionInput): Promise<RigHandle> {
  const { spec, campaignId } = input;
  const store = EvidenceStore.forCampaign(campaignId);
  store.logStepStart('provision');
  const res = await localTarget.provision(
    campaignId,
    {
      db: { ...spec.database },
      service: { lastUsed: spec.service.lastUsed, insert: spec.service.insert, aggregate: spec.service.aggregate },
    },
    (line) => heartbeat(line),
  );
  const handle = rigHandle(campaignId, spec);
  const hardware = handle.hardware;
  // Written once; a retried provision that reused the rig writes the same bytes again.
  store.writeJson(RIG_FILE, {
    target: 'local',
    hardware,
    serviceUrl: res.serviceUrl,
    database: handle.database,
    postgresParameters: handle.parameters,
    service: { ...spec.service },
    costPerHour: spec.hardware.costPerHour,
  });
  store.appendLog('info', `provisioned: service ${res.serviceUrl}, database ${handle.database}${res.reused ? ' (an existing rig was found and reused)' : ''}`);
  return handle;
}

/** How the campaign reaches a provisioned local rig (no secrets); also used by `rig step` on a kept rig. */
export function rigHandle(campaignId: string, spec: Pick<CampaignSpec, 'hardware'>): RigHandle {
  const conn = connectionFromRecord(completeRecord(campaignId));
  const rec = readRigRecord(campaignId);
  const cpus = os.cpus();
  return {
    campaignId,
    target: 'local',
    dataQueue: localDataQueue(),
    serviceUrl: conn.serviceUrl,
    database: `${conn.db.host}:${conn.db.port}/${conn.db.database}`,
    rigDir: rec?.cluster.dir ?? '',
    hardware: `${spec.hardware.description} (${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, local PostgreSQL cluster)`,
    parameters: rec?.postgresParameters ?? {},
  };
}

export async function teardownRig(input: TeardownInput): Promise<StepSummary> {
  const r = await localTarget.teardown(input.campaignId, (line) => heartbeat(line));
  const summary = `removed ${r.removed.length} (${r.removed.join(', ') || 'nothing'})${r.alreadyGone.length ? `; already gone: ${r.alreadyGone.join(', ')}` : ''}`;
  try {
    EvidenceStore.forCampaign(input.campaignId).appendLog('info', `teardown by ${input.by}: ${summary}`);
  } catch {
    // the watchdog may tear down a campaign whose evidence folder is elsewhere: the ledger is the record
  }
  return { summary };
}

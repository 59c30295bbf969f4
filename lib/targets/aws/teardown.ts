// Teardown of an AWS rig by its campaign tag, in dependency order, waiting until each resource is
// gone before the next: the nodes (terminated), then their instance profile (its role taken out) and
// their role (its policies detached and deleted); the RDS instance (deleted, no final snapshot), then
// the Enhanced Monitoring role it published through, its parameter and subnet groups, the rig's
// secret (role passwords, deleted at once: no recovery window) and the security groups it used (the
// database's first: it refers to the nodes'); last the artifacts bucket (its objects, then itself)
// and the Temporal secret. Safe to run twice: what the tags no longer find is not there to remove.
// Before anything goes, the evidence the nodes shipped to the bucket is gathered into this host's
// results folder (evidence-sync.ts). The removal of a list of found resources (removeRigResources) is
// shared with the reaper (reap.ts), which passes only a campaign's expired ones.
import { DeleteSecurityGroupCommand, DescribeInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { DeleteDBInstanceCommand, DeleteDBParameterGroupCommand, DeleteDBSubnetGroupCommand, DescribeDBInstancesCommand } from '@aws-sdk/client-rds';
import { DeleteSecretCommand } from '@aws-sdk/client-secrets-manager';
import type { ProgressFn, TeardownResult } from '../target';
import { awsClients, defaultRegion, type AwsClients } from './clients';
import { removeBucket } from './bucket';
import { isNamed } from './errors';
import { findRigResources, type FoundResource } from './find';
import { removeInstanceProfile, removeRole } from './iam';
import type { RigResourceKind } from './names';
import { gatherEvidence, summarizeGather } from './evidence-sync';
import { stopEmulatedService } from './nodes';
import { readAwsRecord, removeAwsRecord } from './record';
import { removeTemporalSecret } from './temporal-secret';
import { waitFor } from './wait';

/**
 * DeleteDBInstance with no final snapshot and its automated backups, tolerating that someone else got
 * there first: gone (DBInstanceNotFound), or already being deleted (InvalidDBInstanceState, when the
 * watchdog's teardown and the reaper race). InvalidDBInstanceState for any other state is not
 * tolerated: the instance is then looked at, and only a `deleting` one (or a gone one) passes.
 */
export async function deleteDbInstance(rds: Pick<AwsClients['rds'], 'send'>, id: string): Promise<void> {
  try {
    await rds.send(new DeleteDBInstanceCommand({ DBInstanceIdentifier: id, SkipFinalSnapshot: true, DeleteAutomatedBackups: true }));
  } catch (err) {
    if (isNamed(err, 'DBInstanceNotFound')) return;
    if (!isNamed(err, 'InvalidDBInstanceState')) throw err;
    try {
      const status = (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances?.[0]?.DBInstanceStatus;
      if (status === 'deleting') return;
    } catch (again) {
      if (isNamed(again, 'DBInstanceNotFound')) return;
      throw again;
    }
    throw err;
  }
}

export async function teardownAws(campaignId: string, onProgress: ProgressFn = () => {}, opts: { region?: string } = {}): Promise<TeardownResult> {
  // The record is this host's (the one that made the rig); a worker on another host has the spec's region.
  const region = readAwsRecord(campaignId)?.region ?? opts.region ?? defaultRegion();
  if (!region) throw new Error(`teardown of ${campaignId}: no record of its region (state/aws-rigs), none given and no AWS_REGION`);
  const c = awsClients(region);
  try {
    const found = await findRigResources(c, campaignId);
    // First the nodes' evidence, out of the bucket that is about to go (evidence-sync.ts). If it cannot
    // be read, everything else goes (billing stops) and the bucket stays, named in the error: a
    // retried teardown gathers and removes it; the clean check reports it until then.
    const bucket = found.find((r) => r.kind === 'artifacts-bucket' && r.state !== 'untagged')?.id;
    let gathered: string | undefined;
    let gatherFailure: string | undefined;
    if (bucket) {
      try {
        gathered = summarizeGather(await gatherEvidence(c, campaignId, { bucket, onProgress }));
      } catch (err) {
        gatherFailure = `${(err as Error).name}: ${(err as Error).message}`;
        onProgress(`could not gather the nodes' evidence from ${bucket}: ${gatherFailure}; the bucket is kept`);
      }
    }
    // Under the emulator the nodes' processes run on this machine: terminating a record would not end them.
    const emulated = await stopEmulatedService(campaignId);
    const toRemove = gatherFailure ? found.filter((r) => r.kind !== 'artifacts-bucket') : found;
    const removed = await removeRigResources(c, toRemove, onProgress, emulated ? [emulated] : []);
    const left = await settledLeftovers(async () => (await findRigResources(c, campaignId)).filter((r) => !(gatherFailure && r.kind === 'artifacts-bucket')), { onProgress });
    if (left.length) throw new Error(`teardown of ${campaignId}: still there after removing: ${left.map((r) => `${r.kind} ${r.id} (${r.state || 'present'})`).join(', ')}`);
    if (gatherFailure) {
      throw new Error(
        `teardown of ${campaignId}: everything removed but the artifacts bucket ${bucket}, kept because the nodes' evidence in it could not be gathered (${gatherFailure}); run rig step teardown --campaign ${campaignId} again once it can be read`,
      );
    }
    removeAwsRecord(campaignId);
    return { campaignId, removed, alreadyGone: removed.length ? [] : ['nothing of this campaign was found by its tag'], ...(gathered ? { keptLogs: [gathered] } : {}) };
  } finally {
    c.destroy();
  }
}

/** Kinds whose delete Secrets Manager completes asynchronously: ListSecrets can show them for a while after. */
const LAGGING_KINDS: ReadonlySet<RigResourceKind> = new Set(['rig-secret', 'temporal-secret']);

/**
 * The look after removal, waited out while only what deletes asynchronously is left (secrets: their
 * ForceDeleteWithoutRecovery completes after the call returns, and ListSecrets lags it): `look` again
 * every `everyMs` for at most `timeoutMs`. Anything else left is returned at once (a real leftover).
 */
export async function settledLeftovers<R extends { kind: RigResourceKind; id: string }>(look: () => Promise<R[]>, opts: { timeoutMs?: number; everyMs?: number; onProgress?: ProgressFn } = {}): Promise<R[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 2 * 60_000);
  for (;;) {
    const left = await look();
    if (!left.length || left.some((r) => !LAGGING_KINDS.has(r.kind)) || Date.now() > deadline) return left;
    opts.onProgress?.(`waiting for Secrets Manager to finish deleting ${left.map((r) => r.id).join(', ')}`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 5000));
  }
}

/**
 * Removes `found` in dependency order (the header's), waiting until each is gone; what is already gone counts as removed. Returns
 * "<kind> <id>" for each, pushed into `removed` as it goes: a caller that catches the first call that
 * fails (or wait that times out: it throws there) still knows what went before it.
 */
export async function removeRigResources(c: AwsClients, found: FoundResource[], onProgress: ProgressFn = () => {}, removed: string[] = []): Promise<string[]> {
  const of = (...kinds: RigResourceKind[]): FoundResource[] => found.filter((r) => kinds.includes(r.kind));

  const nodes = of('app-node', 'load-node');
  if (nodes.length) {
    const ids = nodes.map((r) => r.id);
    onProgress(`terminating ${ids.join(', ')}`);
    await c.ec2.send(new TerminateInstancesCommand({ InstanceIds: ids }));
    await waitFor(
      `instances ${ids.join(', ')} terminated`,
      async () => {
        const r = await c.ec2.send(new DescribeInstancesCommand({ InstanceIds: ids }));
        const states = (r.Reservations ?? []).flatMap((x) => x.Instances ?? []).map((i) => i.State?.Name);
        return states.every((s) => s === 'terminated') ? true : undefined;
      },
      { timeoutMs: 15 * 60_000, onProgress },
    );
    removed.push(...nodes.map((r) => `${r.kind} ${r.id}`));
  }
  // The profile only once no instance holds it; the role once no profile carries it.
  for (const p of of('node-instance-profile')) {
    await removeInstanceProfile(c, p.id, onProgress);
    removed.push(`node-instance-profile ${p.id}`);
  }
  for (const r of of('node-role')) {
    await removeRole(c, r.id, onProgress);
    removed.push(`node-role ${r.id}`);
  }

  for (const db of of('db-instance')) {
    onProgress(`deleting RDS instance ${db.id}`);
    if (db.state !== 'deleting') await deleteDbInstance(c.rds, db.id);
    await waitFor(
      `RDS instance ${db.id} deleted`,
      async () => {
        try {
          await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: db.id }));
          return undefined;
        } catch (err) {
          if (isNamed(err, 'DBInstanceNotFound')) return true;
          throw err;
        }
      },
      { timeoutMs: 40 * 60_000, intervalMs: 10_000, onProgress },
    );
    removed.push(`db-instance ${db.id}`);
  }
  // RDS publishes Enhanced Monitoring through it until the instance is gone.
  for (const r of of('monitoring-role')) {
    await removeRole(c, r.id, onProgress);
    removed.push(`monitoring-role ${r.id}`);
  }

  for (const pg of of('db-parameter-group')) {
    try {
      await c.rds.send(new DeleteDBParameterGroupCommand({ DBParameterGroupName: pg.id }));
    } catch (err) {
      if (!isNamed(err, 'DBParameterGroupNotFound')) throw err;
    }
    removed.push(`db-parameter-group ${pg.id}`);
  }

  for (const sn of of('db-subnet-group')) {
    try {
      await c.rds.send(new DeleteDBSubnetGroupCommand({ DBSubnetGroupName: sn.id }));
    } catch (err) {
      if (!isNamed(err, 'DBSubnetGroupNotFound')) throw err;
    }
    removed.push(`db-subnet-group ${sn.id}`);
  }

  // The role passwords have no use once the database is gone: deleted now, not after a recovery window.
  for (const secret of of('rig-secret')) {
    try {
      await c.secrets.send(new DeleteSecretCommand({ SecretId: secret.id, ForceDeleteWithoutRecovery: true }));
    } catch (err) {
      if (!isNamed(err, 'ResourceNotFoundException')) throw err;
    }
    removed.push(`rig-secret ${secret.id}`);
  }

  for (const sg of [...of('db-security-group'), ...of('nodes-security-group')]) {
    // A security group stays "in use" for a while after its instances are gone (their network interfaces).
    await waitFor(
      `security group ${sg.id} deleted`,
      async () => {
        try {
          await c.ec2.send(new DeleteSecurityGroupCommand({ GroupId: sg.id }));
          return true;
        } catch (err) {
          if (isNamed(err, 'InvalidGroup.NotFound')) return true;
          if (isNamed(err, 'DependencyViolation')) return undefined;
          throw err;
        }
      },
      { timeoutMs: 15 * 60_000, onProgress },
    );
    removed.push(`${sg.kind} ${sg.id}`);
  }
  for (const b of of('artifacts-bucket')) {
    await removeBucket(c, b.id, onProgress);
    removed.push(`artifacts-bucket ${b.id}`);
  }
  for (const s of of('temporal-secret')) {
    await removeTemporalSecret(c, s.id, onProgress);
    removed.push(`temporal-secret ${s.id}`);
  }
  return removed;
}

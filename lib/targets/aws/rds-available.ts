// Waiting for the rig's RDS instance to become available, within one bound for the whole step. RDS
// takes 10-20 minutes and more to create an instance, so the campaign waits in a step of its own (the
// spec's aws.database.availableWaitMinutes). Two things make that bound real:
// - the deadline counts from when the step was first scheduled (`sinceMs`), not from this attempt's
//   start, so an attempt retried after a dead worker waits only for what is left of the bound;
// - a status from which RDS will not reach `available` by itself ends the wait at once, naming the
//   status and where to read why (the instance's RDS events), instead of waiting out the bound.
// Both end in DatabaseNotAvailable (database-not-available.ts), which the activity makes non-retryable: waiting again would wait
// past the bound, or for a status that will not change.
// Statuses: AWS's "Viewing Amazon RDS DB instance status" (Overview.DBInstance.Status), read 2026-12.
import { setTimeout } from 'node:timers/promises';
import { DescribeDBInstancesCommand, type DBInstance } from '@aws-sdk/client-rds';
import { DatabaseNotAvailable } from '../database-not-available';
import type { ProgressFn } from '../target';

/** The spec field that bounds the wait: named by every timeout, since raising it is one fix. */
export const WAIT_BOUND_FIELD = 'aws.database.availableWaitMinutes';

/**
 * The statuses from which the instance does not become available without someone acting, each with
 * what it means for a rig that was just created and what to do.
 */
export const STATUSES_THAT_WILL_NOT_BECOME_AVAILABLE: Readonly<Record<string, string>> = {
  failed: 'RDS could not create or recover the instance; its events say why. Tear the rig down and start the campaign again',
  'incompatible-parameters': "the parameter group's values do not fit the instance class or engine version (often memory settings too large for the class); fix the spec's postgres parameters or pick a larger aws.database.instanceClass",
  'incompatible-network': "RDS could not set up the instance's network (often no free IP address in the zone's subnet); free addresses there or pick another aws.zone",
  'incompatible-restore': 'RDS could not restore the instance; the rig never restores, so someone else acted on it',
  'incompatible-option-group': 'RDS could not apply the option group; the rig sets none, so someone else changed it',
  'storage-full': 'the instance ran out of storage; raise aws.database.storage.sizeGb',
  'inaccessible-encryption-credentials': 'the KMS key that encrypts the instance cannot be used (disabled, deleted or its grant revoked); the data is lost, tear the rig down',
  'inaccessible-encryption-credentials-recoverable': 'the KMS key that encrypts the instance cannot be used; re-enable it and start the instance, or tear the rig down',
  deleting: 'the instance is being deleted (by the watchdog, the reaper or a person); start the campaign again',
  stopping: 'the instance is being stopped, which the rig never does; someone else stopped it',
  stopped: 'the instance is stopped, which the rig never does; someone else stopped it',
};

/** Where to read why an instance did what it did: the console's page and the CLI's call. */
export function eventsHint(dbInstance: string): string {
  return `its events are in the RDS console (Databases > ${dbInstance} > Logs & events) or \`aws rds describe-events --source-type db-instance --source-identifier ${dbInstance} --duration 1440\``;
}

export interface AvailableWait {
  /** The step's bound, as the spec gives it. */
  waitMinutes: number;
  /** When the bound started (the step's first scheduling, epoch ms): a retried attempt waits only for what is left. */
  sinceMs: number;
  intervalMs?: number;
  onProgress?: ProgressFn;
  /** Aborted when Temporal gives up on this attempt (heartbeat timeout): the loop stops, so attempts do not overlap. */
  signal?: AbortSignal;
  now?: () => number;
}

type RdsSend = { send(cmd: DescribeDBInstancesCommand): Promise<{ DBInstances?: DBInstance[] }> };

/** Polls DescribeDBInstances until `dbInstance` is available; throws DatabaseNotAvailable at the bound or at a status it will not leave by itself. */
export async function waitForRdsAvailable(rds: RdsSend, dbInstance: string, w: AvailableWait): Promise<DBInstance> {
  const now = w.now ?? Date.now;
  const deadline = w.sinceMs + w.waitMinutes * 60_000;
  let lastStatus: string | undefined;
  for (;;) {
    w.signal?.throwIfAborted();
    const inst = (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: dbInstance }))).DBInstances?.[0];
    lastStatus = inst?.DBInstanceStatus;
    if (inst && lastStatus === 'available') return inst;
    const why = lastStatus && STATUSES_THAT_WILL_NOT_BECOME_AVAILABLE[lastStatus];
    if (why) {
      throw new DatabaseNotAvailable(`RDS instance ${dbInstance} is ${lastStatus}, from which it will not become available by itself: ${why}. ${capitalized(eventsHint(dbInstance))}`, 'status', lastStatus);
    }
    if (now() >= deadline) {
      throw new DatabaseNotAvailable(
        `RDS instance ${dbInstance} was not available within ${w.waitMinutes} min (${WAIT_BOUND_FIELD}), last status ${lastStatus ?? 'unknown'}: ` +
          `${eventsHint(dbInstance)}. If RDS is only slow, raise ${WAIT_BOUND_FIELD} (at most 240) and start the campaign again; teardown removes this instance either way`,
        'bound',
        lastStatus,
      );
    }
    w.onProgress?.(`waiting for RDS instance ${dbInstance} available (${lastStatus ?? 'not listed yet'}; ${Math.ceil((deadline - now()) / 60_000)} min of ${w.waitMinutes} left)`);
    // Node's abortable timer; an abort rejects with the signal's own reason (Temporal's cancellation).
    await setTimeout(Math.min(w.intervalMs ?? 5000, Math.max(0, deadline - now())), undefined, w.signal ? { signal: w.signal } : {}).catch((err: unknown) => {
      w.signal?.throwIfAborted();
      throw err;
    });
  }
}

function capitalized(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// test-mode: unit
// The RDS wait's bound (rds-available.ts) against a stubbed RDS client (the one seam: `send`), since
// moto makes an instance available at once and never shows a failed or incompatible one. The bound is
// the whole step's: it counts from the step's first scheduling (so a retried attempt gets only what
// is left), and past it, or at a status RDS will not leave by itself, the activity fails
// non-retryably (activities/database-wait-failure.ts) naming the bound's spec field, or the status
// and where to read why. The clock is injected: nothing here sleeps longer than a 1 ms poll.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { DescribeDBInstancesCommand } from '@aws-sdk/client-rds';
import { databaseWaitFailure } from '../../../activities/database-wait-failure';
import { DatabaseNotAvailable } from '../../../lib/targets/database-not-available';
import { waitForRdsAvailable, WAIT_BOUND_FIELD } from '../../../lib/targets/aws/rds-available';

/** An RDS client whose DescribeDBInstances answers the statuses in turn (the last one from then on). */
function rdsAnswering(...statuses: string[]) {
  let polls = 0;
  return {
    get polls() {
      return polls;
    },
    send: async (cmd: unknown) => {
      if (!(cmd instanceof DescribeDBInstancesCommand)) throw new Error('unexpected call');
      assert.equal(cmd.input.DBInstanceIdentifier, 'rig-x');
      const status = statuses[Math.min(polls++, statuses.length - 1)];
      return { DBInstances: [{ DBInstanceIdentifier: 'rig-x', DBInstanceStatus: status, Endpoint: { Address: 'rig-x.example', Port: 5432 } }] };
    },
  };
}

const minute = 60_000;

test('available after creating: returns the instance', async () => {
  const rds = rdsAnswering('creating', 'creating', 'backing-up', 'available');
  const progress: string[] = [];
  const inst = await waitForRdsAvailable(rds, 'rig-x', { waitMinutes: 60, sinceMs: Date.now(), intervalMs: 1, onProgress: (l) => progress.push(l) });
  assert.equal(inst.Endpoint?.Address, 'rig-x.example');
  assert.equal(rds.polls, 4);
  assert.match(progress[0]!, /waiting for RDS instance rig-x available \(creating; 60 min of 60 left\)/);
});

test('past the bound: DatabaseNotAvailable naming the bound, the spec field and the last status; non-retryable in the activity', async () => {
  let now = 0;
  const rds = {
    send: async () => {
      now += 25 * minute; // each poll finds it still creating, 25 minutes later
      return { DBInstances: [{ DBInstanceStatus: 'creating' }] };
    },
  };
  const err = await waitForRdsAvailable(rds, 'rig-x', { waitMinutes: 60, sinceMs: 0, intervalMs: 1, now: () => now }).catch((e: unknown) => e);
  assert.ok(err instanceof DatabaseNotAvailable);
  assert.equal(err.reason, 'bound');
  assert.match(err.message, /not available within 60 min \(aws\.database\.availableWaitMinutes\), last status creating/);
  assert.match(err.message, /describe-events --source-type db-instance --source-identifier rig-x/);
  assert.match(err.message, new RegExp(`raise ${WAIT_BOUND_FIELD.replace(/\./g, '\\.')}`));
  assert.equal(now, 75 * minute, 'it stops at the first poll past the bound, not one later');

  const failure = databaseWaitFailure(err);
  assert.ok(failure instanceof ApplicationFailure);
  assert.equal(failure.nonRetryable, true);
  assert.equal(failure.type, 'DatabaseNotAvailable');
  assert.equal(failure.message, err.message);
});

test("the bound counts from the step's first scheduling: an attempt retried after it has nothing left and fails on its first look", async () => {
  const rds = rdsAnswering('creating');
  const err = await waitForRdsAvailable(rds, 'rig-x', { waitMinutes: 10, sinceMs: Date.now() - 11 * minute, intervalMs: 1 }).catch((e: unknown) => e);
  assert.ok(err instanceof DatabaseNotAvailable && err.reason === 'bound');
  assert.equal(rds.polls, 1);
});

for (const status of ['failed', 'incompatible-parameters', 'incompatible-network', 'incompatible-restore', 'storage-full', 'inaccessible-encryption-credentials', 'deleting']) {
  test(`${status}: fails at once, naming the status and where to read why`, async () => {
    const rds = rdsAnswering('creating', status, 'available');
    const err = await waitForRdsAvailable(rds, 'rig-x', { waitMinutes: 60, sinceMs: Date.now(), intervalMs: 1 }).catch((e: unknown) => e);
    assert.ok(err instanceof DatabaseNotAvailable);
    assert.equal(err.reason, 'status');
    assert.equal(err.status, status);
    assert.equal(rds.polls, 2, 'no look after the status that will not change');
    assert.match(err.message, new RegExp(`RDS instance rig-x is ${status}, from which it will not become available by itself: `));
    assert.match(err.message, /RDS console \(Databases > rig-x > Logs & events\)/);
    assert.equal((databaseWaitFailure(err) as ApplicationFailure).nonRetryable, true);
  });
}

test('a status on the way to available (modifying, configuring-enhanced-monitoring) is waited through', async () => {
  const rds = rdsAnswering('creating', 'modifying', 'configuring-enhanced-monitoring', 'available');
  await waitForRdsAvailable(rds, 'rig-x', { waitMinutes: 60, sinceMs: Date.now(), intervalMs: 1 });
  assert.equal(rds.polls, 4);
});

test('an attempt Temporal gave up on (its cancellation signal aborted) stops polling, so it cannot wait beside its retry', async () => {
  const rds = rdsAnswering('creating');
  const abort = new AbortController();
  const waiting = waitForRdsAvailable(rds, 'rig-x', { waitMinutes: 60, sinceMs: Date.now(), intervalMs: 60_000, signal: abort.signal, onProgress: () => abort.abort(new Error('heartbeat timeout')) });
  await assert.rejects(waiting, /heartbeat timeout/);
  assert.equal(rds.polls, 1);
  // Aborted while it sleeps between polls: it stops there too.
  const later = new AbortController();
  const sleeping = waitForRdsAvailable(rds, 'rig-x', { waitMinutes: 60, sinceMs: Date.now(), intervalMs: 60_000, signal: later.signal, onProgress: () => setImmediate(() => later.abort(new Error('heartbeat timeout'))) });
  await assert.rejects(sleeping, /heartbeat timeout/);
  assert.equal(rds.polls, 2);
});

test('any other error stays as it is (retryable, within the step\'s schedule-to-close)', () => {
  const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
  assert.equal(databaseWaitFailure(throttled), throttled);
});

// test-mode: unit
// teardown.ts deleteDbInstance against a stubbed RDS client (the one seam: `send`), since moto
// deletes at once and never answers InvalidDBInstanceState: when the watchdog's teardown and the
// reaper race, the second DeleteDBInstance gets "already being deleted", which must count as done;
// InvalidDBInstanceState for an instance that is NOT being deleted must still fail. And the look after
// teardown (settledLeftovers) against a scripted look, since moto's secrets vanish at once: it waits
// out a secret Secrets Manager still lists after its delete, and nothing else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeleteDBInstanceCommand, DescribeDBInstancesCommand } from '@aws-sdk/client-rds';
import { deleteDbInstance, settledLeftovers } from '../../../lib/targets/aws/teardown';

const named = (name: string, message: string) => Object.assign(new Error(message), { name });

function stub(onDelete: () => unknown, status: string | 'gone') {
  const calls: string[] = [];
  return {
    calls,
    rds: {
      send: async (cmd: unknown) => {
        if (cmd instanceof DeleteDBInstanceCommand) {
          calls.push(`delete ${JSON.stringify(cmd.input)}`);
          return onDelete();
        }
        if (cmd instanceof DescribeDBInstancesCommand) {
          calls.push('describe');
          if (status === 'gone') throw named('DBInstanceNotFoundFault', 'DBInstance rig-x not found.');
          return { DBInstances: [{ DBInstanceIdentifier: 'rig-x', DBInstanceStatus: status }] };
        }
        throw new Error('unexpected call');
      },
    } as never,
  };
}

const beingDeleted = () => {
  throw named('InvalidDBInstanceStateFault', 'Instance rig-x is already being deleted.');
};

test('already being deleted (InvalidDBInstanceState, status deleting) is tolerated', async () => {
  const s = stub(beingDeleted, 'deleting');
  await deleteDbInstance(s.rds, 'rig-x');
  assert.deepEqual(s.calls, ['delete {"DBInstanceIdentifier":"rig-x","SkipFinalSnapshot":true,"DeleteAutomatedBackups":true}', 'describe']);
});

test('gone between the delete and the look: tolerated; gone before: tolerated', async () => {
  await deleteDbInstance(stub(beingDeleted, 'gone').rds, 'rig-x');
  await deleteDbInstance(stub(() => { throw named('DBInstanceNotFoundFault', 'not found'); }, 'gone').rds, 'rig-x');
});

test('InvalidDBInstanceState while the instance is in another state still fails', async () => {
  const s = stub(() => { throw named('InvalidDBInstanceStateFault', 'Instance rig-x is not in available state.'); }, 'modifying');
  await assert.rejects(deleteDbInstance(s.rds, 'rig-x'), /not in available state/);
});

test('a plain delete: no final snapshot, automated backups deleted', async () => {
  const s = stub(() => ({}), 'deleting');
  await deleteDbInstance(s.rds, 'rig-x');
  assert.deepEqual(s.calls, ['delete {"DBInstanceIdentifier":"rig-x","SkipFinalSnapshot":true,"DeleteAutomatedBackups":true}']);
});

test('the look after teardown waits out secrets Secrets Manager is still deleting, and returns any other leftover at once', async () => {
  const secret = { kind: 'rig-secret' as const, id: 'rig/x/database' };
  const sg = { kind: 'nodes-security-group' as const, id: 'sg-1' };
  let looks = 0;
  // Listed twice more after the delete, then gone (ListSecrets lagging the delete).
  assert.deepEqual(await settledLeftovers(async () => (++looks <= 2 ? [secret] : []), { everyMs: 1 }), []);
  assert.equal(looks, 3);
  looks = 0;
  assert.deepEqual(await settledLeftovers(async () => (++looks, [secret, sg]), { everyMs: 1 }), [secret, sg], 'a security group left is a leftover: no waiting');
  assert.equal(looks, 1);
  // A secret that never goes is a leftover once the bound has passed.
  assert.deepEqual(await settledLeftovers(async () => [secret], { everyMs: 1, timeoutMs: 20 }), [secret]);
});

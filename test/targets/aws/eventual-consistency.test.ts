// test-mode: unit
// The two eventual-consistency retries, against stubbed clients (the one seam: `send`), since moto
// knows every resource the moment it is made and never answers "not yet": eventually() (wait.ts) as
// the expiry stamp uses it (expiry-stamp.ts: CreateTags right after RunInstances, retried on
// InvalidInstanceID.NotFound, nothing else), and whileIamPropagates() (iam.ts: retried only on the
// refusals EC2 and RDS give for a role or instance profile IAM has not spread yet). The error names
// and messages are AWS's own. The pauses are injected (1 ms); the bounds are asserted by outcome.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CreateTagsCommand } from '@aws-sdk/client-ec2';
import { INSTANCE_NOT_KNOWN_YET, stampExpiry } from '../../../lib/targets/aws/expiry-stamp';
import { whileIamPropagates } from '../../../lib/targets/aws/iam';
import { eventually } from '../../../lib/targets/aws/wait';

const named = (name: string, message: string) => Object.assign(new Error(message), { name });
const notKnownYet = () => named(INSTANCE_NOT_KNOWN_YET, "The instance ID 'i-0abc' does not exist");
const fast = { firstDelayMs: 1 };

/** An EC2 client whose CreateTags fails with each of `errors` in turn, then succeeds. */
function ec2Failing(...errors: Error[]) {
  const calls: unknown[] = [];
  return {
    calls,
    send: async (cmd: CreateTagsCommand) => {
      assert.ok(cmd instanceof CreateTagsCommand);
      calls.push(cmd.input);
      const err = errors[calls.length - 1];
      if (err) throw err;
      return {};
    },
  };
}

test('the expiry stamp: CreateTags on an instance EC2 does not know yet is retried, then stamps rig:expires and rig:created', async () => {
  const ec2 = ec2Failing(notKnownYet(), notKnownYet());
  const progress: string[] = [];
  await stampExpiry(ec2, 'i-0abc', { expiresAt: '2026-12-01T12:00:00.000Z', createdAt: '2026-12-01T10:00:00.000Z' }, (l) => progress.push(l), fast);
  assert.equal(ec2.calls.length, 3);
  assert.deepEqual(ec2.calls[2], {
    Resources: ['i-0abc'],
    Tags: [
      { Key: 'rig:expires', Value: '2026-12-01T12:00:00.000Z' },
      { Key: 'rig:created', Value: '2026-12-01T10:00:00.000Z' },
    ],
  });
  assert.match(progress[0]!, /stamping i-0abc with rig:expires: InvalidInstanceID\.NotFound, not consistent yet/);
});

test('the expiry stamp: any other error is not retried', async () => {
  const ec2 = ec2Failing(named('UnauthorizedOperation', 'You are not authorized to perform this operation.'));
  await assert.rejects(stampExpiry(ec2, 'i-0abc', { expiresAt: '2026-12-01T12:00:00.000Z' }, () => {}, fast), { name: 'UnauthorizedOperation' });
  assert.equal(ec2.calls.length, 1);
});

test('eventually gives up at its bound, throwing the last not-yet error as it is', async () => {
  let calls = 0;
  const never = async () => {
    calls++;
    throw notKnownYet();
  };
  // A bound shorter than the first pause: the first error is the last.
  await assert.rejects(eventually('stamping', never, [INSTANCE_NOT_KNOWN_YET], () => {}, { timeoutMs: 0, firstDelayMs: 1 }), { name: INSTANCE_NOT_KNOWN_YET });
  assert.equal(calls, 1);
  // A bound of a few pauses: it tries again, then stops rather than retrying for ever.
  calls = 0;
  await assert.rejects(eventually('stamping', never, [INSTANCE_NOT_KNOWN_YET], () => {}, { timeoutMs: 200, firstDelayMs: 1 }), { name: INSTANCE_NOT_KNOWN_YET });
  assert.ok(calls > 1, `tried ${calls} time(s)`);
});

test('eventually matches RDS-style names with or without "Fault"', async () => {
  let calls = 0;
  const r = await eventually('reading', async () => (++calls < 2 ? Promise.reject(named('DBInstanceNotFoundFault', 'not found')) : 'found'), ['DBInstanceNotFound'], () => {}, fast);
  assert.equal(r, 'found');
  assert.equal(calls, 2);
});

// whileIamPropagates: what EC2 and RDS say about a role or profile made seconds ago.
const ec2ProfileNotYet = () =>
  named('InvalidParameterValue', 'Value (arn:aws:iam::123456789012:instance-profile/rig/rig-x-nodes) for parameter iamInstanceProfile.arn is invalid. Invalid IAM Instance Profile ARN');
const rdsRoleNotYet = () => named('InvalidParameterValue', 'IAM role ARN value is invalid or does not include the required permissions for: ENHANCED_MONITORING');

/** A call that fails with each of `errors` in turn, then answers 'made'. */
function failingThen(...errors: Error[]) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    call: async () => {
      const err = errors[calls++];
      if (err) throw err;
      return 'made';
    },
  };
}

test('whileIamPropagates retries the refusals of a role or instance profile IAM has not spread yet, then returns', async () => {
  const f = failingThen(ec2ProfileNotYet(), rdsRoleNotYet());
  const progress: string[] = [];
  assert.equal(await whileIamPropagates('launching app-node', f.call, (l) => progress.push(l), { delayMs: 1 }), 'made');
  assert.equal(f.calls, 3);
  assert.match(progress[0]!, /launching app-node: IAM not yet consistent \(Value .* Invalid IAM Instance Profile ARN\)/);
});

for (const [what, err] of [
  ['an invalid parameter that is not about IAM', named('InvalidParameterValue', "Invalid DB instance class: db.x9.huge")],
  ['a permission the caller lacks (the policy, not propagation)', named('UnauthorizedOperation', 'You are not authorized to perform: iam:PassRole on resource: arn:aws:iam::123456789012:role/rig/rig-x-nodes')],
  ['a name that is already taken', named('DBInstanceAlreadyExistsFault', 'DB instance already exists')],
] as const) {
  test(`whileIamPropagates does not retry ${what}`, async () => {
    const f = failingThen(err);
    await assert.rejects(whileIamPropagates('creating RDS instance rig-x', f.call, () => {}, { delayMs: 1 }), { name: err.name });
    assert.equal(f.calls, 1);
  });
}

test('whileIamPropagates gives up at its bound, throwing the last refusal as it is', async () => {
  const f = failingThen(...Array.from({ length: 1000 }, ec2ProfileNotYet));
  await assert.rejects(whileIamPropagates('launching app-node', f.call, () => {}, { timeoutMs: 0, delayMs: 1 }), /Invalid IAM Instance Profile ARN/);
  assert.equal(f.calls, 1);
});

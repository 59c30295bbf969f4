// The rig run with nothing but the documented IAM policy (docs/aws-iam-policy-*.json), against a real
// moto 5.2.5 with IAM enforcement on (test/harness/iam-enforced.ts says what moto checks and what it
// does not): provision (its preflight among it), the expiry re-tag, the clean check, teardown and the
// clean check after it, all as an IAM user whose only permissions are those policies. Then the same
// provision as a user whose policies lack one action fails naming that action, and leaves what it made
// for a full-policy teardown.
//
// Why: docs/aws-iam-policy.md was checked only by the command names the code contains
// (iam-policy.test.ts); an action reached through a path that scan cannot see, or a policy edit that
// drops one, would be an AccessDenied in the middle of a real teardown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeleteRoleCommand } from '@aws-sdk/client-iam';
import { awsClients } from '../../../lib/targets/aws/clients';
import { cleanCheckAws } from '../../../lib/targets/aws/clean-check';
import { awsTarget } from '../../../lib/targets/aws';
import { rigNames } from '../../../lib/targets/aws/names';
import { masterCredentials } from '../../../lib/targets/aws/secrets';
import { PreflightRefusal } from '../../../lib/targets/preflight-refusal';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { extendExpiryAws } from '../../../lib/targets/aws/retag';
import { teardownAws } from '../../../lib/targets/aws/teardown';
import { exampleAws as aws, exampleSpec as spec, prepareAccount, useMoto, MADE_KINDS } from '../../harness/aws-env';
import { adminUser, asUser, documentedPolicies, enforce, userWithPolicies, withoutAction, type Keys } from '../../harness/iam-enforced';

let rigKeys: Keys;
let lackingKeys: Keys;
let noSlrKeys: Keys;
let admin: Keys;
/** The action the second user's policies lack: called once the security groups and the secret exist, so its refusal leaves something to tear down. */
const DROPPED = 'rds:CreateDBParameterGroup';

const env = useMoto({
  prefix: 'rig-aws-iam-',
  afterStart: async () => {
    await env.withClients(async (c) => {
      rigKeys = await userWithPolicies(c, 'rig-runner', documentedPolicies());
      lackingKeys = await userWithPolicies(c, 'rig-runner-lacking', withoutAction(documentedPolicies(), DROPPED));
      noSlrKeys = await userWithPolicies(c, 'rig-runner-no-slr', withoutAction(documentedPolicies(), 'iam:CreateServiceLinkedRole'));
      admin = await adminUser(c);
    });
    await enforce(env.endpoint);
  },
});

const as = asUser;
const params = () => ({ db: { ...spec.database }, aws: { spec: aws, expiresAt: new Date(Date.now() + spec.watchdogMinutes * 60_000).toISOString() } });
const kindsOf = async (campaignId: string) => (await as(admin, () => env.rigResources(campaignId))).map((r) => r.split(' ')[0]).sort();

test('moto refuses the dummy credentials once enforcement is on (the test below is really checked)', async () => {
  const r = await cleanCheckAws({ region: env.region });
  assert.equal(r.status, 'could-not-look', JSON.stringify(r));
});

test('provision, re-tag, the nodes\' consoles, clean check, teardown: every call allowed by the documented policy alone', async () => {
  const id = 'iam-enforced-1';
  await as(rigKeys, async () => {
    const made = await provisionAws(id, params());
    assert.equal(made.target, 'aws');
    const later = new Date(Date.now() + 3 * 3600_000).toISOString();
    assert.ok((await extendExpiryAws(id, later)).length > 0, 'the re-tag reached the rig');
    // The master password's read (the data plane's, when the worker runs it under the emulator).
    const c = awsClients(env.region);
    try {
      assert.ok((await masterCredentials(c, rigNames(id).dbInstance)).password);
    } finally {
      c.destroy();
    }
    // A node that never comes up is diagnosed from its serial console (GetConsoleOutput): moto answers a fixed boot log.
    const consoles = await awsTarget.nodeConsole!(id);
    assert.match(consoles, /^app-node i-[0-9a-f]+: \n(.+\n)*Enabling fast FPU save and restore\.\.\. done\.$/m);
    assert.match(consoles, /^load-node i-[0-9a-f]+: \n/m);
    const dirty = await cleanCheckAws({ region: env.region });
    assert.equal(dirty.status, 'dirty', JSON.stringify(dirty));
  });
  assert.deepEqual(await kindsOf(id), MADE_KINDS);
  await as(rigKeys, async () => {
    await teardownAws(id);
    const clean = await cleanCheckAws({ region: env.region });
    assert.equal(clean.status, 'clean', JSON.stringify(clean));
  });
  assert.deepEqual(await kindsOf(id), []);
});

test(`the policy without ${DROPPED}: provision fails naming it; the full policy tears down what it made`, async () => {
  const id = 'iam-enforced-2';
  await as(lackingKeys, async () => {
    await assert.rejects(provisionAws(id, params()), (err: Error) => {
      assert.match(`${err.name}: ${err.message}`, new RegExp(`not authorized to perform:? ${DROPPED}\\b`), err.message);
      return true;
    });
  });
  const left = await kindsOf(id);
  assert.ok(left.length > 0 && !left.includes('db-parameter-group'), `made up to the refused call: ${left.join(', ')}`);
  await as(rigKeys, () => teardownAws(id));
  assert.deepEqual(await kindsOf(id), []);
});

test('no RDS service-linked role: provisioning makes it; a policy without iam:CreateServiceLinkedRole is refused before any create, naming how to make it', async () => {
  const dropSlr = () => as(admin, () => env.withClients(async (c) => {
    for (const name of ['AWSServiceRoleForRDS', 'AWSServiceRoleForRds']) await c.iam.send(new DeleteRoleCommand({ RoleName: name })).catch(() => undefined);
  }));
  await dropSlr();
  await as(noSlrKeys, async () => {
    await assert.rejects(provisionAws('iam-enforced-3', params()), (err: unknown) => {
      assert.ok(err instanceof PreflightRefusal, String(err));
      assert.deepEqual(err.failed, ['rds-service-linked-role']);
      assert.match(err.message, /may not create it .*iam:CreateServiceLinkedRole.*aws iam create-service-linked-role --aws-service-name rds\.amazonaws\.com/);
      return true;
    });
  });
  assert.deepEqual(await kindsOf('iam-enforced-3'), [], 'nothing made');
  const lines: string[] = [];
  await as(rigKeys, async () => {
    await provisionAws('iam-enforced-4', params(), (l) => lines.push(l));
    await teardownAws('iam-enforced-4');
  });
  assert.ok(lines.some((l) => /^preflight rds-service-linked-role: ok, AWSServiceRoleForRDS did not exist: made it/.test(l)), lines.join('\n'));
  await dropSlr();
  await as(admin, () => env.withClients(prepareAccount));
});

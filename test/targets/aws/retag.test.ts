// The expiry re-tag against a real moto 5.2.5: provision a rig, move its expiry with the target's
// extendExpiry, and every resource of the campaign (nodes, security groups, the RDS instance, its
// parameter group) carries the new rig:expires; a second call with the same time changes nothing;
// another campaign's tags are untouched; a time that is not ISO 8601 is refused naming the field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findRigResources } from '../../../lib/targets/aws/find';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { teardownAws } from '../../../lib/targets/aws/teardown';
import { targetFor } from '../../../lib/targets/registry';
import { exampleAws as aws, exampleSpec as spec, useMoto } from '../../harness/aws-env';

const env = useMoto({ prefix: 'rig-aws-retag-' });

async function expiries(campaignId: string): Promise<Record<string, string | undefined>> {
  return env.withClients(async (c) => Object.fromEntries((await findRigResources(c, campaignId)).map((r) => [r.kind, r.expiresAt])));
}

test('extendExpiry re-tags rig:expires on every resource of the campaign, and only its', { timeout: 120_000 }, async () => {
  const first = new Date(Date.now() + 60 * 60_000).toISOString();
  await provisionAws('retag-a', { db: { ...spec.database }, aws: { spec: aws, expiresAt: first } });
  await provisionAws('retag-b', { db: { ...spec.database }, aws: { spec: aws, expiresAt: first } });
  const made = await expiries('retag-a');
  assert.deepEqual(Object.keys(made).sort(), ['app-node', 'artifacts-bucket', 'db-instance', 'db-parameter-group', 'db-security-group', 'load-node', 'monitoring-role', 'node-instance-profile', 'node-role', 'nodes-security-group', 'rig-secret', 'temporal-secret']);
  assert.ok(Object.values(made).every((e) => e === first), JSON.stringify(made));

  const later = new Date(Date.parse(first) + 90 * 60_000).toISOString();
  await targetFor('aws').extendExpiry('retag-a', later);
  const moved = await expiries('retag-a');
  assert.deepEqual(Object.keys(moved).sort(), Object.keys(made).sort(), 'the same resources, nothing made or lost');
  for (const [kind, e] of Object.entries(moved)) assert.equal(e, later, `${kind} rig:expires`);
  await targetFor('aws').extendExpiry('retag-a', later); // idempotent
  assert.deepEqual(await expiries('retag-a'), moved);
  assert.ok(Object.values(await expiries('retag-b')).every((e) => e === first), 'the other campaign keeps its expiry');

  await assert.rejects(targetFor('aws').extendExpiry('retag-a', 'tomorrow'), /expiresAt must be an ISO 8601 time, got "tomorrow"/);
  await targetFor('local').extendExpiry('retag-a', later); // the local target: nothing to tag, no error

  await teardownAws('retag-a');
  await teardownAws('retag-b');
  await targetFor('aws').extendExpiry('retag-a', later); // a rig already gone: nothing found, nothing done
  assert.deepEqual(await expiries('retag-a'), {});
});

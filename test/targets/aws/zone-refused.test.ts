// A database in another zone is refused at bring-up: a real moto 5.2.5 for AWS's control plane, a
// real local PostgreSQL cluster standing in for the RDS endpoint (the test-only RIG_AWS_EMULATOR_MAP),
// the bring-up activity called as `rig step` calls it (activities/bringup.ts's bringUp, bound to the
// real target registry, with the handle activities/rig-lifecycle.ts's rigHandle gives).
//
// Why: the spec measures everything in one availability zone (examples/aws.json: us-east-1a), and a
// cross-zone hop on every statement would change what is measured. RDS can put an instance elsewhere
// than asked (a replacement after a failure, a restore), so bring-up must read where the database
// really is from AWS, not from the spec or the rig's record, and refuse. moto echoes the zone a create
// names, so the test makes the database "land" in us-east-1b the way AWS could report it: the instance
// is deleted and made again with the same identifier, tags and managed master password in us-east-1b.
// The refusal is a non-retryable BringupRefusal naming both zones; with the database back in
// us-east-1a the same bring-up passes the zone check (and every check after it: the database was
// prepared and the service started as the campaign's prepare and service steps do).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CreateDBInstanceCommand, DeleteDBInstanceCommand, DescribeDBInstancesCommand } from '@aws-sdk/client-rds';
import { ApplicationFailure } from '@temporalio/common';
import { bringUp } from '../../../activities/bringup';
import { prepareRig, startRigService } from '../../../activities/nodes';
import { rigHandle } from '../../../activities/rig-lifecycle';
import { EMULATOR_MAP_ENV } from '../../../lib/targets/aws/emulator-map';
import { isNamed } from '../../../lib/targets/aws/errors';
import { findRigResources } from '../../../lib/targets/aws/find';
import { rigNames } from '../../../lib/targets/aws/names';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { teardownAws } from '../../../lib/targets/aws/teardown';
import { cleanCheckLocal } from '../../../lib/targets/local';
import { exampleAws as aws, exampleSpec as spec, standInDatabase, useMoto } from '../../harness/aws-env';

const CAMPAIGN = 'aws-zone-1';

const env = useMoto({
  prefix: 'rig-aws-state-',
  // A failed assertion must not leave the emulated app node's service running: teardown is idempotent.
  beforeStop: () => teardownAws(CAMPAIGN).catch((err: unknown) => console.error(`teardown after the test: ${String(err)}`)),
  clearEnv: [EMULATOR_MAP_ENV],
});
const { withClients } = env;

/**
 * The rig's database, made again in `zone` as AWS could report it after a replacement: the same
 * identifier, tags, class, parameter and security groups, and an RDS-managed master password.
 */
async function moveDatabase(zone: string): Promise<void> {
  const id = rigNames(CAMPAIGN).dbInstance;
  await withClients(async (c) => {
    const was = (await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances![0];
    await c.rds.send(new DeleteDBInstanceCommand({ DBInstanceIdentifier: id, SkipFinalSnapshot: true, DeleteAutomatedBackups: true }));
    // moto deletes at once; AWS would take minutes: looked at, not assumed.
    for (;;) {
      try {
        await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }));
      } catch (err) {
        if (isNamed(err, 'DBInstanceNotFound')) break;
        throw err;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    await c.rds.send(
      new CreateDBInstanceCommand({
        DBInstanceIdentifier: id,
        DBInstanceClass: was.DBInstanceClass,
        Engine: was.Engine,
        EngineVersion: was.EngineVersion,
        DBName: was.DBName,
        MasterUsername: was.MasterUsername,
        ManageMasterUserPassword: true,
        AllocatedStorage: was.AllocatedStorage,
        StorageType: was.StorageType,
        AvailabilityZone: zone,
        MultiAZ: false,
        PubliclyAccessible: false,
        VpcSecurityGroupIds: (was.VpcSecurityGroups ?? []).map((g) => g.VpcSecurityGroupId!),
        DBParameterGroupName: was.DBParameterGroups?.[0]?.DBParameterGroupName,
        Tags: was.TagList,
      }),
    );
    const now = (await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances![0];
    assert.equal(now.AvailabilityZone, zone, 'moto reports the zone the create named');
    assert.deepEqual(now.TagList, was.TagList, 'the same tags: still the campaign\'s database');
  });
}

test('a database in another zone is refused at bring-up; back in the spec\'s zone the same bring-up passes', async () => {
  // RDS's master user is rig_admin (provision.ts); the stand-in cluster (RDS-fidelity mode) has it as a non-superuser admin and requires TLS.
  const { mapJson } = await standInDatabase();
  process.env[EMULATOR_MAP_ENV] = mapJson;

  const expiresAt = new Date(Date.now() + spec.watchdogMinutes * 60_000).toISOString();
  await provisionAws(CAMPAIGN, { db: { ...spec.database }, aws: { spec: aws, expiresAt } });
  assert.equal(aws.zone, 'us-east-1a');

  await moveDatabase('us-east-1b');
  // The campaign's prepare and service steps, as their queues' workers run them: the rig is whole, only the zone is wrong.
  let rig = rigHandle(CAMPAIGN, spec);
  assert.equal(rig.target, 'aws');
  await prepareRig({ campaignId: CAMPAIGN, rig });
  const service = { lastUsed: spec.service.lastUsed, insert: spec.service.insert, aggregate: spec.service.aggregate };
  const started = await startRigService({ campaignId: CAMPAIGN, rig, service });
  rig = { ...rig, serviceUrl: started.serviceUrl };

  await assert.rejects(bringUp({ campaignId: CAMPAIGN, rig, customers: 20 }), (err: unknown) => {
    assert.ok(err instanceof ApplicationFailure, `a Temporal refusal, not a retryable error: ${String(err)}`);
    assert.equal(err.type, 'BringupRefusal');
    assert.equal(err.nonRetryable, true);
    assert.deepEqual(err.details, [{ check: 'availability-zone' }]);
    assert.match(err.message, /^bring-up refused \(availability-zone\): the database is in us-east-1b and the app in us-east-1a: every statement would cross availability zones, and the spec measures everything in one$/);
    return true;
  });

  // Back where the spec put it: the same call passes the zone check, and every check after it.
  await moveDatabase('us-east-1a');
  const ok = await bringUp({ campaignId: CAMPAIGN, rig, customers: 20 });
  assert.match(ok.summary, /^20 customers in livemode=\w+, meter \S+; checks passed: availability-zone, /);
  const log = fs.readFileSync(path.join(env.state, 'results', CAMPAIGN, 'campaign.log'), 'utf8');
  assert.match(log, /bring-up check availability-zone: app and database both in us-east-1a/);

  // Teardown by tag leaves nothing on AWS, and the emulated app node's service is stopped.
  await teardownAws(CAMPAIGN);
  assert.deepEqual(await withClients((c) => findRigResources(c, CAMPAIGN)), []);
  // (Only this campaign's: the local clean check reads every rig process on the machine, others' too.)
  const local = await cleanCheckLocal();
  assert.deepEqual(('leftovers' in local ? local.leftovers : []).filter((l) => l.campaignId === CAMPAIGN), [], JSON.stringify(local));
  assert.notEqual(local.status, 'could-not-look', JSON.stringify(local));
});

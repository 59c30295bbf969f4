// Issue 23: a whole campaign on the local target in RDS-fidelity mode (local.rdsFidelity) runs every
// step against RDS's constraints: the cluster refuses plaintext and verifies with a test CA, and the
// rig's admin is not a superuser, so the roles, migrations, bring-up checks, seed, samplers,
// reconciliation, ceiling and pgbench denominator all worked over verify-full TLS and as RDS allows.
//
// And the database's preparation killed once: on the local target it is part of provision (roles,
// database, default privileges, migrations, then the service). The worker (a child process) is
// SIGKILLed as soon as the database is prepared (the rig's record is written, not complete: the
// service is starting), and a new worker's retry of the activity meets what the dead one made, as a
// retried `prepare` meets the RDS instance: the same cluster, its roles and schema already there, and
// the roles and migrations run again as the non-superuser admin (reference/roles.ts must not name
// SUPERUSER then). The retry waits out the activity's heartbeat timeout (1 minute): the server's only
// sign that the worker died. Durations are otherwise the shortest that still run each step; nothing
// here judges timing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { readRigRecord, type RigRecord } from '../../lib/targets/local/rig-record';
import { campaignEnv, tinySpec, waitOnCampaign } from '../harness/campaign';

test('a local campaign in RDS-fidelity mode, its prepare killed and retried once, runs every step over TLS with a non-superuser admin, and leaves nothing behind', async () => {
  const env = await campaignEnv();
  const id = 'rds-fidelity';
  let worker = await env.childWorker();
  const spec = tinySpec({
    local: { rdsFidelity: true },
    seed: { customers: 20, historyRows: 2000 },
    sustained: { ...tinySpec().sustained!, repeats: 1, repeatSeconds: 3, cooldownSeconds: 1, warmupSeconds: 1 },
    ceiling: { workers: 2, batch: 20, seconds: 2 },
    denominator: { batch: 20, clients: 2, seconds: 2 },
  });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] });

  // The database is prepared once the record is written and not yet complete (the service starts next).
  const prepared = await waitOnCampaign(handle, 'the database prepared (rig.json written, not complete)', async () => {
    const rec = readRigRecord(id);
    if (rec?.complete) throw Object.assign(new Error('too late: the provision finished before the kill'), { fatal: true });
    return rec;
  }, 180_000, 20);
  worker.kill('SIGKILL');
  await new Promise((r) => worker.once('exit', r));
  worker = await env.childWorker();

  const result = (await handle.result()) as CampaignResult;
  worker.kill('SIGTERM');

  const steps = result.steps.map((s) => `${s.step}:${s.status}`);
  for (const s of ['clean-check', 'provision', 'bring-up', 'seed', 'sustained', 'ceiling', 'denominator', 'teardown', 'clean-check-after', 'report']) {
    assert.ok(steps.includes(`${s}:ok`), `${s} ran and was ok: ${JSON.stringify(result.steps.map((x) => [x.step, x.status, x.summary]))}`);
  }
  // The retry was a second attempt of the same activity, on the cluster the killed one made.
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'provisionRig');
  assert.equal(scheduled.length, 1, 'provisionRig scheduled once');
  const started = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled[0].eventId));
  assert.equal(started?.activityTaskStartedEventAttributes?.attempt, 2, 'completed by its second attempt');
  const provision = result.steps.find((s) => s.step === 'provision')!;
  assert.match(provision.summary ?? '', new RegExp(`database [^ ]+:${(prepared as RigRecord).cluster.port}/`), 'the same cluster, kept across the attempts');

  assert.equal(result.repeats.filter((r) => r.kind === 'sustained' && r.samples > 0 && r.reconciled).length, 1, 'the repeat was measured and reconciled');
  assert.ok(result.denominator?.legs.length && result.denominator.legs.every((l) => l.rowsVerified), 'pgbench reached the database over verify-full and its rows were counted');

  // The cluster refuses plaintext (its pg_hba.conf has hostssl lines only): no step even tried one;
  // and the second run of the roles as the non-superuser admin was not refused.
  const log = fs.readFileSync(path.join(result.resultsDir, 'rig-logs', 'postgres.log'), 'utf8');
  assert.doesNotMatch(log, /no pg_hba\.conf entry/);
  // The one superuser-only statement the rig sends on purpose is CHECKPOINT (settle, pgbench legs): a
  // non-superuser without pg_checkpoint is refused, and the rig records that beside the figure instead
  // of failing (test/targets/settle.test.ts). Every other refusal would be the rig overstepping.
  const refusals = log.split('\n').filter((l) => /must be superuser|permission denied to alter role/i.test(l) && !/to do CHECKPOINT/.test(l));
  assert.deepEqual(refusals, []);
  await env.assertClean();
});

// A campaign on an existing deployment (issue 14 part 2): the test starts a PostgreSQL cluster (with
// passwords, as a real deployment has) and the reference service itself, puts another tenant's rows
// there, and runs campaigns with target "existing". The rig provisions nothing and tears nothing
// down: after the campaign the cluster (same postmaster) and the service still run and answer, the
// other tenant's rows are as they were, and the page says the clean-check and the watchdog were
// skipped and nothing was torn down. Every repeat is reconciled by its run tag. Then rows of other
// traffic in the fixtures' partition make the seed refuse (seed.allowForeignRows not set), and the
// deployment is still untouched.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { WorkflowFailedError } from '@temporalio/client';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import type { CampaignSpecInput } from '../../lib/protocol/spec';
import { createFixtures } from '../../lib/targets/bringup/fixtures';
import { startService } from '../../reference/service';
import { HEALTH_PATH } from '../../lib/protocol/hardcount-api';
import { campaignEnv } from '../harness/campaign';
import { hardcountDb, queryOnce } from '../harness/hardcount';
import { countedRepeats } from '../../lib/protocol/repeat-validity';

// The file's cluster: made at the top level so that it outlives each campaign and ends with the file.
// The user's own database, its autovacuum as RDS's default parameter group has it (15 s; PostgreSQL's
// default of 60 s would make the seed's settle wait up to a minute for autoanalyze).
const dbReady = hardcountDb({ superuserPassword: 'su-pw-for-tests', parameters: { autovacuum_naptime: '15s' } });

const query = queryOnce;

/** Rows of another tenant, written as the owner in one mode, without any rig tag. */
async function otherTraffic(ownerUrl: string, tenantId: string, livemode: boolean, n: number): Promise<void> {
  const c = new pg.Client({ connectionString: ownerUrl });
  await c.connect();
  try {
    await c.query('BEGIN');
    await c.query(`SELECT set_config('app.livemode', $1, true)`, [String(livemode)]);
    await c.query(
      `INSERT INTO usage_events (tenant_id, customer_id, meter_id, quantity, idempotency_key, properties)
       SELECT $1::bigint, (SELECT min(id) FROM customers WHERE tenant_id = $1::bigint AND livemode = $2),
              (SELECT id FROM meters WHERE tenant_id = $1::bigint AND livemode = $2 LIMIT 1), g, 'other-' || $2 || '-' || g, '{"source": "their app"}'
         FROM generate_series(1, $3::int) AS g`,
      [tenantId, livemode, n],
    );
    await c.query('COMMIT');
  } finally {
    await c.end();
  }
}

test('target "existing": a campaign against a running cluster and service leaves both running and untouched; foreign rows refuse the seed', { timeout: 600_000 }, async () => {
  const db = await dbReady;
  // Another tenant's data, in test mode: outside the fixtures' (live) partition.
  const other = await createFixtures(db.ownerUrl, { tenantName: 'someone-else', customers: 5, livemode: false });
  await otherTraffic(db.ownerUrl, other.tenantId, false, 50);
  const svc = await startService({ databaseUrl: db.appUrl });
  db.defer(() => svc.close());

  const theirs = () =>
    query<{ n: string; q: string; max_id: string }>(db.superUrl, 'SELECT count(*)::text AS n, coalesce(sum(quantity), 0)::text AS q, coalesce(max(id), 0)::text AS max_id FROM usage_events WHERE tenant_id = $1', [other.tenantId]);
  const before = await theirs();
  const postmaster = async () => (await query<{ t: string }>(db.superUrl, 'SELECT pg_postmaster_start_time()::text AS t'))[0].t;
  const startedAt = await postmaster();
  const otherKeyWorks = async () =>
    (await fetch(new URL(HEALTH_PATH, svc.url), { headers: { authorization: `Bearer ${other.apiKey.reveal()}` } })).status;
  assert.equal(await otherKeyWorks(), 200);

  // The owner's URL from the worker's environment, the app role's from a 0600 file: never in the spec.
  process.env.RIG_TEST_EXISTING_DATABASE_URL = db.ownerUrl;
  const secretDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-existing-'));
  const appFile = path.join(secretDir, 'app-url');
  fs.writeFileSync(appFile, db.appUrl + '\n', { mode: 0o600 });

  const env = await campaignEnv();
  await env.inProcessWorker();
  const spec = (seed: Record<string, unknown>): CampaignSpecInput => ({
    name: 'existing',
    target: 'existing',
    calibrate: false,
    watchdogMinutes: 60,
    existing: { serviceUrl: svc.url, databaseUrlFrom: { env: 'RIG_TEST_EXISTING_DATABASE_URL' }, appDatabaseUrlFrom: { file: appFile } },
    seed: { customers: 20, historyRows: 300, settleTimeoutSeconds: 60, intoExisting: true, ...seed },
    sustained: { repeats: 2, repeatSeconds: 3, cooldownSeconds: 1, warmupSeconds: 1, configurations: [{ name: 'single', eventsPerSecond: 100, batch: 1, p99LimitMs: 1000 }] },
    denominator: { batch: 10, clients: 2, seconds: 1 },
  });

  const result = (await env.client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: 'existing-target', args: [spec({})] })) as CampaignResult;
  assert.equal(result.status, 'uncalibrated', result.error);
  assert.equal(result.rig, 'untouched');
  const stepOf = (name: string) => result.steps.find((s) => s.step === name);
  assert.equal(stepOf('clean-check')?.status, 'skipped');
  assert.equal(stepOf('watchdog')?.status, 'skipped');
  assert.equal(stepOf('teardown')?.status, 'skipped');
  assert.match(stepOf('teardown')!.summary, /^nothing torn down/);
  assert.equal(stepOf('clean-check-after'), undefined, 'no clean-check after a teardown that did not happen');
  assert.equal(stepOf('provision')?.status, 'ok');
  assert.match(stepOf('bring-up')!.summary, /checks passed: schema, app-privileges, fixtures, service-role, probe-write/);
  assert.match(stepOf('seed')!.summary, /^300 rows/);
  assert.equal(countedRepeats(result.repeats).length, 2);
  // Reconciled (rows and quantity as acknowledged); whether 3-s repeats pass their gates is not the point here.
  for (const r of result.repeats) assert.ok(r.reconciled && r.failed === 0 && r.dropped === 0, `${r.configuration} ${r.index}: ${r.reasons.join('; ')}`);
  assert.ok(result.denominator?.legs.every((l) => l.rowsVerified), 'pgbench reached the database with the owner and app URLs');

  // Still running, still answering, untouched: the same postmaster, the other tenant's rows and key.
  assert.equal(await postmaster(), startedAt, 'the cluster was never restarted');
  assert.deepEqual(await theirs(), before, "the other tenant's rows are as they were");
  assert.equal(await otherKeyWorks(), 200, "the service still answers, and the other tenant's key still works");
  // Reconciled by run tag: every repeat's reconcile.json counted its own rows only.
  for (const r of result.repeats) {
    const rec = JSON.parse(fs.readFileSync(path.join(result.resultsDir, r.dir, 'reconcile.json'), 'utf8')) as { run_tag: string; rows_written: number };
    assert.equal(rec.run_tag, r.runTag);
    assert.ok(rec.rows_written > 0 && rec.rows_written < Number(before[0].n) + 10_000);
  }

  // No secret reached the evidence or the history.
  const evidence = fs.readdirSync(result.resultsDir, { recursive: true }).map(String).filter((f) => fs.statSync(path.join(result.resultsDir, f)).isFile() && !f.endsWith('.gz'));
  for (const f of evidence) assert.doesNotMatch(fs.readFileSync(path.join(result.resultsDir, f), 'utf8'), /owner-pw-for-tests|app-pw-for-tests/, f);
  const history = JSON.stringify(await env.client.workflow.getHandle('existing-target').fetchHistory());
  assert.doesNotMatch(history, /owner-pw-for-tests|app-pw-for-tests/);

  const page = fs.readFileSync(path.join(result.resultsDir, 'report.md'), 'utf8');
  assert.match(page, /Existing deployment \(target "existing"\): the rig provisioned nothing and tore nothing down; the service and the database were left running as found\. The clean-check and the watchdog were skipped\./);
  assert.match(page, /\| clean-check \| skipped \|.*skipped on target "existing"/);
  assert.match(page, /\| watchdog \| skipped \|.*skipped on target "existing"/);
  assert.match(page, /\| teardown \| skipped \|.*nothing torn down/);
  const html = fs.readFileSync(path.join(result.resultsDir, 'report.html'), 'utf8');
  assert.match(html, /Existing deployment \(target &quot;existing&quot;\): the rig provisioned nothing and tore nothing down/);

  // Other traffic in the fixtures' partition: the seed refuses, naming seed.allowForeignRows.
  const live = await createFixtures(db.ownerUrl, { tenantName: 'live-co', customers: 3, livemode: true });
  await otherTraffic(db.ownerUrl, live.tenantId, true, 20);
  const refused = await env.client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: 'existing-foreign-rows', args: [spec({})] }).then(
    () => assert.fail('the seed must refuse rows the rig did not write'),
    (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError, String(err));
      return (err.cause as { details?: CampaignResult[] }).details![0];
    },
  );
  const seed = refused.steps.find((s) => s.step === 'seed');
  assert.equal(seed?.status, 'refused');
  assert.match(seed!.summary, /the fixtures' partition \(usage_events with livemode=true\) holds 20 row\(s\) the rig did not write .*Set seed\.allowForeignRows to true/);
  assert.equal(refused.rig, 'untouched');
  assert.equal(refused.repeats.length, 0);
  assert.equal(await postmaster(), startedAt);
  assert.deepEqual(await theirs(), before);
  assert.equal(await otherKeyWorks(), 200);

  // A URL source this worker cannot read: refused when the campaign opens, before anything runs.
  const unreadable = await env.client.workflow
    .execute('benchCampaign', {
      taskQueue: 'rig',
      workflowId: 'existing-no-source',
      args: [{ ...spec({ historyRows: 0 }), existing: { serviceUrl: svc.url, databaseUrlFrom: { env: 'RIG_TEST_NOT_SET_ANYWHERE' } }, denominator: undefined }],
    })
    .then(
      () => assert.fail('a missing URL source must refuse the campaign'),
      (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError, String(err));
        return (err.cause as { details?: CampaignResult[] }).details![0];
      },
    );
  assert.match(unreadable.error ?? '', /existing\.databaseUrlFrom: the environment variable RIG_TEST_NOT_SET_ANYWHERE is not set in the worker's environment/);
  assert.equal(unreadable.rig, 'not-provisioned');
  assert.deepEqual(unreadable.steps.filter((s) => s.step !== 'report').map((s) => s.step), [], 'nothing ran: no lease, no calibration, no connect');

  // Nothing of a local rig was made on this machine either.
  await env.assertClean();
  fs.rmSync(secretDir, { recursive: true, force: true });
});

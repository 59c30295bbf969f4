// The pgbench denominator on a real local rig: each leg verifies that the table gained exactly the rows
// pgbench committed, in the fixtures' partition, and begins settled (a VACUUM and a CHECKPOINT the
// statistics count: issue 31); a request for the other mode is refused before any
// pgbench runs; the password never reaches pgbench's argv. Legs are kept short (2 s, 2 clients).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import pg from 'pg';
import { createFixtures } from '../../lib/targets/bringup/fixtures';
import { denominator, localPgbenchRunner, type PgbenchRunner } from '../../lib/targets/denominator';
import { PartitionMismatchError } from '../../lib/targets/fixtures-scope';
import { rigDbUrls, type RigDbUrls } from '../../lib/targets/local/connection';
import { provisionLocal } from '../../lib/targets/local/provision';
import { legScript } from '../../lib/targets/pgbench-script';
import { isolatedStateDir, testCampaign } from '../harness/local-rig';
import { rig } from '../harness/rig-cli';

const stateDir = isolatedStateDir();
const campaign = testCampaign('pgb');
let urls: RigDbUrls;

before(async () => {
  await provisionLocal(campaign, {});
  urls = rigDbUrls(campaign);
  await createFixtures(urls.ownerUrl, { livemode: false }); // test mode: the legs must follow the fixtures
});

/** The real local runner, recording each call's argv and env. */
function recordingRunner(calls: Array<{ args: string[]; env: Record<string, string> }>): PgbenchRunner {
  const inner = localPgbenchRunner(urls.clusterDir);
  return { ...inner, run: (args, env) => (calls.push({ args, env }), inner.run(args, env)) };
}

async function vacuumCount(): Promise<number> {
  const c = new pg.Client({ connectionString: urls.ownerUrl });
  await c.connect();
  try {
    return Number((await c.query<{ n: string }>("SELECT vacuum_count::text AS n FROM pg_stat_user_tables WHERE relname = 'usage_events'")).rows[0].n);
  } finally {
    await c.end();
  }
}

test('all four legs run in order, each settled first (VACUUM + CHECKPOINT), and each verifies exactly the rows pgbench committed in the fixtures\' partition', async () => {
  const calls: Array<{ args: string[]; env: Record<string, string> }> = [];
  const vacuumsBefore = await vacuumCount();
  const res = await denominator({ ownerUrl: urls.ownerUrl, appUrl: urls.appUrl, checkpointUrl: urls.superuserUrl, runner: recordingRunner(calls), clients: 2, seconds: 2, batch: 20 });
  assert.equal(res.livemode, false);
  // Each leg began settled: a VACUUM of what the leg before wrote and a CHECKPOINT the statistics count.
  assert.deepEqual(res.legs.map((l) => l.order), [1, 2, 3, 4]);
  for (const l of res.legs) {
    const ck = l.settledBefore.checkpoint;
    assert.equal(l.settledBefore.vacuum_error, undefined, l.leg);
    assert.equal(ck.error, undefined, `${l.leg}: ${ck.error}`);
    assert.equal(ck.why, `before pgbench leg ${l.leg}`);
    assert.ok(ck.requested_before !== null && ck.requested_after !== null && ck.requested_after > ck.requested_before, `${l.leg}: no checkpoint counted (${ck.requested_before} -> ${ck.requested_after})`);
  }
  // The legs after the first each began after a checkpoint that wrote what the leg before dirtied.
  for (const l of res.legs.slice(1)) assert.ok((l.settledBefore.checkpoint.buffers_written ?? 0) > 0, `${l.leg}: its checkpoint wrote nothing`);
  // the owner session publishes its VACUUM counts at most once a second (pgstat): read until they show
  let vacuums = await vacuumCount();
  for (let i = 0; i < 120 && vacuums < vacuumsBefore + 4; i++) {
    await new Promise((r) => setTimeout(r, 100));
    vacuums = await vacuumCount();
  }
  assert.ok(vacuums >= vacuumsBefore + 4, `4 VACUUMs of usage_events expected, the statistics count ${vacuums - vacuumsBefore}`);
  assert.deepEqual(
    res.legs.map((l) => [l.leg, l.role]),
    [
      ['owner-commit', 'hardcount_owner'],
      ['owner-1row', 'hardcount_owner'],
      ['rls-1row', 'hardcount_app'],
      ['owner-multirow', 'hardcount_owner'],
    ],
  );
  const c = new pg.Client({ connectionString: urls.ownerUrl });
  await c.connect();
  try {
    for (const l of res.legs) {
      assert.ok(l.transactions > 0, `${l.leg} committed nothing`);
      assert.equal(l.failed, 0);
      // The commit-rate leg is one row per transaction whatever the batch; the others the batch.
      const perTx = l.leg === 'owner-commit' ? 1 : 20;
      assert.equal(l.batch, perTx);
      assert.equal(l.expectedRows, l.transactions * perTx);
      assert.equal(l.countedRows, l.expectedRows);
      assert.equal(l.otherModeRows, 0);
      assert.ok(l.rowsPerSec > 0 && l.tps > 0 && l.latencyAvgMs > 0);
      // independently: the rows are there, in the test partition, with the fixtures' tenant and meter
      const { rows } = await c.query<{ n: string; modes: boolean[]; costed: string }>(
        `SELECT count(*)::text AS n, array_agg(DISTINCT livemode) AS modes, count(cost)::text AS costed
           FROM usage_events WHERE properties @> $1`,
        [JSON.stringify({ rig_run: l.tag })],
      );
      assert.equal(Number(rows[0].n), l.expectedRows);
      assert.deepEqual(rows[0].modes, [false]);
      assert.equal(Number(rows[0].costed), l.expectedRows);
    }
  } finally {
    await c.end();
  }
  // passwords went through the environment, never argv
  const s = rigDbUrls(campaign);
  for (const call of calls) {
    const argv = call.args.join(' ');
    assert.ok(!argv.includes(new URL(s.ownerUrl).password) && !argv.includes(new URL(s.appUrl).password));
    assert.ok(call.env.PGPASSWORD);
  }
});

test('the RLS leg also runs (and reconciles) in simple mode, with BEGIN and the key lookup in one message', async () => {
  const res = await denominator({ ownerUrl: urls.ownerUrl, appUrl: urls.appUrl, runner: localPgbenchRunner(urls.clusterDir), clients: 2, seconds: 1, batch: 5, legs: ['rls-1row'], protocol: 'simple' });
  assert.equal(res.legs[0].protocol, 'simple');
  assert.equal(res.legs[0].countedRows, res.legs[0].transactions * 5);
});

test('the denominator refuses when asked for the mode the fixtures are not in, before running pgbench', async () => {
  const calls: Array<{ args: string[]; env: Record<string, string> }> = [];
  await assert.rejects(
    denominator({ ownerUrl: urls.ownerUrl, appUrl: urls.appUrl, runner: recordingRunner(calls), clients: 2, seconds: 2, batch: 5, livemode: true }),
    (err: Error) => err instanceof PartitionMismatchError && /pgbench denominator refused: it was asked for livemode=true, but the fixtures .* are livemode=false/.test(err.message),
  );
  assert.equal(calls.length, 0);
});

test('a leg whose rows do not reconcile fails instead of reporting a rate', async () => {
  // a runner that reports success but whose script wrote into the wrong partition (app.livemode flipped)
  const inner = localPgbenchRunner(urls.clusterDir);
  const lying: PgbenchRunner = { ...inner, run: (args, env) => inner.run(args, { ...env, PGOPTIONS: '-c app.livemode=true' }) };
  await assert.rejects(
    denominator({ ownerUrl: urls.ownerUrl, appUrl: urls.appUrl, runner: lying, clients: 1, seconds: 1, batch: 3, legs: ['owner-multirow'] }),
    /does not reconcile: pgbench committed \d+ transactions x 3 rows = \d+, the livemode=false partition gained 0 rows .* the other partition \d+/,
  );
});

test('the multi-row leg makes its rows in SQL (pgbench allows 255 variables per statement)', () => {
  const scope = { tenantId: '1', meterId: '2', customerIds: ['10', '11', '12'], unitCost: '0.0001' };
  const multi = legScript('owner-multirow', { scope, tag: 't', batch: 500 });
  assert.match(multi, /generate_series\(1, 500\)/);
  assert.equal((multi.match(/^INSERT/gm) ?? []).length, 1);
  const one = legScript('owner-1row', { scope, tag: 't', batch: 500 });
  assert.equal((one.match(/^INSERT/gm) ?? []).length, 500);
  assert.match(one, /^BEGIN;$/m);
  // the commit-rate leg: one one-row INSERT, its own transaction (no BEGIN/COMMIT), at any batch
  const commit = legScript('owner-commit', { scope, tag: 't', batch: 500 });
  assert.equal((commit.match(/^INSERT/gm) ?? []).length, 1);
  assert.doesNotMatch(commit, /^(BEGIN|COMMIT)/m);
  assert.match(commit, /batch 1,/);
  // non-contiguous customers fall back to an array lookup
  const gaps = legScript('owner-multirow', { scope: { ...scope, customerIds: ['10', '12', '40'] }, tag: 't', batch: 2 });
  assert.match(gaps, /ARRAY\[10,12,40\]/);
  assert.throws(() => legScript('rls-1row', { scope, tag: 't', batch: 1 }), /API key hash/);
  // the RLS leg: BEGIN and the key lookup in one message in simple mode (as the service), two otherwise
  const keyHash = 'a'.repeat(64);
  assert.match(legScript('rls-1row', { scope, tag: 't', batch: 2, keyHash, protocol: 'simple' }), /^BEGIN \\; SELECT set_config\('app.tenant_id'/m);
  const prepared = legScript('rls-1row', { scope, tag: 't', batch: 2, keyHash });
  assert.match(prepared, /^BEGIN;\nSELECT set_config\('app.tenant_id', a.tenant_id::text, true\), set_config\('app.livemode'/m);
  assert.match(prepared, /^COMMIT;$/m);
});

test('rig denominator (the command) prints each leg with rows/s', async () => {
  const out = await rig(['denominator', '--campaign', campaign, '--clients', '2', '--seconds', '1', '--batch', '10', '--legs', 'owner-multirow'], {
    RIG_STATE_DIR: stateDir,
  });
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /owner-multirow\s+hardcount_owner\s+[\d,]+\s+[\d.]+\s+[\d.]+ ms\s+[\d,]+/);
});

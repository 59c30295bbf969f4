// Seeding COPYs the right count into the fixtures' partition and refuses the other mode; reconciliation
// counts exactly one run tag's rows and quantity, in the intended partition. On a real local rig.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import pg from 'pg';
import { ApplicationFailure } from '@temporalio/common';
import type { RigHandle } from '../../lib/protocol/campaign-result';
import { seedHistory } from '../../activities/seed';
import { RUN_TAG_PROPERTY } from '../../lib/protocol/hardcount-api';
import { createFixtures } from '../../lib/targets/bringup/fixtures';
import { PartitionMismatchError } from '../../lib/targets/fixtures-scope';
import { rigDbUrls, type RigDbUrls } from '../../lib/targets/local/connection';
import { provisionLocal } from '../../lib/targets/local/provision';
import { storeApiKey } from '../../lib/targets/local/secrets';
import { reconcile } from '../../lib/targets/reconcile';
import { seed, seedTagFor, type SeedProgress } from '../../lib/targets/seed';
import { SEED_TAG_PROPERTY, seedQuantity } from '../../lib/targets/seed-rows';
import type { ProvisionResult } from '../../lib/targets/target';
import { isolatedStateDir, testCampaign } from '../harness/local-rig';
import { rig } from '../harness/rig-cli';

const stateDir = isolatedStateDir();
const campaign = testCampaign('seed');
let urls: RigDbUrls;
let rigInfo: ProvisionResult;
let apiKey: string;

before(async () => {
  // autovacuum wakes every second, so that settling after a small seed is quick
  rigInfo = await provisionLocal(campaign, { db: { extra: { autovacuum_naptime: 1 } } });
  urls = rigDbUrls(campaign);
  const f = await createFixtures(urls.ownerUrl, { livemode: true });
  apiKey = f.apiKey.reveal();
  storeApiKey(campaign, apiKey);
});

async function q<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: urls.ownerUrl });
  await c.connect();
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

test('seed COPYs exactly N rows into the fixtures\' partition, spread over 30 days and every customer, then settles and ends with a CHECKPOINT', async () => {
  const progress: SeedProgress[] = [];
  const res = await seed({ ownerUrl: urls.ownerUrl, checkpointUrl: urls.superuserUrl, rows: 30_000, onProgress: (p) => progress.push(p), progressEveryMs: 0, settle: { timeoutMs: 120_000, pollMs: 500 } });
  assert.equal(res.rows, 30_000);
  assert.equal(res.verifiedRows, 30_000);
  assert.equal(res.livemode, true);
  assert.ok(res.rowsPerSec > 0);
  const [row] = await q<{ live: string; test: string; customers: string; days: string; qty: string; costed: string }>(
    `SELECT count(*) FILTER (WHERE livemode)::text AS live, count(*) FILTER (WHERE NOT livemode)::text AS test,
            count(DISTINCT customer_id)::text AS customers,
            extract(day FROM max(occurred_at) - min(occurred_at))::text AS days,
            sum(quantity)::text AS qty, count(cost)::text AS costed
       FROM usage_events WHERE properties @> $1`,
    [JSON.stringify({ [SEED_TAG_PROPERTY]: res.tag })],
  );
  assert.deepEqual(row, { live: '30000', test: '0', customers: '200', days: '29', qty: String(seedQuantity(30_000)), costed: '30000' });
  // progress: copy lines, then settle lines ending idle
  assert.ok(progress.some((p) => p.phase === 'copy'));
  const settles = progress.filter((p) => p.phase === 'settle');
  assert.ok(settles.length >= 2);
  assert.equal(settles.at(-1)!.settle!.idle, true);
  assert.equal(res.settle!.state.vacuuming, 0);
  // Settling ended with a CHECKPOINT the statistics count, which wrote what the load and its vacuum dirtied.
  const ck = res.checkpoint!;
  assert.equal(ck.error, undefined, ck.error);
  assert.equal(ck.why, 'after settle');
  assert.ok(ck.requested_after! > ck.requested_before!, `checkpoints requested ${ck.requested_before} -> ${ck.requested_after}`);
  assert.ok((ck.buffers_written ?? 0) > 0);
});

test('seed refuses a requested mode that is not the fixtures\' mode, and writes nothing', async () => {
  const [before] = await q<{ n: string }>('SELECT count(*)::text AS n FROM usage_events');
  await assert.rejects(seed({ ownerUrl: urls.ownerUrl, rows: 1000, livemode: false, settle: false }), (err: Error) => {
    assert.ok(err instanceof PartitionMismatchError);
    assert.match(err.message, /asked for livemode=false, but the fixtures \(tenant \d+\) are livemode=true/);
    return true;
  });
  const [after] = await q<{ n: string }>('SELECT count(*)::text AS n FROM usage_events');
  assert.equal(after.n, before.n);
});

test('rig seed (the command) seeds, reports rows/s, and exits 2 on bad arguments', async () => {
  const ok = await rig(['seed', '--rows', '2000', '--campaign', campaign, '--livemode', 'true', '--no-settle'], { RIG_STATE_DIR: stateDir });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /seeded 2,000 rows .* livemode=true: .* rows\/s; 2,000 verified in the partition; not settled/);
  assert.match(ok.stderr, /100% 2,000\/2,000 rows/); // not a TTY: plain progress lines
  const bad = await rig(['seed', '--rows', 'many'], { RIG_STATE_DIR: stateDir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--rows must be a positive integer/);
  const mismatch = await rig(['seed', '--rows', '10', '--campaign', campaign, '--livemode', 'false'], { RIG_STATE_DIR: stateDir });
  assert.equal(mismatch.code, 1);
  assert.match(mismatch.stderr, /seeding refused: it was asked for livemode=false/);
});

test('reconcile counts exactly one run tag, in the intended partition, with its Σ quantity', async () => {
  // events through the real service (RLS path), tagged with two run tags
  const send = async (tag: string, n: number, qty: (i: number) => number) => {
    const events = Array.from({ length: n }, (_, i) => ({
      customer_id: `cus_${String((i % 200) + 1).padStart(4, '0')}`,
      meter: 'api_calls',
      quantity: qty(i),
      idempotency_key: `${tag}-${i}`,
      properties: { [RUN_TAG_PROPERTY]: tag, region: 'eu' },
    }));
    const res = await fetch(`${rigInfo.serviceUrl}/v1/usage-events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events }),
    });
    assert.equal(res.status, 201, await res.text());
  };
  await send('run-a', 500, (i) => i % 7);
  await send('run-a-2', 40, () => 1000); // a tag that starts like run-a must not count
  await send('run-b', 33, () => 3);
  // rows of run-a written by hand into the other partition (what the trap would produce)
  const c = new pg.Client({ connectionString: urls.ownerUrl });
  await c.connect();
  await c.query(`SELECT set_config('app.livemode', 'false', false)`);
  await c.query(
    `INSERT INTO usage_events (tenant_id, customer_id, meter_id, quantity, idempotency_key, properties)
     SELECT c.tenant_id, c.id, m.id, 5, 'stray-' || g, $1::jsonb FROM generate_series(1, 4) g,
            (SELECT * FROM customers LIMIT 1) c, (SELECT * FROM meters LIMIT 1) m`,
    [JSON.stringify({ [RUN_TAG_PROPERTY]: 'run-a' })],
  );
  const a = await reconcile(c, { runTag: 'run-a', livemode: true });
  await c.end();
  const expectedQty = Array.from({ length: 500 }, (_, i) => i % 7).reduce((s, x) => s + x, 0);
  assert.deepEqual(a, { runTag: 'run-a', livemode: true, rows: 500, quantity: expectedQty, otherModeRows: 4 });
  assert.deepEqual(await reconcile(urls.ownerUrl, { runTag: 'run-b', livemode: true }), { runTag: 'run-b', livemode: true, rows: 33, quantity: 99, otherModeRows: 0 });
  const none = await reconcile(urls.ownerUrl, { runTag: 'run-never', livemode: true });
  assert.equal(none.rows, 0);
  assert.equal(none.quantity, 0);
  // in the other partition, run-a is the 4 strays
  const other = await reconcile(urls.ownerUrl, { runTag: 'run-a', livemode: false });
  assert.equal(other.rows, 4);
  assert.equal(other.quantity, 20);
  assert.equal(other.otherModeRows, 500);
});

test('the seed activity: a table that cannot settle is a SettleRefusal naming it and what keeps autovacuum out; run again, it copies nothing', async (t) => {
  // Called as `rig step` calls it (no Temporal context). A session holds SHARE UPDATE EXCLUSIVE on the
  // table, which keeps autovacuum out (COPY is not blocked by it).
  const holder = new pg.Client({ connectionString: urls.ownerUrl, application_name: 'test-lock-holder' });
  await holder.connect();
  const input = { campaignId: campaign, rig: { target: 'local' } as RigHandle, rows: 40_000, settleTimeoutSeconds: 2, rebuildRollup: false };
  const tagged = async () =>
    Number((await q<{ n: string }>('SELECT count(*)::text AS n FROM usage_events WHERE properties @> $1', [JSON.stringify({ [SEED_TAG_PROPERTY]: seedTagFor(campaign) })]))[0].n);
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE usage_events IN SHARE UPDATE EXCLUSIVE MODE');
    // Work for autovacuum that the statistics already show: the seed's own COPY may reach them only
    // after its session has been idle 10 s (PostgreSQL 15+ flushes a busy session's counts lazily),
    // after this test's 2-s settle. Rows updated in a session that then ends are counted at its exit.
    const [rows] = await q<{ n: string }>('SELECT count(*)::text AS n FROM usage_events');
    const writer = new pg.Client({ connectionString: urls.ownerUrl });
    await writer.connect();
    await writer.query('UPDATE usage_events SET quantity = quantity');
    await writer.end();
    for (let k = 0; k < 100; k++) {
      const [st] = await q<{ n: string }>(`SELECT n_dead_tup::text AS n FROM pg_stat_user_tables WHERE relname = 'usage_events'`);
      if (Number(st.n) >= Number(rows.n)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await assert.rejects(seedHistory(input), (err: Error) => {
      assert.ok(err instanceof ApplicationFailure, String(err));
      assert.equal(err.type, 'SettleRefusal');
      t.diagnostic(err.message);
      assert.equal(err.nonRetryable, true);
      assert.match(err.message, /^usage_events did not settle within 2 s: .*Locks on usage_events that keep autovacuum out: pid \d+ ShareUpdateExclusiveLock \(test-lock-holder/);
      return true;
    });
    assert.equal(await tagged(), 40_000);
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await holder.end();
  }
  const again = await seedHistory({ ...input, settleTimeoutSeconds: 120 });
  assert.match(again.summary, /^40000 rows \(tag seed-[0-9a-f]{10}\) in livemode=true; 40000 were already in from an earlier attempt, 0 copied; autovacuum settled after [\d.]+ s; then a CHECKPOINT$/);
  assert.equal(await tagged(), 40_000);
});

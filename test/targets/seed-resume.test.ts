// A seed run again under the same tag copies only what is missing: after a cancellation mid-COPY (whole
// chunks only, the same rows byte for byte, the cancelled run writes nothing more), after a complete
// run (nothing copied, it just settles), and around a hole in a chunk. A table that cannot settle is a
// SettleTimeoutError naming the table and what keeps autovacuum out. On a real PostgreSQL cluster.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { createFixtures } from '../../lib/targets/bringup/fixtures';
import { seed, seedTagFor } from '../../lib/targets/seed';
import { SEED_TAG_PROPERTY, seedQuantity, seedTimeMs } from '../../lib/targets/seed-rows';
import { SettleTimeoutError } from '../../lib/targets/settle';
import { waitFor } from '../harness/campaign';
import { hardcountDb, queryOnce } from '../harness/hardcount';

// autovacuum wakes every second, so that settling after a small seed is quick
const dbReady = hardcountDb({ parameters: { autovacuum_naptime: 1 } });
const ROWS = 60_000;
const CHUNK = 10_000;
const DAYS = 30;

const q = queryOnce;

async function countTag(url: string, tag: string): Promise<number> {
  const [r] = await q<{ n: string }>(url, 'SELECT count(*)::text AS n FROM usage_events WHERE properties @> $1', [JSON.stringify({ [SEED_TAG_PROPERTY]: tag })]);
  return Number(r.n);
}

/** Every row under the tag is row i of one and the same history: its time, quantity and key. */
async function assertOneHistory(url: string, tag: string, rows: number): Promise<void> {
  const got = await q<{ i: string; ms: string; quantity: string }>(
    url,
    `SELECT substring(idempotency_key FROM '-([0-9]+)$') AS i, (extract(epoch FROM occurred_at) * 1000)::bigint::text AS ms, quantity::text
       FROM usage_events WHERE properties @> $1 ORDER BY substring(idempotency_key FROM '-([0-9]+)$')::bigint`,
    [JSON.stringify({ [SEED_TAG_PROPERTY]: tag })],
  );
  assert.equal(got.length, rows);
  assert.deepEqual(
    got.map((r) => Number(r.i)),
    Array.from({ length: rows }, (_, i) => i),
    'each index exactly once',
  );
  const spanMs = DAYS * 86_400_000;
  const end = new Date(Number(got[0].ms) + spanMs);
  const off = got.filter((r, i) => Number(r.ms) !== seedTimeMs({ rows, days: DAYS, end }, i));
  assert.equal(off.length, 0, `rows whose time is not the first run's history: ${JSON.stringify(off.slice(0, 3))}`);
  assert.equal(
    got.reduce((s, r) => s + Number(r.quantity), 0),
    seedQuantity(rows),
  );
}

test('fixtures', async () => {
  const db = await dbReady;
  await createFixtures(db.ownerUrl, { livemode: true });
});

test('cancelled mid-COPY: whole chunks only, nothing written after; the same tag again copies only the rest, the same rows', async () => {
  const db = await dbReady;
  const tag = seedTagFor('seed-resume-cancel');
  const ctl = new AbortController();
  const firstEnd = new Date(Date.now() - 3_600_000); // the retry runs "later" and must keep this end
  await assert.rejects(
    seed({
      ownerUrl: db.ownerUrl,
      rows: ROWS,
      tag,
      chunkRows: CHUNK,
      end: firstEnd,
      settle: false,
      progressEveryMs: 0,
      signal: ctl.signal,
      onProgress: (p) => {
        if (p.committed >= 2 * CHUNK && p.rows > p.committed) ctl.abort(new Error('cancelled by the test'));
      },
    }),
    /cancelled by the test/,
  );
  // The cancelled run's session is gone: nobody goes on writing under the tag.
  await waitFor('the cancelled seed session to end', async () => {
    const [r] = await q<{ n: string }>(db.superUrl, `SELECT count(*)::text AS n FROM pg_stat_activity WHERE application_name = 'rig-seed'`);
    return r.n === '0';
  });
  const partial = await countTag(db.ownerUrl, tag);
  assert.ok(partial >= 2 * CHUNK && partial < ROWS && partial % CHUNK === 0, `whole chunks only, not all: ${partial}`);

  const res = await seed({ ownerUrl: db.ownerUrl, rows: ROWS, tag, chunkRows: CHUNK, settle: false });
  assert.equal(res.alreadyIn, partial);
  assert.equal(res.copiedRows, ROWS - partial);
  assert.equal(res.verifiedRows, ROWS);
  await assertOneHistory(db.ownerUrl, tag, ROWS);
  const [first] = await q<{ ms: string }>(db.ownerUrl, 'SELECT (extract(epoch FROM min(occurred_at)) * 1000)::bigint::text AS ms FROM usage_events WHERE properties @> $1', [
    JSON.stringify({ [SEED_TAG_PROPERTY]: tag }),
  ]);
  assert.equal(Number(first.ms), firstEnd.getTime() - DAYS * 86_400_000, 'the history ends where the first run put it');

  // Complete already: nothing is copied, it only settles.
  const again = await seed({ ownerUrl: db.ownerUrl, rows: ROWS, tag, chunkRows: CHUNK, settle: { timeoutMs: 120_000, pollMs: 500 } });
  assert.equal(again.alreadyIn, ROWS);
  assert.equal(again.copiedRows, 0);
  assert.equal(again.settle?.state.idle, true);
  assert.equal(await countTag(db.ownerUrl, tag), ROWS);
});

test('a hole inside a chunk: only the missing rows are copied; a tag begun with more rows is refused', async () => {
  const db = await dbReady;
  const tag = seedTagFor('seed-resume-hole');
  await seed({ ownerUrl: db.ownerUrl, rows: 30_000, tag, chunkRows: CHUNK, settle: false });
  await q(db.ownerUrl, `DELETE FROM usage_events WHERE properties @> $1 AND idempotency_key IN ($2, $3, $4)`, [
    JSON.stringify({ [SEED_TAG_PROPERTY]: tag }),
    `seed-${tag}-10001`,
    `seed-${tag}-15000`,
    `seed-${tag}-29999`,
  ]);
  const res = await seed({ ownerUrl: db.ownerUrl, rows: 30_000, tag, chunkRows: CHUNK, settle: false });
  assert.equal(res.copiedRows, 3);
  await assertOneHistory(db.ownerUrl, tag, 30_000);

  await assert.rejects(seed({ ownerUrl: db.ownerUrl, rows: 20_000, tag, chunkRows: CHUNK, settle: false }), /beyond the 20000 rows asked for/);
  assert.equal(await countTag(db.ownerUrl, tag), 30_000);
});

test('a table that cannot settle: SettleTimeoutError names the table and the lock that keeps autovacuum out', async () => {
  const db = await dbReady;
  // A session holding SHARE UPDATE EXCLUSIVE (what a manual VACUUM or CREATE INDEX CONCURRENTLY holds):
  // autovacuum skips the table while it is held, and COPY (ROW EXCLUSIVE) is not blocked by it.
  const holder = new pg.Client({ connectionString: db.ownerUrl, application_name: 'test-lock-holder' });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE usage_events IN SHARE UPDATE EXCLUSIVE MODE');
    const tag = seedTagFor('seed-resume-settle');
    await assert.rejects(seed({ ownerUrl: db.ownerUrl, rows: 40_000, tag, settle: { timeoutMs: 3000, pollMs: 500 } }), (err: Error) => {
      assert.ok(err instanceof SettleTimeoutError, String(err));
      assert.equal(err.table, 'usage_events');
      assert.match(err.message, /usage_events did not settle within 3 s/);
      assert.match(err.message, /Locks on usage_events that keep autovacuum out: pid \d+ ShareUpdateExclusiveLock \(test-lock-holder, idle in transaction/);
      assert.equal(err.state.idle, false);
      return true;
    });
    assert.equal(await countTag(db.ownerUrl, tag), 40_000, 'the rows are in; a retry would only settle');
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await holder.end();
  }
});

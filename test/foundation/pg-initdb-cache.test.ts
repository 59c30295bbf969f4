// The run's initdb cache (RIG_PG_INITDB_CACHE, set by scripts/run-tests.cjs): the first cluster of a
// kind runs initdb into the cache, every later one copies that data folder. A copy must be a cluster of
// its own: its own data, its own superuser password (set on the copy), refusing another copy's.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { throwAwayCluster } from '../harness/pg';

async function query(url: string, sql: string): Promise<pg.QueryResultRow[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

test('clusters copied from the cache: one initdb per kind, each copy its own data and its own password', async () => {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-initdb-cache-'));
  fs.chmodSync(cache, 0o755);
  const before = process.env.RIG_PG_INITDB_CACHE;
  process.env.RIG_PG_INITDB_CACHE = cache;
  try {
    const one = await throwAwayCluster({ superuserPassword: 'pw-one' });
    const templates = () => fs.readdirSync(cache).sort();
    assert.equal(templates().length, 1, 'the first cluster made the template');
    const [two, trusting] = await Promise.all([throwAwayCluster({ superuserPassword: "pw-'two'" }), throwAwayCluster()]);
    assert.equal(templates().length, 2, 'the second password cluster copied; the trusting one (another kind) made its own');

    // Each copy takes its own password and refuses the other's.
    await query(one.url('postgres', 'postgres', 'pw-one'), 'CREATE TABLE only_in_one (x int)');
    await assert.rejects(query(two.url('postgres', 'postgres', 'pw-one'), 'SELECT 1'), /password authentication failed/);
    await assert.rejects(query(one.url('postgres', 'postgres', "pw-'two'"), 'SELECT 1'), /password authentication failed/);
    // Its own data: the table made in one is not in the other.
    const inTwo = await query(two.url('postgres', 'postgres', "pw-'two'"), "SELECT to_regclass('only_in_one') AS t");
    assert.equal(inTwo[0].t, null);
    assert.equal(Number((await query(trusting.url(), 'SELECT 41 + 1 AS v'))[0].v), 42);
    assert.notEqual(one.dataDir, two.dataDir);
    // Outside the test suite (no RIG_TESTING=1) the variable is not honoured: a kind the cache has not
    // seen (another superuser's name) makes no template there, and its initdb's system identifier is its own.
    const testing = process.env.RIG_TESTING;
    delete process.env.RIG_TESTING;
    let own;
    try {
      own = await throwAwayCluster({ superuser: 'someone' });
    } finally {
      process.env.RIG_TESTING = testing;
    }
    assert.equal(templates().length, 2, 'a cluster made outside the test suite ran its own initdb, not into the cache');
    const sysid = async (url: string) => String((await query(url, 'SELECT system_identifier FROM pg_control_system()'))[0].system_identifier);
    assert.equal(await sysid(one.url('postgres', 'postgres', 'pw-one')), await sysid(two.url('postgres', 'postgres', "pw-'two'")), 'copies share the template\'s identifier');
    assert.notEqual(await sysid(own.url('postgres', 'someone')), await sysid(one.url('postgres', 'postgres', 'pw-one')));
  } finally {
    if (before === undefined) delete process.env.RIG_PG_INITDB_CACHE;
    else process.env.RIG_PG_INITDB_CACHE = before;
  }
  // Not removed here: the clusters' `after` hooks stop them first; the cache goes with the temp folder.
  process.on('exit', () => fs.rmSync(cache, { recursive: true, force: true }));
});

// The statistics a copy starts with are initdb's own. The server reads them at start, and autovacuum
// plans its first rounds from them: with the file the password's single-user session rewrote (its own
// commits in `postgres`, its update of pg_authid), autovacuum analyzed template1's catalogs half a
// naptime after start instead of a whole one, and that WAL fell inside test/evidence/wal-bracket.test.ts's
// window (pg_stat_wal, which counts the whole cluster, read 926 B per event against pg_waldump's 807 B).
test('a copy starts with the statistics of a cluster made by its own initdb', async () => {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-initdb-cache-'));
  fs.chmodSync(cache, 0o755);
  process.on('exit', () => fs.rmSync(cache, { recursive: true, force: true }));
  const before = process.env.RIG_PG_INITDB_CACHE;
  const made = async (cacheSetting: string) => {
    process.env.RIG_PG_INITDB_CACHE = cacheSetting;
    try {
      return await throwAwayCluster({ superuserPassword: 'pw' });
    } finally {
      if (before === undefined) delete process.env.RIG_PG_INITDB_CACHE;
      else process.env.RIG_PG_INITDB_CACHE = before;
    }
  };
  const own = await made('off');
  const copy = await made(cache);
  assert.equal(fs.readdirSync(cache).length, 1, 'the copy came from the cache');
  // Read at once, on a fresh connection: what the server restored from the file (a session's own
  // counts are published only when it goes idle or ends).
  const stats = async (c: typeof own) =>
    (await query(c.url('postgres', 'postgres', 'pw'), `SELECT coalesce(datname, '(shared)') AS db, xact_commit::int AS commits, tup_inserted::int AS inserted, tup_updated::int AS updated FROM pg_stat_database ORDER BY 1`)).map((r) => ({ ...r }));
  const expected = await stats(own);
  assert.ok(expected.find((r) => r.db === 'template1')!.inserted > 0, 'initdb\'s own statistics are there to compare');
  assert.deepEqual(await stats(copy), expected);
});

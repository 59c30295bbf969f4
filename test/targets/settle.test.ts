// Settling leaves no debt (issue 31, defect 6), on a real cluster: the CHECKPOINT that ends it writes the
// pages a vacuum dirtied (pg_buffercache shows none left), a role that may not checkpoint gets a record
// saying so instead of a failed step, and a table with its own autovacuum thresholds (reloptions) is
// waited for by them, not by the global ones that would call it idle at once.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import pg from 'pg';
import { checkpoint, checkpointLine } from '../../lib/targets/checkpoint';
import { withClient } from '../../lib/targets/db';
import { readSettleState, settle } from '../../lib/targets/settle';
import type { PgCluster } from '../../lib/targets/local/pg-cluster';
import { throwAwayCluster } from '../harness/pg';

// autovacuum wakes every second, so a table over its thresholds is vacuumed within seconds. Made at the
// top level: the harness removes it in the file's own `after`.
const made = throwAwayCluster({ parameters: { autovacuum_naptime: 1 } });
let cluster: PgCluster;
before(async () => {
  cluster = await made;
});


const dirtyPages = (c: pg.ClientBase, rel: string) =>
  c.query<{ n: string }>(`SELECT count(*)::text AS n FROM pg_buffercache b JOIN pg_class c ON b.relfilenode = pg_relation_filenode(c.oid) WHERE c.relname = $1 AND b.isdirty`, [rel]).then((r) => Number(r.rows[0].n));

test('the CHECKPOINT that ends settling writes every page the vacuum dirtied, and the statistics count it', async () => {
  await withClient(cluster.url(), async (c) => {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_buffercache');
    await c.query('CREATE TABLE loaded (id bigint PRIMARY KEY, body text) WITH (autovacuum_enabled = false)');
    await c.query("INSERT INTO loaded SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g");
    await c.query('CHECKPOINT'); // the load's own pages written: what follows is the vacuum's
    await c.query('VACUUM loaded'); // sets hint bits and the visibility map: every heap page dirtied again
    const before = await dirtyPages(c, 'loaded');
    assert.ok(before > 50, `the vacuum left only ${before} dirty pages`);
    const rec = await checkpoint(cluster.url(), 'after settle');
    assert.equal(rec.error, undefined, rec.error);
    assert.equal(rec.why, 'after settle');
    assert.ok(rec.requested_before !== null && rec.requested_after === rec.requested_before + 1, `checkpoints requested ${rec.requested_before} -> ${rec.requested_after}`);
    assert.ok((rec.buffers_written ?? 0) >= before, `the checkpoint wrote ${rec.buffers_written} buffers, ${before} were dirty`);
    assert.equal(await dirtyPages(c, 'loaded'), 0);
    assert.match(checkpointLine(rec), /^CHECKPOINT after settle: \d+ buffers written in [\d.]+ s$/);
  });
});

test('a role that may not CHECKPOINT gets a record saying so (the phase begins without one), not a failure', async () => {
  await withClient(cluster.url(), (c) => c.query("CREATE ROLE plain LOGIN PASSWORD 'p'"));
  const rec = await checkpoint(cluster.url('postgres', 'plain'), 'before pgbench leg owner-1row');
  assert.match(rec.error ?? '', /permission denied|must be superuser|pg_checkpoint/);
  assert.match(checkpointLine(rec), /^no CHECKPOINT before pgbench leg owner-1row \(.+\): the next phase may pay for the pages left dirty$/);
  // and a retry of a step that checkpointed already simply checkpoints again
  const again = await checkpoint(cluster.url(), 'after settle');
  const twice = await checkpoint(cluster.url(), 'after settle');
  assert.equal(again.error ?? twice.error, undefined);
});

test('settle waits for a table by its own thresholds (reloptions), which the global ones would call idle at once', async () => {
  await withClient(cluster.url(), async (c) => {
    // Globally an insert-triggered vacuum is due after 1000 rows; this table asks for one after 100.
    await c.query(
      `CREATE TABLE own (id bigint PRIMARY KEY, q bigint) WITH (autovacuum_vacuum_insert_threshold = 100, autovacuum_vacuum_insert_scale_factor = 0,
         autovacuum_analyze_threshold = 100000, autovacuum_analyze_scale_factor = 0)`,
    );
    await c.query('INSERT INTO own SELECT g, g FROM generate_series(1, 600) g');
    const first = await readSettleState(c, 'own');
    assert.deepEqual(first.reloptions, { autovacuum_vacuum_insert_threshold: '100', autovacuum_vacuum_insert_scale_factor: '0', autovacuum_analyze_threshold: '100000', autovacuum_analyze_scale_factor: '0' });
    assert.equal(first.insertThreshold, 100, 'the table\'s own insert threshold, not the global 1000 + 0.2 x reltuples');
    assert.equal(first.analyzeThreshold, 100000);
    assert.equal(first.autovacuumEnabled, true);
    const res = await settle(c, { table: 'own', insertedAtLeast: 600, pollMs: 250, timeoutMs: 60_000 });
    // Settled only once autovacuum had vacuumed it: by the global thresholds it was idle before any pass.
    assert.ok(res.state.lastAutovacuum !== null, 'settle returned before autovacuum vacuumed the table it was due on');
    assert.ok(res.state.nInsSinceVacuum <= 100);
    assert.equal(res.state.lastAutoanalyze, null, 'the table\'s analyze threshold (100000) is not reached, so no analyze was waited for');
  });
});

test('a table with autovacuum turned off has no pass coming: it is idle unless one runs, and an insert threshold of -1 is none', async () => {
  await withClient(cluster.url(), async (c) => {
    await c.query('CREATE TABLE off_t (id bigint) WITH (autovacuum_enabled = false)');
    await c.query('INSERT INTO off_t SELECT g FROM generate_series(1, 5000) g');
    await c.query('CREATE TABLE no_ins (id bigint) WITH (autovacuum_vacuum_insert_threshold = -1, autovacuum_analyze_threshold = 100000)');
    await c.query('INSERT INTO no_ins SELECT g FROM generate_series(1, 5000) g');
    const off = await settle(c, { table: 'off_t', insertedAtLeast: 5000, pollMs: 250, timeoutMs: 30_000 });
    assert.equal(off.state.autovacuumEnabled, false);
    assert.equal(off.state.lastAutovacuum, null);
    const noIns = await readSettleState(c, 'no_ins');
    assert.equal(noIns.insertThreshold, Infinity);
  });
});

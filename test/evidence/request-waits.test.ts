// What requests waited on, proven on a provoked truth on a real cluster: a session of the service's
// role (hardcount_app) waits on a row lock another session holds for a known time, while an autovacuum
// worker sleeps in its cost delay (Timeout:VacuumDelay, in state 'active') and a rig session sleeps in
// pg_sleep. The requests' waits must hold the lock wait and nothing of the others'; the database's own
// rows must hold the autovacuum worker's delay. A sampler or summary that counted every active backend
// as a request (the old one) puts VacuumDelay among the requests' waits and fails here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { startDbSampler, type DbSample } from '../../lib/evidence/db-sampler';
import { readJsonl } from '../../lib/evidence/jsonl-writer';
import { summarizeDb } from '../../lib/evidence/report/db-summary';
import { settingsReadBack } from '../../lib/evidence/report/model';
import type { RepeatModel } from '../../lib/evidence/report/model-types';
import { throwAwayCluster } from '../harness/pg';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const HELD_MS = 2500;

test("a request's lock wait is the requests' and an autovacuum worker's delay the database's own", { timeout: 90_000 }, async () => {
  const cluster = await throwAwayCluster({ parameters: { autovacuum_naptime: '1s', log_autovacuum_min_duration: 0 } });
  const admin = new pg.Client({ connectionString: cluster.url(), application_name: 'test-admin' });
  await admin.connect();
  const clients: pg.Client[] = [admin];
  const file = path.join(cluster.info.dir, 'db-samples.jsonl');
  try {
    await admin.query("CREATE ROLE hardcount_app LOGIN PASSWORD 'x'");
    await admin.query('CREATE TABLE api_keys (id int PRIMARY KEY, last_used_at timestamptz)');
    await admin.query('INSERT INTO api_keys VALUES (1, now())');
    await admin.query('GRANT SELECT, UPDATE ON api_keys TO hardcount_app');
    // An autovacuum pass paced to a crawl: the worker sits in Timeout:VacuumDelay for as long as the test runs.
    await admin.query('CREATE TABLE bloat (id bigint PRIMARY KEY, pad text) WITH (autovacuum_enabled = false)');
    await admin.query("INSERT INTO bloat SELECT g, repeat('x', 200) FROM generate_series(1, 50000) g");
    await admin.query('DELETE FROM bloat WHERE id % 2 = 0');
    await admin.query(`ALTER TABLE bloat SET (autovacuum_enabled = true, autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0,
                       autovacuum_vacuum_cost_delay = 100, autovacuum_vacuum_cost_limit = 1)`);
    let running = false;
    for (const until = Date.now() + 30_000; Date.now() < until && !running; await sleep(100)) {
      running = (await admin.query("SELECT 1 FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND wait_event = 'VacuumDelay'")).rowCount! > 0;
    }
    assert.ok(running, 'the autovacuum worker was seen in its cost delay within 30 s');

    const sampler = await startDbSampler({ url: cluster.url(), file, intervalMs: 100 });
    // The rig's own session at work beside it (a 'rig' row, never a request).
    const rig = new pg.Client({ connectionString: cluster.url(), application_name: 'rig-test-sleeper' });
    await rig.connect();
    clients.push(rig);
    const rigSleep = rig.query('SELECT pg_sleep(3)');
    // The lock: another session holds the key's row; the request's UPDATE waits until it commits.
    const holder = new pg.Client({ connectionString: cluster.url(), application_name: 'test-holder' });
    await holder.connect();
    clients.push(holder);
    await holder.query('BEGIN');
    await holder.query('UPDATE api_keys SET last_used_at = now() WHERE id = 1');
    const request = new pg.Client({ connectionString: cluster.url('postgres', 'hardcount_app', 'x'), application_name: 'hardcount-service' });
    await request.connect();
    clients.push(request);
    const waited = request.query('UPDATE api_keys SET last_used_at = now() WHERE id = 1');
    await sleep(HELD_MS);
    await holder.query('COMMIT');
    await waited;
    await rigSleep;
    await sleep(200);
    const { errors } = await sampler.stop();
    assert.equal(errors, 0);

    const rows = readJsonl<DbSample>(file);
    assert.ok(rows[0].settings, 'the first row carries the settings read back');
    // The truth as the snapshots have it: the autovacuum worker active in VacuumDelay, which a count of
    // every active backend would take for a request's wait.
    assert.ok(rows.some((r) => r.waits.some((w) => w.backend_type === 'autovacuum worker' && w.state === 'active' && w.wait_event === 'VacuumDelay')));
    const db = summarizeDb(rows, rows[0].t, null);
    const events = db.waits.map((w) => w.event);
    assert.equal(db.waits[0]?.event, 'Lock:transactionid', `requests waited on ${JSON.stringify(db.waits)}`);
    for (const other of ['Timeout:VacuumDelay', 'Timeout:PgSleep']) assert.ok(!events.includes(other), `${other} is not a request's wait: ${JSON.stringify(db.waits)}`);
    // The lock wait's backend-samples stand for the time it was held (one request, a snapshot every
    // 100 ms): at least a few snapshots saw it, never more than the snapshots taken.
    const lock = db.waits[0];
    assert.ok(lock.count >= 5 && lock.count <= db.rows, `lock wait in ${lock.count} of ${db.rows} snapshots`);
    assert.equal(db.backend_samples, db.waits.reduce((s, w) => s + w.count, 0));
    // The database's own rows: the worker's delay and the rig's sleep, each under whose it is.
    const own = db.own_work ?? [];
    assert.ok(own.some((w) => w.who === 'autovacuum worker' && w.event === 'Timeout:VacuumDelay' && w.count > 0), JSON.stringify(own));
    assert.ok(own.some((w) => w.who === 'rig' && w.event === 'Timeout:PgSleep'), JSON.stringify(own));
    assert.ok(own.every((w) => w.who !== 'request'));

    // The settings the page lists, as read back at the sampler's start: the named ones whatever their
    // source, and every one not at its default (autovacuum_naptime set for this cluster), but none of
    // the sampler's own connection's (its statement_timeout).
    const back = settingsReadBack([{ id: 'single r1-a1', db } as RepeatModel]).settings_read_back!;
    assert.equal(back.length, 1);
    const named = Object.fromEntries(back[0].named);
    assert.deepEqual(Object.keys(named).sort(), ['data_checksums', 'log_autovacuum_min_duration', 'log_checkpoints', 'log_timezone', 'server_version', 'wal_compression', 'wal_segment_size']);
    assert.equal(named.wal_segment_size, '16MB');
    assert.ok(back[0].changed.some((x) => x.name === 'autovacuum_naptime' && x.value === '1s' && x.source === 'configuration file'), JSON.stringify(back[0].changed));
    assert.ok(!back[0].changed.some((x) => x.name === 'statement_timeout'), 'the sampler\'s own session settings are not the database\'s');
  } finally {
    for (const c of clients) await c.end().catch(() => undefined);
    fs.rmSync(file, { force: true });
  }
});

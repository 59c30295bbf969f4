// A provoked vacuum pass, end to end on a real cluster: a throw-away PostgreSQL 15 with the rig's
// logging (log_autovacuum_min_duration = 0, log_checkpoints = on), its log window opened and the disk
// sampler started as a repeat does; a table's dead rows handed to a slowed autovacuum; the moment the
// pass is seen running (pg_stat_progress_vacuum, independent of the log) taken as the freeze-second.
// The classifier, reading only the log slice and the disk rows, attributes that second to vacuum with
// the pass's own completion line. Bounded: the pass is paced to a few seconds, every wait has a limit.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { startFolderDiskSampler } from '../../lib/evidence/disk-sampler';
import { openFileLogWindow } from '../../lib/evidence/file-log-window';
import { readJsonl } from '../../lib/evidence/jsonl-writer';
import { diskSecondsFromLocal, type LocalDiskRow } from '../../lib/protocol/disk-seconds';
import { logMarkers } from '../../lib/protocol/postgres-log';
import { attributeTails } from '../../lib/protocol/tail-attribution';
import { throwAwayCluster } from '../harness/pg';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a provoked autovacuum pass: the second it ran in is attributed to vacuum, with its completion line', { timeout: 60_000 }, async () => {
  const cluster = await throwAwayCluster({ parameters: { log_autovacuum_min_duration: 0, log_checkpoints: 'on', autovacuum_naptime: '1s' } });
  const c = new pg.Client({ connectionString: cluster.url() });
  await c.connect();
  const diskFile = path.join(cluster.info.dir, 'disk-samples.jsonl');
  try {
    await c.query('CREATE TABLE provoked (id bigint PRIMARY KEY, pad text) WITH (autovacuum_enabled = false)');
    await c.query("INSERT INTO provoked SELECT g, repeat('x', 100) FROM generate_series(1, 100000) g");
    await c.query('DELETE FROM provoked WHERE id % 2 = 0');

    // The repeat's evidence opens here: its log window, its disk sampler, t0.
    const log = openFileLogWindow(cluster.logFile);
    const disk = startFolderDiskSampler([cluster.dataDir, path.join(cluster.dataDir, 'pg_wal')], diskFile);
    const t0 = Date.now();
    // Autovacuum now owes the table a pass; paced (cost delay) so it runs for seconds, not milliseconds.
    await c.query(`ALTER TABLE provoked SET (autovacuum_enabled = true, autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0,
                   autovacuum_vacuum_cost_delay = 20, autovacuum_vacuum_cost_limit = 100)`);

    let seenAt: number | null = null;
    for (const until = Date.now() + 30_000; Date.now() < until && seenAt === null; await sleep(100)) {
      const r = await c.query("SELECT 1 FROM pg_stat_progress_vacuum p JOIN pg_class k ON k.oid = p.relid WHERE k.relname = 'provoked'");
      if (r.rowCount) seenAt = Date.now();
    }
    assert.ok(seenAt !== null, 'the autovacuum pass was seen running within 30 s');
    let slice = '';
    for (const until = Date.now() + 30_000; Date.now() < until; await sleep(200)) {
      slice = await log.read();
      if (/automatic vacuum of table "[^"]*\.provoked"/.test(slice)) break;
    }
    await sleep(1100); // one more disk row past the pass
    await disk.stop();

    const { markers, unplaced } = logMarkers(slice);
    assert.equal(unplaced, 0, `every line's zone was read:\n${slice}`);
    const pass = markers.find((m) => m.kind === 'vacuum' && / public\.provoked /.test(m.detail));
    assert.ok(pass, `the pass's completion line is a marker:\n${slice}`);
    assert.ok(pass.from_ms < pass.to_ms, 'its start is back-computed from elapsed');

    // The freeze-second: the second (from t0) in which the pass was seen running.
    const second = Math.floor((seenAt - t0) / 1000);
    const rows = readJsonl<LocalDiskRow>(diskFile);
    assert.ok(rows.length >= 1, 'the disk sampler wrote rows (or the one row saying why it could not)');
    // The provoked table stands for the one the request path writes (only its passes classify).
    const result = attributeTails({ startedAtMs: t0, freezeSeconds: [second], windows: [], markers, walInit: [], disk: diskSecondsFromLocal(rows), requestTables: ['provoked'] });
    const [item] = result.items;
    assert.equal(item.class, 'vacuum');
    assert.ok(item.markers.some((m) => m.line === pass.line), 'the pass\'s own line stands beside the second');
    assert.deepEqual(result.counts.vacuum, { seconds: 1, windows: 0 });
    // Where the data directory sits on a block device, the second has its disk figures.
    if (rows.some((r) => r.devices)) assert.ok(item.disk, 'the disk row of that second');
    else assert.match(String(rows[0].error), /no disk sampled/);
  } finally {
    await c.end();
    fs.rmSync(diskFile, { force: true });
  }
});

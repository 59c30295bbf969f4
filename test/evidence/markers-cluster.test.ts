// The tail markers on a real cluster whose log_timezone is CET (as initdb leaves a host outside UTC):
// every marker is still placed, through the zone the DB sampler reads back from pg_settings; a pass on
// a table the request path does not write is named beside a freeze-second but does not make it
// "vacuum", while a pass on usage_events does; a pass still running (no completion line) is found from
// the sampler's pg_stat_progress_vacuum snapshots. And the rig's own clusters log in UTC with every
// pass and checkpoint, whatever the host's zone. Bounded: every wait has a limit.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { readSettings, startDbSampler, type DbSample } from '../../lib/evidence/db-sampler';
import { openFileLogWindow } from '../../lib/evidence/file-log-window';
import { readJsonl } from '../../lib/evidence/jsonl-writer';
import { logMarkers } from '../../lib/protocol/postgres-log';
import { attributeTails, progressMarkers } from '../../lib/protocol/tail-attribution';
import { throwAwayCluster } from '../harness/pg';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) if (await check()) return;
  assert.fail(`${what} within ${ms / 1000} s`);
}

test("the rig's cluster logs every pass and checkpoint in UTC; the settings are read back", async () => {
  const cluster = await throwAwayCluster();
  const c = new pg.Client({ connectionString: cluster.url() });
  await c.connect();
  try {
    const s = await readSettings(c);
    assert.equal(s.named.log_timezone, 'UTC');
    assert.equal(s.named.log_checkpoints, 'on');
    assert.equal(s.named.log_autovacuum_min_duration, '0');
    assert.equal(s.named.wal_segment_size, '16MB');
    assert.ok(['on', 'off'].includes(s.named.data_checksums) && s.named.wal_compression !== undefined);
    // Every setting not at its default is listed with its source (the rig's own lines are 'configuration file').
    assert.ok(s.changed.some((x) => x.name === 'log_timezone' && x.value === 'UTC' && x.source === 'configuration file'));
    assert.ok(s.changed.every((x) => x.source !== 'default'));
  } finally {
    await c.end();
  }
});

test('a cluster in CET: markers placed through its zone; only a request-path pass makes a freeze-second vacuum; a running pass from progress snapshots', { timeout: 120_000 }, async () => {
  const cluster = await throwAwayCluster({ parameters: { log_timezone: 'CET', autovacuum_naptime: '1s' } });
  const c = new pg.Client({ connectionString: cluster.url() });
  await c.connect();
  const file = path.join(cluster.info.dir, 'db-samples.jsonl');
  try {
    for (const t of ['usage_events', 'side_table']) {
      await c.query(`CREATE TABLE ${t} (id bigint PRIMARY KEY, pad text) WITH (autovacuum_enabled = false)`);
      await c.query(`INSERT INTO ${t} SELECT g, repeat('x', 200) FROM generate_series(1, 30000) g`);
      await c.query(`DELETE FROM ${t} WHERE id % 2 = 0`);
    }
    const log = openFileLogWindow(cluster.logFile);
    const sampler = await startDbSampler({ url: cluster.url(), file, intervalMs: 100 });
    const t0 = Date.now();

    // 1. A pass still running: a manual VACUUM of usage_events paced to a crawl (it logs nothing), seen
    //    in the progress snapshots, then cancelled before it ends.
    const vac = new pg.Client({ connectionString: cluster.url() });
    await vac.connect();
    await vac.query('SET vacuum_cost_delay = 100');
    await vac.query('SET vacuum_cost_limit = 1');
    const vacPid = (await vac.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const running = vac.query('VACUUM usage_events').catch((e: Error) => e);
    let seenAt = 0;
    await until('the manual VACUUM seen in pg_stat_progress_vacuum', 20_000, async () => {
      seenAt = Date.now();
      return (await c.query('SELECT 1 FROM pg_stat_progress_vacuum WHERE pid = $1', [vacPid])).rowCount! > 0;
    });
    await sleep(1000);
    await c.query('SELECT pg_cancel_backend($1)', [vacPid]);
    assert.match(String(await running), /canceling statement/);
    await vac.end();
    await sleep(2500); // the passes below come later than the running pass's second and its tolerance

    // 2. Autovacuum passes: one on a side table, then one on usage_events; and an immediate checkpoint.
    await c.query('ALTER TABLE side_table SET (autovacuum_enabled = true, autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0)');
    let slice = '';
    await until('the side table\'s autovacuum line', 30_000, async () => /automatic vacuum of table "[^"]*\.side_table"/.test((slice = await log.read())));
    await sleep(2500); // usage_events' pass well apart from the side table's second
    await c.query('ALTER TABLE usage_events SET (autovacuum_enabled = true, autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0)');
    await until('usage_events\' autovacuum line', 30_000, async () => /automatic vacuum of table "[^"]*\.usage_events"/.test((slice = await log.read())));
    const beforeCheckpoint = Date.now();
    await c.query('CHECKPOINT');
    const afterCheckpoint = Date.now();
    await until('the checkpoint line', 10_000, async () => /checkpoint complete/.test((slice = await log.read())));
    await sampler.stop();

    // The log is written in CET: its stamps name no offset.
    assert.match(slice, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} CES?T /m);
    const blind = logMarkers(slice);
    assert.equal(blind.markers.length, 0, 'without the zone, no CET stamp is placed');
    assert.ok(blind.unplaced > 0);
    const rows = readJsonl<DbSample>(file);
    const zone = rows[0].settings?.named.log_timezone;
    assert.equal(zone, 'CET', 'the sampler read the zone back');
    const { markers, unplaced } = logMarkers(slice, { timeZone: zone });
    assert.equal(unplaced, 0);
    const ckpt = markers.find((m) => m.kind === 'checkpoint');
    assert.ok(ckpt && ckpt.to_ms >= beforeCheckpoint - 1000 && ckpt.to_ms <= afterCheckpoint + 1000, `checkpoint placed at ${ckpt && new Date(ckpt.to_ms).toISOString()}, issued ${new Date(beforeCheckpoint).toISOString()}`);
    const side = markers.find((m) => m.kind === 'vacuum' && m.table === 'public.side_table');
    const events = markers.find((m) => m.kind === 'vacuum' && m.table === 'public.usage_events');
    assert.ok(side && events, slice);
    assert.ok(side.to_ms > t0 && side.to_ms < Date.now(), 'the side pass placed within the test');

    const secondOf = (ms: number) => Math.floor((ms - t0) / 1000);
    const classify = (s: number, ms: typeof markers) => attributeTails({ startedAtMs: t0, freezeSeconds: [s], windows: [], markers: ms, walInit: [], disk: [], requestTables: ['usage_events'] }).items[0];
    // The side table's pass is named beside its second but classifies nothing; usage_events' makes it vacuum.
    const sideItem = classify(secondOf(side.to_ms), markers);
    assert.notEqual(sideItem.class, 'vacuum', JSON.stringify(sideItem.markers));
    assert.ok(sideItem.markers.includes(side), 'the side pass is listed beside the second');
    assert.equal(classify(secondOf(events.to_ms), markers).class, 'vacuum');

    // The running pass: no line for it, so from the log alone its second is unexplained; the progress
    // snapshots make it vacuum, with a marker naming the table.
    const second = secondOf(seenAt + 500);
    const progress = progressMarkers(rows, markers);
    const pass = progress.find((m) => m.table === 'usage_events' && m.from_ms <= seenAt + 1000);
    assert.ok(pass, JSON.stringify(progress));
    assert.match(pass.detail, /running \(progress snapshots/);
    assert.notEqual(classify(second, markers).class, 'vacuum', `from the log alone: not vacuum (${JSON.stringify(classify(second, markers).markers)})`);
    assert.equal(classify(second, [...markers, ...progress]).class, 'vacuum');
  } finally {
    await c.end();
    fs.rmSync(file, { force: true });
  }
});

// The DB sampler writes a row per interval, as it is taken, with WAL, checkpointer, wait events,
// vacuum progress and sizes; the host sampler writes vmstat-like rows from /proc; WAL per event is a
// pure function of two pg_stat_wal readings and the reconciled rows.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { readWal, startDbSampler, type DbSample } from '../../lib/evidence/db-sampler';
import { hostDelta, parseMeminfo, parseProcStat, startHostSampler, type HostSample } from '../../lib/evidence/host-sampler';
import { readJsonl } from '../../lib/evidence/jsonl-writer';
import { parseWaldumpStats, perEvent, walBreakdown } from '../../lib/evidence/wal-breakdown';
import { walPerEvent } from '../../lib/evidence/wal-per-event';
import { throwAwayCluster } from '../harness/pg';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-evidence-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('the DB sampler writes rows with WAL numbers that grow with the load, each as it is taken', async () => {
  const cluster = await throwAwayCluster({ parameters: { log_checkpoints: 'on' } });
  const c = new pg.Client({ connectionString: cluster.url() });
  await c.connect();
  await c.query(`CREATE TABLE usage_events (id bigserial PRIMARY KEY, quantity bigint, properties jsonb)`);
  await c.query(`CREATE INDEX usage_events_properties_gin ON usage_events USING gin (properties)`);
  const file = path.join(tmp, 'db.jsonl');
  const sampler = await startDbSampler({ url: cluster.url(), file, intervalMs: 300, countersEveryMs: 0 });
  // the first sample is on disk before anything is summarised
  for (let i = 0; i < 50 && !(fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('\n')); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(fs.readFileSync(file, 'utf8').includes('"wal"'));
  const start = await readWal(c);
  const loader = new pg.Client({ connectionString: cluster.url() });
  await loader.connect();
  await loader.query(`INSERT INTO usage_events (quantity, properties) SELECT g, jsonb_build_object('rig_run', 'x') FROM generate_series(1, 20000) g`);
  // An idle backend publishes its WAL counters up to ~10 s late; one that disconnects publishes them
  // as it goes (see WalCounters).
  await loader.end();
  await new Promise((r) => setTimeout(r, 300));
  const end = await readWal(c);
  await new Promise((r) => setTimeout(r, 400));
  const { samples, errors } = await sampler.stop();
  await c.end();
  assert.equal(errors, 0);
  const rows = readJsonl<DbSample>(file);
  assert.equal(rows.length, samples);
  assert.ok(rows.length >= 3, `only ${rows.length} samples`);
  const first = rows[0];
  const last = rows.at(-1)!;
  for (const k of ['wal_records', 'wal_fpi', 'wal_bytes'] as const) assert.equal(typeof first.wal[k], 'number');
  assert.ok(last.wal.wal_bytes > first.wal.wal_bytes, 'WAL bytes grew');
  assert.ok(last.wal.wal_records - first.wal.wal_records >= 20000, 'at least one WAL record per row');
  assert.ok('checkpoints_timed' in last.checkpointer! && 'buffers_alloc' in last.bgwriter!);
  assert.ok(last.sizes!.table > 0 && last.sizes!.indexes.usage_events_pkey > 0 && last.sizes!.indexes.usage_events_properties_gin > 0);
  assert.ok(last.sizes!.total >= last.sizes!.table);
  assert.equal(last.tableStats!.n_tup_ins, 20000);
  assert.ok(Array.isArray(last.waits) && Array.isArray(last.vacuum));
  assert.deepEqual(rows.map((r) => r.seq), rows.map((_, i) => i));
  // per event: heap insert + pkey + GIN entries, a few records and ~100+ bytes each
  const per = walPerEvent(start, end, 20000);
  assert.ok(per.recordsPerEvent >= 2 && per.recordsPerEvent < 10, `records/event ${per.recordsPerEvent}`);
  assert.ok(per.bytesPerEvent > 50 && per.bytesPerEvent < 2000, `bytes/event ${per.bytesPerEvent}`);
  // the insert-position LSN tells the same bytes without the statistics' lag
  assert.ok(per.lsnBytesPerEvent !== undefined && Math.abs(per.lsnBytesPerEvent - per.bytesPerEvent) / per.bytesPerEvent < 0.2, `lsn ${per.lsnBytesPerEvent} vs ${per.bytesPerEvent}`);
});

test('walPerEvent divides the repeat\'s WAL by its reconciled rows, and refuses nonsense', () => {
  const s = { wal_records: 1000, wal_fpi: 10, wal_bytes: 100_000 };
  const e = { wal_records: 8700, wal_fpi: 60, wal_bytes: 1_300_000 };
  assert.deepEqual(walPerEvent(s, e, 1000), {
    events: 1000,
    walRecords: 7700,
    walFpi: 50,
    walBytes: 1_200_000,
    recordsPerEvent: 7.7,
    fpiPerEvent: 0.05,
    bytesPerEvent: 1200,
  });
  assert.throws(() => walPerEvent(s, e, 0), /events must be a positive integer/);
  assert.throws(() => walPerEvent(e, s, 10), /reset in between/);
});

test('the host sampler writes vmstat-like rows from /proc', async () => {
  const file = path.join(tmp, 'host.jsonl');
  const sampler = startHostSampler({ file, intervalMs: 250 });
  await new Promise((r) => setTimeout(r, 900));
  const { samples } = await sampler.stop();
  const rows = readJsonl<HostSample>(file);
  assert.equal(rows.length, samples);
  assert.ok(rows.length >= 2);
  for (const r of rows) {
    const sum = r.cpu.us + r.cpu.sy + r.cpu.id + r.cpu.wa + r.cpu.st;
    assert.ok(sum > 95 && sum <= 100.5, `cpu split sums to ${sum}`);
    assert.ok(r.memKb.total > 0 && r.memKb.available > 0);
    assert.ok(r.intervalMs > 0);
  }
});

test('hostDelta computes the CPU split and rates between two readings', () => {
  const a = { at: 0, stat: parseProcStat('cpu  100 0 50 800 50 0 0 0 0 0\nctxt 1000\nintr 500\nprocs_running 1\nprocs_blocked 0\n'), vm: { pgpgin: 0, pgpgout: 0 } };
  const b = { at: 2000, stat: parseProcStat('cpu  160 0 70 900 70 0 0 0 0 0\nctxt 3000\nintr 900\nprocs_running 3\nprocs_blocked 1\n'), vm: { pgpgin: 100, pgpgout: 400 } };
  const mem = parseMeminfo('MemTotal:       24000000 kB\nMemFree:        1000 kB\nMemAvailable:   2000 kB\nDirty:          12 kB\n');
  const s = hostDelta(a, b, mem, [1, 2, 3], 1);
  assert.deepEqual(s.cpu, { us: 30, sy: 10, id: 50, wa: 10, st: 0 });
  assert.deepEqual(s.procs, { running: 3, blocked: 1 });
  assert.equal(s.rates.ctxt, 1000);
  assert.equal(s.rates.pgpgoutKb, 200);
  assert.equal(s.memKb.total, 24000000);
  assert.equal(s.memKb.dirty, 12);
});

test('pg_waldump --stats=record output is read into record types with counts', () => {
  const text = [
    'WAL statistics between 0/1733450 and 0/34BF4F8:',
    'Type                                           N      (%)          Record size      (%)             FPI size      (%)        Combined size      (%)',
    '----                                           -      ---          -----------      ---             --------      ---        -------------      ---',
    'XLOG/CHECKPOINT_SHUTDOWN                       0 (  0.00)                    0 (  0.00)                    0 (  0.00)                    0 (  0.00)',
    'Heap/INSERT                                32659 ( 14.66)              7544229 ( 24.54)                    0 (  0.00)              7544229 ( 24.54)',
    'Heap/HEAP_CONFIRM                          198000 ( 13.64)              9504000 (  6.15)                  100 (  0.00)              9504100 (  6.15)',
    'Btree/INSERT_LEAF                         132347 ( 59.43)             11637100 ( 37.86)                    0 (  0.00)             11637100 ( 37.86)',
    '                                        --------                      --------                      --------                      --------',
    'Total                                     363006                      28685329 [99.99%]                  100 [0.01%]             28685429 [100%]',
  ].join('\n');
  const b = parseWaldumpStats(text, '0/1', '0/2');
  assert.deepEqual(b.total, { count: 363006, bytes: 28685429 });
  assert.deepEqual(b.records.map((r) => r.type), ['Heap/HEAP_CONFIRM', 'Btree/INSERT_LEAF', 'Heap/INSERT']);
  assert.equal(b.records[0].bytes, 9504100);
  const pe = perEvent(b, 33000, 1);
  assert.deepEqual(pe.map((x) => x.type), ['Heap/HEAP_CONFIRM', 'Btree/INSERT_LEAF', 'other']);
});

test('walBreakdown reads a real cluster\'s WAL between two LSNs', async () => {
  const cluster = await throwAwayCluster();
  const c = new pg.Client({ connectionString: cluster.url() });
  await c.connect();
  await c.query('CREATE TABLE t (id bigserial PRIMARY KEY, q bigint)');
  const a = (await c.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0].l;
  await c.query('INSERT INTO t (q) SELECT g FROM generate_series(1, 1000) g');
  const b = (await c.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0].l;
  await c.end();
  const w = await walBreakdown(cluster.info.dir, a, b);
  const insert = w.records.filter((r) => r.type.startsWith('Heap/INSERT')).reduce((s, r) => s + r.count, 0);
  const leaf = w.records.find((r) => r.type === 'Btree/INSERT_LEAF')?.count ?? 0;
  assert.equal(insert, 1000);
  assert.ok(leaf >= 990 && leaf <= 1000, `btree leaf inserts ${leaf}`);
});

// The slowed builds finer than 1 ms (issue 45), each against its off side on a real database, through
// the real service (reference/main.ts in its own process where its CPU is counted):
// - HC_EXTRA_WAL_BYTES: exactly one WAL record of exactly that size per event written, counted with
//   PostgreSQL's own pg_walinspect; none for a replay, none with the switch off;
// - HC_ADDED_CPU_US: the service process spends the CPU (its own /proc counters), the off one does not;
// - HC_ADDED_WAIT_US: a waiting request holds neither the event loop (/healthz, sent after it, answers
//   first) nor the CPU;
// - /healthz names each switch that is on, and none that is off;
// - the calibration (lib/targets/local/switch-calibration.ts) measures each one's effect beside its off
//   side. Effects are made large and only their direction is asserted: timing never decides here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { before, test } from 'node:test';
import pg from 'pg';
import { createFixtures, type Fixtures } from '../../lib/targets/bringup/fixtures';
import { calibrateSwitch, spawnReference, type ReferenceProcess } from '../../lib/targets/local/switch-calibration';
import { startService, type RunningService } from '../../reference/service';
import { hardcountDb, type HardcountDb } from '../harness/hardcount';
import { api, ev } from './api-client';

const dbReady = hardcountDb();
let db: HardcountDb;
let su: pg.Client;
let fx: Fixtures;

before(async () => {
  db = await dbReady;
  su = new pg.Client({ connectionString: db.superUrl });
  await su.connect();
  db.defer(() => su.end());
  await su.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  fx = await createFixtures(db.ownerUrl, { tenantName: 'slowed-builds', customers: 2 });
});

async function spawned(env: Record<string, string>): Promise<ReferenceProcess> {
  const svc = await spawnReference(db.appUrl, env);
  db.defer(() => svc.stop());
  return svc;
}

/** The process's CPU time (user + system), ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

// The flushed end of WAL: a request's records all precede its commit, which is flushed before it answers
// (and pg_walinspect reads no further than what is flushed).
const lsn = async () => (await su.query<{ l: string }>('SELECT pg_current_wal_flush_lsn()::text AS l')).rows[0].l;

/** The LogicalMessage records written between two flushed LSNs: their lengths. */
async function messages(from: string, to: string): Promise<number[]> {
  if (from === to) return [];
  const r = await su.query<{ record_length: number }>(
    `SELECT record_length FROM pg_get_wal_records_info($1, $2) WHERE resource_manager = 'LogicalMessage' ORDER BY start_lsn`,
    [from, to],
  );
  return r.rows.map((x) => x.record_length);
}

test('HC_EXTRA_WAL_BYTES: one WAL record of exactly that many bytes per event written (pg_walinspect); none for a replay, none when off', async (t) => {
  const opened: RunningService[] = [];
  t.after(() => Promise.all(opened.map((s) => s.close())));
  const key = fx.apiKey.reveal();
  const cases: Array<[number, 'per-event' | 'multi-row']> = [
    [200, 'per-event'],
    [63, 'multi-row'],
    [281, 'per-event'],
    [285, 'multi-row'],
    [4000, 'per-event'],
  ];
  for (const [bytes, insert] of cases) {
    // Closed at the end of its case: the calibration below counts the service's sessions on this database.
    const svc = await startService({ databaseUrl: db.appUrl, extraWalBytes: bytes, insert });
    opened.push(svc);
    const c = api(svc.url, key);
    const h = await c.get<{ settings: Record<string, string> }>('/healthz');
    assert.equal(h.body.settings.extraWalBytes, String(bytes));
    const batch = [ev('cus_0001', 1, `wal-${bytes}-a`), ev('cus_0002', 2, `wal-${bytes}-b`), ev('cus_0001', 3, `wal-${bytes}-c`), ev('cus_0001', 4, `wal-${bytes}-a`)];
    const a = await lsn();
    const res = await c.post<{ created: number }>('/v1/usage-events', { events: batch });
    const b = await lsn();
    assert.equal(res.status, 201);
    assert.equal(res.body.created, 3, 'the repeated key inside the batch is not written');
    assert.deepEqual(await messages(a, b), [bytes, bytes, bytes], `${bytes} B, ${insert}: a record per event written, of exactly that size`);
    // A replay writes no event, so no extra WAL.
    const c2 = await lsn();
    const replay = await c.post<{ created: number }>('/v1/usage-events', { events: batch.slice(0, 2) });
    assert.equal(replay.body.created, 0);
    assert.deepEqual(await messages(c2, await lsn()), []);
  }
  // Off (the default), the service writes no message at all, and /healthz does not mention the switch.
  const off = await startService({ databaseUrl: db.appUrl });
  opened.push(off);
  const c = api(off.url, key);
  assert.equal((await c.get<{ settings: Record<string, string> }>('/healthz')).body.settings.extraWalBytes, undefined);
  const a = await lsn();
  assert.equal((await c.post('/v1/usage-events', { events: [ev('cus_0001', 1, 'wal-off-a'), ev('cus_0002', 1, 'wal-off-b')] })).status, 201);
  assert.deepEqual(await messages(a, await lsn()), []);
});

test('HC_ADDED_CPU_US: the service process spends the CPU per data request, the same service without it does not; /healthz reports it', async () => {
  const key = fx.apiKey.reveal();
  const N = 5000; // µs a request: 60 requests are 300 ms of CPU, 30 ticks of /proc's 10-ms clock
  const REQUESTS = 60;
  const off = await spawned({});
  const on = await spawned({ HC_ADDED_CPU_US: String(N), HC_BUILD: 'cpu-slowed' });
  const h = await api(on.url).get<{ settings: Record<string, string>; build: string }>('/healthz');
  assert.deepEqual([h.body.settings.addedCpuUs, h.body.settings.addedWaitUs, h.body.build], [String(N), undefined, 'cpu-slowed']);
  assert.equal((await api(off.url).get<{ settings: Record<string, string> }>('/healthz')).body.settings.addedCpuUs, undefined);
  const spent = async (svc: ReferenceProcess) => {
    const c = api(svc.url, key);
    for (let i = 0; i < 10; i++) await c.get('/v1/customers?limit=1'); // warm
    const before = cpuMs(svc.pid);
    for (let i = 0; i < REQUESTS; i++) assert.equal((await c.get('/v1/customers?limit=1')).status, 200);
    return cpuMs(svc.pid) - before;
  };
  const offMs = await spent(off);
  const onMs = await spent(on);
  // CPU time, not wall time: the work is the same however busy the host is. Half of it as the margin.
  assert.ok(onMs - offMs >= (REQUESTS * N) / 1000 / 2, `on ${onMs} ms of CPU, off ${offMs} ms, for ${REQUESTS} requests of ${N} µs more each`);
});

test('HC_ADDED_WAIT_US: a waiting request holds neither the event loop nor the CPU; /healthz reports it', async () => {
  const key = fx.apiKey.reveal();
  const N = 3_000_000; // 3 s, so that the order below cannot come from a starved host's stalls
  const svc = await spawned({ HC_ADDED_WAIT_US: String(N) });
  const h = await api(svc.url).get<{ settings: Record<string, string> }>('/healthz');
  assert.deepEqual([h.body.settings.addedWaitUs, h.body.settings.addedCpuUs], [String(N), undefined]);
  const done: string[] = [];
  const cpu0 = cpuMs(svc.pid);
  const waiting = api(svc.url, key).get('/v1/customers?limit=1').then((r) => done.push(`data ${r.status}`));
  await new Promise((r) => setTimeout(r, 100));
  const health = await api(svc.url).get('/healthz');
  done.push(`healthz ${health.status}`);
  await waiting;
  const cpu = cpuMs(svc.pid) - cpu0;
  assert.deepEqual(done, ['healthz 200', 'data 200'], 'the event loop answered /healthz while the data request waited');
  // A busy wait of 3 s would be ~3000 ms of CPU; a request and a /healthz are a few ms.
  assert.ok(cpu < 500, `the service spent ${cpu} ms of CPU during a 3-s wait`);
});

test('calibrateSwitch: each switch raises what it says against its off side, measured side by side; the WAL switch by pg_stat_wal too', async () => {
  const dbs = { appUrl: db.appUrl, ownerUrl: db.ownerUrl, monitorUrl: db.superUrl };
  const small = { blocks: 4, perBlock: 25, warmup: 10, walBlocks: 2, walEventsPerBlock: 40 };
  const cpu = await calibrateSwitch(dbs, 'HC_ADDED_CPU_US', 20_000, small);
  const wait = await calibrateSwitch(dbs, 'HC_ADDED_WAIT_US', 20_000, small);
  const wal = await calibrateSwitch(dbs, 'HC_EXTRA_WAL_BYTES', 8000, small);
  for (const r of [cpu, wait, wal]) {
    assert.equal(r.requests, 2 * 4 * 25);
    assert.equal(r.blocks, 4);
  }
  // 20 ms a request, five times the off side's whole median: the direction of the CPU and wait switches
  // cannot be noise. Not the WAL switch's service time: 8 KB more WAL a commit costs tens of µs, which a
  // busy host's scheduling hides (-76 µs beside the full suite); its WAL bytes below are what it is judged on.
  for (const r of [cpu, wait]) assert.ok(r.addedMedianUs > 0, `${r.switch}=${r.setting}: added ${r.addedMedianUs} µs at the median (off ${r.offMedianUs}, on ${r.onMedianUs})`);
  assert.deepEqual([cpu.intendedUs, wait.intendedUs, wal.intendedUs], [20_000, 20_000, null]);
  assert.deepEqual([cpu.request, wal.request], ['GET /v1/customers?limit=1', 'POST /v1/usage-events (1 event)']);
  assert.deepEqual([cpu.reported.addedCpuUs, wait.reported.addedWaitUs, wal.reported.extraWalBytes], ['20000', '20000', '8000']);
  assert.equal(cpu.wal, undefined);
  assert.ok(wal.wal);
  assert.equal(wal.wal.events, 2 * 2 * 40, 'every event of every WAL block was written and counted');
  // 8000 B a record against ~1.2 KB of an event's own WAL: the direction cannot be noise.
  assert.ok(wal.wal.onBytesPerEvent > wal.wal.offBytesPerEvent && wal.wal.added.estimate > 0, JSON.stringify(wal.wal));
});

// `npm run bench:target`: on one local cluster, in one run:
//   - the closed-loop ceiling at batch 500 for each insert mode of the reference service (per-event,
//     multi-row), beside the three pgbench legs (owner one-row, RLS one-row, multi-row) and the ratios;
//   - WAL bytes and records per event for each insert mode (and each pgbench leg);
//   - seeding rows/s beside `psql \copy` of the same rows.
// The closed loop is lib/loadgen's runLoad (mode 'closed'). The table goes to docs/benchmarks.md under
// "## bench:target" (only that section is rewritten); the raw results, the DB and host sampler files
// and the Postgres log are kept under <state>/results/bench-target/<time>/.
//
// Knobs (environment): BENCH_SECONDS (ceiling and pgbench leg length, default 30), BENCH_WORKERS
// (closed-loop workers and pgbench clients, default 16), BENCH_SEED_ROWS (seed comparison, default
// 400000), BENCH_HISTORY_ROWS (history before the ceilings, default 1000000), BENCH_KEEP=1 (leave the rig up).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { onDatabase, pgConfig } from '../lib/pg/connection';
import { startDbSampler } from '../lib/evidence/db-sampler';
import { readWal } from '../lib/evidence/db-sampler';
import { startHostSampler } from '../lib/evidence/host-sampler';
import { perEvent, walBreakdown, type WalBreakdown } from '../lib/evidence/wal-breakdown';
import { WAL_STATS_LAG_MS, walPerEvent, type WalCounters, type WalPerEvent } from '../lib/evidence/wal-per-event';
import { runLoad } from '../lib/loadgen/run-load';
import { createFixtures } from '../lib/targets/bringup/fixtures';
import { denominator, localPgbenchRunner, type LegResult } from '../lib/targets/denominator';
import type { LegName } from '../lib/targets/pgbench-script';
import { detectFixtures } from '../lib/targets/fixtures-scope';
import { rigDbUrls } from '../lib/targets/local/connection';
import { PgCluster } from '../lib/targets/local/pg-cluster';
import { provisionLocal, restartServiceLocal } from '../lib/targets/local/provision';
import { storeApiKey } from '../lib/targets/local/secrets';
import { teardownLocal } from '../lib/targets/local/teardown';
import { reconcile } from '../lib/targets/reconcile';
import { seed } from '../lib/targets/seed';
import { SEED_COLUMNS, seedRows } from '../lib/targets/seed-rows';
import type { RigParameters } from '../lib/targets/target';
import { projectRoot, resultsDir } from '../lib/tools/paths';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 16);
const SEED_ROWS = Number(process.env.BENCH_SEED_ROWS ?? 400_000);
const HISTORY_ROWS = Number(process.env.BENCH_HISTORY_ROWS ?? 1_000_000);
const BATCH = 500;
const PASSES = Number(process.env.BENCH_PASSES ?? 2);

const log = (m: string) => console.error(`[bench:target] ${m}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (a: number, b: number) => `${Math.round((100 * a) / b)} %`;

const PARAMS: RigParameters = {
  db: {
    shared_buffers: '2GB',
    // the WAL pool sized, so checkpoints do not dominate a 30-s leg
    min_wal_size: '2GB',
    max_wal_size: '8GB',
    autovacuum_vacuum_insert_scale_factor: 0.02,
    wal_compression: 'lz4',
  },
};

interface CeilingResult {
  mode: 'per-event' | 'multi-row';
  pass: number;
  runTag: string;
  seconds: number;
  requestsOk: number;
  failed: number;
  eventsOk: number;
  reconciledRows: number;
  eventsPerSec: number;
  p50ms: number | null;
  p99ms: number | null;
  wal: WalPerEvent;
  breakdown: WalBreakdown;
}

type LegRun = LegResult & { pass: number; wal: WalPerEvent; breakdown: WalBreakdown };

const lsnNow = (url: string) => su(url, async (c) => (await c.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0].l);

async function su<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(pgConfig(url));
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** WAL counters once every backend has published its share (see WAL_STATS_LAG_MS). */
async function walAfterQuiet(url: string): Promise<WalCounters> {
  await sleep(WAL_STATS_LAG_MS);
  return su(url, readWal);
}

async function main(): Promise<void> {
  const campaign = `bench-target-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const outDir = path.join(resultsDir(), 'bench-target', campaign);
  fs.mkdirSync(outDir, { recursive: true });
  log(`campaign ${campaign}; evidence in ${outDir}`);
  const startedAt = new Date();
  const loadAtStart = os.loadavg()[0];
  try {
    const rig = await provisionLocal(campaign, PARAMS, log);
    const urls = rigDbUrls(campaign);
    const fixtures = await createFixtures(urls.ownerUrl, { livemode: true });
    storeApiKey(campaign, fixtures.apiKey.reveal());
    const cluster = PgCluster.attach(urls.clusterDir);
    const pgVersion = await su(urls.superuserUrl, async (c) => (await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v);

    // 1. Seeding vs psql \copy of the same rows, alternating, each into an emptied table after a checkpoint.
    const scope = await detectFixtures(urls.ownerUrl);
    const copyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-bench-copy-'));
    fs.chmodSync(copyDir, 0o755);
    const copyFile = path.join(copyDir, 'rows.tsv');
    const fd = fs.openSync(copyFile, 'w', 0o644);
    for (const chunk of seedRows({ scope, rows: SEED_ROWS, tag: 'psql-copy', days: 30, end: new Date() })) fs.writeSync(fd, chunk.text);
    fs.closeSync(fd);
    const reset = async () => {
      await su(urls.ownerUrl, (c) => c.query('TRUNCATE usage_events'));
      await su(onDatabase(urls.superuserUrl, 'hardcount'), (c) => c.query('CHECKPOINT'));
    };
    const seedRates: number[] = [];
    const copyRates: number[] = [];
    const ownerPw = decodeURIComponent(new URL(urls.ownerUrl).password);
    for (let round = 0; round < 3; round++) {
      await reset();
      const s = await seed({ ownerUrl: urls.ownerUrl, rows: SEED_ROWS, settle: false, tag: `bench-seed-${round}` });
      seedRates.push(s.rowsPerSec);
      log(`seed round ${round}: ${fmt(s.rowsPerSec)} rows/s`);
      await reset();
      const t0 = process.hrtime.bigint();
      await cluster.exec(
        'psql',
        ['-X', '-v', 'ON_ERROR_STOP=1', '-h', rig.db.host, '-p', String(rig.db.port), '-U', rig.db.ownerRole, '-d', rig.db.database, '-c', `\\copy usage_events (${SEED_COLUMNS.join(', ')}) from '${copyFile}'`],
        { env: { ...process.env, HOME: os.tmpdir(), LC_ALL: 'C', PGPASSWORD: ownerPw, PGOPTIONS: '-c app.livemode=true' } },
      );
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const copied = (await reconcile(urls.ownerUrl, { runTag: 'psql-copy', livemode: true, property: 'rig_seed' })).rows;
      if (copied !== SEED_ROWS) throw new Error(`psql \\copy wrote ${copied} rows, not ${SEED_ROWS}`);
      copyRates.push(SEED_ROWS / secs);
      log(`psql \\copy round ${round}: ${fmt(SEED_ROWS / secs)} rows/s`);
    }
    fs.rmSync(copyDir, { recursive: true, force: true });
    await reset();

    // 2. History, settled, so the ceilings run on a table with some depth and autovacuum idle.
    log(`seeding ${fmt(HISTORY_ROWS)} rows of history`);
    const history = await seed({ ownerUrl: urls.ownerUrl, rows: HISTORY_ROWS, settle: { timeoutMs: 15 * 60_000 } });
    log(`history: ${fmt(history.rowsPerSec)} rows/s, settled in ${history.settle?.seconds.toFixed(0)} s`);

    // Evidence for the measured phases.
    const dbSampler = await startDbSampler({ url: onDatabase(urls.superuserUrl, 'hardcount'), file: path.join(outDir, 'db-sampler.jsonl') });
    const hostSampler = startHostSampler({ file: path.join(outDir, 'host-sampler.jsonl') });

    // 3 + 4. The closed-loop ceilings (batch 500, one per insert mode, hot row fixed: last_used per
    // minute) and the three pgbench legs, in PASSES passes, forward then reversed, so that a machine
    // whose background load drifts during the run does not favour whichever phase ran first.
    const ceilings: CeilingResult[] = [];
    const legs: LegRun[] = [];
    const runCeiling = async (mode: CeilingResult['mode'], pass: number): Promise<void> => {
      const svc = await restartServiceLocal(campaign, { insert: mode, lastUsed: 'per-minute', poolSize: 20 }, log);
      const runTag = `ceiling-${mode}-p${pass}-${Date.now()}`;
      const start = await walAfterQuiet(urls.superuserUrl);
      const startLsn = await lsnNow(urls.superuserUrl);
      log(`pass ${pass}: closed loop ${mode}: ${WORKERS} workers, batch ${BATCH}, ${SECONDS} s`);
      const load = await runLoad({
        url: svc.serviceUrl,
        apiKey: fixtures.apiKey.reveal(),
        mode: 'closed',
        workers: WORKERS,
        batch: BATCH,
        seconds: SECONDS,
        runTag,
        out: path.join(outDir, `ceiling-${mode}-p${pass}.csv.gz`),
      });
      const end = await walAfterQuiet(urls.superuserUrl);
      const breakdown = await walBreakdown(urls.clusterDir, startLsn, await lsnNow(urls.superuserUrl));
      const rec = await reconcile(urls.ownerUrl, { runTag, livemode: true });
      const s = load.summary;
      if (rec.rows !== s.events_ok || rec.quantity !== s.quantity_ok || rec.otherModeRows !== 0) {
        throw new Error(`ceiling ${mode} does not reconcile: ${s.events_ok} events / Σ${s.quantity_ok} answered 2xx, ${rec.rows} rows / Σ${rec.quantity} in the partition (${rec.otherModeRows} in the other)`);
      }
      const c: CeilingResult = {
        mode,
        pass,
        runTag,
        seconds: s.elapsed_s,
        requestsOk: s.ok,
        failed: s.failed,
        eventsOk: s.events_ok,
        reconciledRows: rec.rows,
        eventsPerSec: rec.rows / s.elapsed_s,
        p50ms: s.latency_p50_ms,
        p99ms: s.latency_p99_ms,
        wal: walPerEvent(start, end, rec.rows),
        breakdown,
      };
      ceilings.push(c);
      log(`pass ${pass}: closed loop ${mode}: ${fmt(c.eventsPerSec)} ev/s, ${c.wal.recordsPerEvent.toFixed(2)} WAL records/event, ${fmt(c.wal.bytesPerEvent)} B/event`);
    };
    const runLeg = async (leg: LegName, pass: number): Promise<void> => {
      // Read once the leg is settled (its VACUUM and CHECKPOINT are not the leg's WAL).
      let start: WalCounters | undefined;
      let startLsn = '';
      const d = await denominator({
        checkpointUrl: urls.superuserUrl,
        beforeLeg: async () => {
          start = await su(urls.superuserUrl, readWal);
          startLsn = await lsnNow(urls.superuserUrl);
        },
        ownerUrl: urls.ownerUrl,
        appUrl: urls.appUrl,
        runner: localPgbenchRunner(urls.clusterDir),
        clients: WORKERS,
        seconds: SECONDS,
        batch: BATCH,
        livemode: true,
        legs: [leg],
        tag: `pgb-p${pass}-${Date.now()}`,
        onProgress: (m) => log(`pass ${pass}: ${m}`),
      });
      // pgbench's sessions have exited, and a backend publishes its WAL counters as it exits
      await sleep(1500);
      const end = await su(urls.superuserUrl, readWal);
      const breakdown = await walBreakdown(urls.clusterDir, startLsn, await lsnNow(urls.superuserUrl));
      legs.push({ ...d.legs[0], pass, wal: walPerEvent(start!, end, d.legs[0].countedRows), breakdown });
    };
    const phases: Array<(pass: number) => Promise<void>> = [
      (p) => runCeiling('per-event', p),
      (p) => runCeiling('multi-row', p),
      (p) => runLeg('owner-1row', p),
      (p) => runLeg('rls-1row', p),
      (p) => runLeg('owner-multirow', p),
    ];
    for (let pass = 1; pass <= PASSES; pass++) {
      for (const phase of pass % 2 === 1 ? phases : [...phases].reverse()) await phase(pass);
    }
    const dbStats = await dbSampler.stop();
    const hostStats = await hostSampler.stop();

    const result = {
      campaign,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memGiB: Math.round(os.totalmem() / 2 ** 30), loadavg1: { start: loadAtStart, end: os.loadavg()[0] } },
      postgres: pgVersion,
      params: PARAMS,
      knobs: { seconds: SECONDS, workers: WORKERS, batch: BATCH, passes: PASSES, seedRows: SEED_ROWS, historyRows: HISTORY_ROWS },
      seeding: { seedRowsPerSec: seedRates, psqlCopyRowsPerSec: copyRates, history: { rows: history.rows, rowsPerSec: history.rowsPerSec, settleSeconds: history.settle?.seconds } },
      ceilings,
      legs,
      samplers: { db: dbStats, host: hostStats },
    };
    fs.writeFileSync(path.join(outDir, 'result.json'), JSON.stringify(result, null, 2));
    fs.copyFileSync(rig.files.postgresLog, path.join(outDir, 'postgres.log'));
    const table = render(result);
    console.log(table);
    writeSection(table);
    log(`wrote docs/benchmarks.md (## bench:target) and ${path.join(outDir, 'result.json')}`);
  } finally {
    if (process.env.BENCH_KEEP === '1') log(`BENCH_KEEP=1: rig ${campaign} left up; rig check will list it`);
    else {
      await teardownLocal(campaign, log);
      log('rig torn down');
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Row {
  label: string;
  values: number[];
  mean: number;
  detail: string;
  records: number;
  bytes: number;
  fpi: number;
  breakdown: WalBreakdown[];
  rows: number[];
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function row(label: string, runs: Array<{ rate: number; detail: string; wal: WalPerEvent; breakdown: WalBreakdown; rows: number }>): Row {
  return {
    label,
    values: runs.map((r) => r.rate),
    mean: mean(runs.map((r) => r.rate)),
    detail: runs.map((r) => r.detail).join('; '),
    records: mean(runs.map((r) => r.wal.recordsPerEvent)),
    bytes: mean(runs.map((r) => r.wal.bytesPerEvent)),
    fpi: mean(runs.map((r) => r.wal.fpiPerEvent)),
    breakdown: runs.map((r) => r.breakdown),
    rows: runs.map((r) => r.rows),
  };
}

/** Records per row by type over all passes of a phase. */
function mergedPerEvent(r: Row): string {
  const counts = new Map<string, number>();
  for (const b of r.breakdown) for (const x of b.records) counts.set(x.type, (counts.get(x.type) ?? 0) + x.count);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const rows = r.rows.reduce((a, b) => a + b, 0);
  const merged: WalBreakdown = { startLsn: '', endLsn: '', total: { count: total, bytes: 0 }, records: [...counts].map(([type, count]) => ({ type, count, bytes: 0 })).sort((a, b) => b.count - a.count) };
  return `${(total / rows).toFixed(2)} | ${perEvent(merged, rows).map((x) => `${x.type} ${x.perEvent.toFixed(2)}`).join(', ')}`;
}

function render(r: {
  startedAt: string;
  machine: { cpus: number; cpuModel?: string; memGiB: number; loadavg1: { start: number; end: number } };
  postgres: string;
  params: RigParameters;
  knobs: { seconds: number; workers: number; batch: number; passes: number; seedRows: number; historyRows: number };
  seeding: { seedRowsPerSec: number[]; psqlCopyRowsPerSec: number[] };
  ceilings: CeilingResult[];
  legs: LegRun[];
}): string {
  const ceilingRow = (mode: CeilingResult['mode']) =>
    row(
      `closed loop, insert=${mode} (service)`,
      r.ceilings
        .filter((c) => c.mode === mode)
        .map((c) => ({ rate: c.eventsPerSec, detail: `${c.p50ms ?? '?'} / ${c.p99ms ?? '?'} ms`, wal: c.wal, breakdown: c.breakdown, rows: c.reconciledRows })),
    );
  const legRow = (leg: LegName) => {
    const runs = r.legs.filter((l) => l.leg === leg);
    return row(
      `pgbench ${leg} (${runs[0].role}, -M ${runs[0].protocol})`,
      runs.map((l) => ({ rate: l.rowsPerSec, detail: `${l.tps.toFixed(1)} tps, ${l.latencyAvgMs} ms`, wal: l.wal, breakdown: l.breakdown, rows: l.countedRows })),
    );
  };
  const perEv = ceilingRow('per-event');
  const multiMode = ceilingRow('multi-row');
  const one = legRow('owner-1row');
  const rls = legRow('rls-1row');
  const multi = legRow('owner-multirow');
  const lines: string[] = [];
  lines.push(
    `Run ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC by \`npm run bench:target\`: ${r.machine.cpus} cores (${r.machine.cpuModel ?? '?'}), ${r.machine.memGiB} GiB, ` +
      `PostgreSQL ${r.postgres}, everything on one machine (service, database, load generator, pgbench). ` +
      `Settings: ${Object.entries(r.params.db ?? {}).map(([k, v]) => `${k}=${String(v)}`).join(', ')}. ` +
      `${r.knobs.workers} closed-loop workers / pgbench clients, batch ${r.knobs.batch}, ${r.knobs.seconds} s each, on a table seeded with ${fmt(r.knobs.historyRows)} rows; ` +
      `${r.knobs.passes} passes over the five phases (forward, then reversed); rows/s is the mean of the passes, each pass in brackets, and the ratios are of the means. ` +
      'Every phase reconciled exactly (rows and Σ quantity by run tag, in the live partition). ' +
      `The machine is shared (1-min load average ${r.machine.loadavg1.start.toFixed(1)} at the start, ${r.machine.loadavg1.end.toFixed(1)} at the end): ` +
      'absolute rates move between runs by tens of percent; read the ratios within one run.',
    '',
    '| what | rows/s (passes) | vs one-row leg | vs RLS leg | vs multi-row leg | p50 / p99, or tps + latency avg | WAL records/row | WAL B/row | FPI/row |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|',
  );
  const all = [perEv, multiMode, one, rls, multi];
  for (const x of all) {
    lines.push(
      `| ${x.label} | ${fmt(x.mean)} (${x.values.map(fmt).join(', ')}) | ${pct(x.mean, one.mean)} | ${pct(x.mean, rls.mean)} | ${pct(x.mean, multi.mean)} | ${x.detail} | ${x.records.toFixed(2)} | ${fmt(x.bytes)} | ${x.fpi.toFixed(3)} |`,
    );
  }
  lines.push(
    '',
    'WAL records per row by type (pg_waldump --stats=record over each phase, all passes; types under 0.02 per row summed as other):',
    '',
    '| phase | records/row | by type |',
    '|---|---:|---|',
    ...all.map((x) => `| ${x.label} | ${mergedPerEvent(x)} |`),
  );
  const s = median(r.seeding.seedRowsPerSec);
  const p = median(r.seeding.psqlCopyRowsPerSec);
  lines.push(
    '',
    '| seeding (COPY into the five-index table, emptied + CHECKPOINT before each) | rows/s per round | median vs psql \\copy |',
    '|---|---|---:|',
    `| \`rig seed\` (pg-copy-streams, rows generated on the fly) | ${r.seeding.seedRowsPerSec.map(fmt).join(', ')} | ${pct(s, p)} |`,
    `| \`psql \\copy\` of the same rows from a file | ${r.seeding.psqlCopyRowsPerSec.map(fmt).join(', ')} | 100 % |`,
    '',
    'Targets: multi-row mode >= 150 % of the one-row leg and >= 50 % of the multi-row leg; no mode above 6.5 WAL records/event with the hot row fixed; seeding >= 80 % of `psql \\copy`. ' +
      `This run: multi-row mode ${pct(multiMode.mean, one.mean)} of the one-row leg and ${pct(multiMode.mean, multi.mean)} of the multi-row leg; ` +
      `WAL records/event per-event ${perEv.records.toFixed(2)}, multi-row ${multiMode.records.toFixed(2)}; seeding ${pct(s, p)} of \\copy. ` +
      "WAL per row is pg_stat_wal's delta over the phase (read after every backend published its counters) divided by the reconciled rows; it includes autovacuum's and the checkpointer's share.",
  );
  return lines.join('\n');
}

function writeSection(body: string): void {
  const file = path.join(projectRoot, 'docs', 'benchmarks.md');
  const heading = '## bench:target';
  const section = `${heading}\n\n${body}\n`;
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n';
  const start = text.indexOf(`${heading}\n`);
  if (start < 0) text = `${text.trimEnd()}\n\n${section}`;
  else {
    const next = text.indexOf('\n## ', start + heading.length);
    text = text.slice(0, start) + section + (next < 0 ? '' : text.slice(next + 1).replace(/^/, '\n'));
  }
  fs.writeFileSync(file, text.replace(/\n{3,}/g, '\n\n'));
}

main().catch((err: unknown) => {
  console.error(`[bench:target] failed: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
});

// The 5-second DB sampler (the spec's third run): what the backends wait on, WAL written, checkpointer
// and background-writer counters, vacuum progress, and the measured table's and its indexes' sizes.
// Each sample is one JSON line, appended as it is taken. Connect as a role that sees every backend's
// wait event (superuser, or pg_read_all_stats; on RDS the master user).
import pg from 'pg';
import { pgConfig } from '../pg/connection';
import { JsonlWriter } from './jsonl-writer';
import { runPeriodic } from './periodic';
import type { WalCounters } from './wal-per-event';

export interface WaitCount {
  state: string | null;
  wait_event_type: string | null;
  wait_event: string | null;
  backend_type: string | null;
  count: number;
}

export interface VacuumProgress {
  pid: number;
  relname: string | null;
  phase: string;
  heap_blks_total: number;
  heap_blks_scanned: number;
  heap_blks_vacuumed: number;
  index_vacuum_count: number;
}

export interface DbSample {
  /** ISO time the sample was taken. */
  t: string;
  seq: number;
  /** Backends other than this sampler, grouped by state and wait event. */
  waits: WaitCount[];
  activeBackends: number;
  wal: WalCounters;
  /** Checkpointer + bgwriter counters (pg_stat_bgwriter up to PG16, pg_stat_checkpointer from PG17). */
  checkpointer: Record<string, number>;
  bgwriter: Record<string, number>;
  vacuum: VacuumProgress[];
  /** Bytes: the table's heap, each index, and the total with TOAST. */
  sizes: { table: number; indexes: Record<string, number>; total: number };
  /** pg_stat_user_tables counters of the table. */
  tableStats: Record<string, number | string | null>;
}

export interface DbSampleError {
  t: string;
  seq: number;
  error: string;
}

const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** pg_stat_wal plus the insert LSN (see WalCounters for the statistics' ~1 s lag). */
export async function readWal(c: pg.ClientBase): Promise<WalCounters> {
  const r = await c.query<{ wal_records: string; wal_fpi: string; wal_bytes: string; lsn_bytes: string }>(
    `SELECT wal_records::text, wal_fpi::text, wal_bytes::text,
            pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS lsn_bytes FROM pg_stat_wal`,
  );
  const row = r.rows[0];
  return { wal_records: n(row.wal_records), wal_fpi: n(row.wal_fpi), wal_bytes: n(row.wal_bytes), lsn_bytes: n(row.lsn_bytes) };
}

async function serverVersion(c: pg.ClientBase): Promise<number> {
  return Number((await c.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0].v);
}

const numericRow = (row: Record<string, unknown>): Record<string, number> =>
  Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null && typeof v !== 'object').map(([k, v]) => [k, n(v)]));

/** One sample. `version` is server_version_num (read once by the sampler). */
export async function sampleDb(c: pg.ClientBase, opts: { table?: string; version?: number } = {}): Promise<Omit<DbSample, 't' | 'seq'>> {
  const table = opts.table ?? 'usage_events';
  const version = opts.version ?? (await serverVersion(c));
  const waits = (
    await c.query<{ state: string | null; wait_event_type: string | null; wait_event: string | null; backend_type: string | null; count: string }>(
      `SELECT state, wait_event_type, wait_event, backend_type, count(*)::text AS count
         FROM pg_stat_activity WHERE pid <> pg_backend_pid()
        GROUP BY 1, 2, 3, 4 ORDER BY count(*) DESC`,
    )
  ).rows.map((r) => ({ ...r, count: Number(r.count) }));
  const wal = await readWal(c);
  let checkpointer: Record<string, number>;
  let bgwriter: Record<string, number>;
  if (version >= 170000) {
    checkpointer = numericRow((await c.query('SELECT * FROM pg_stat_checkpointer')).rows[0] as Record<string, unknown>);
    bgwriter = numericRow((await c.query('SELECT * FROM pg_stat_bgwriter')).rows[0] as Record<string, unknown>);
  } else {
    const row = numericRow((await c.query('SELECT * FROM pg_stat_bgwriter')).rows[0] as Record<string, unknown>);
    const ckptKeys = ['checkpoints_timed', 'checkpoints_req', 'checkpoint_write_time', 'checkpoint_sync_time', 'buffers_checkpoint'];
    checkpointer = Object.fromEntries(Object.entries(row).filter(([k]) => ckptKeys.includes(k)));
    bgwriter = Object.fromEntries(Object.entries(row).filter(([k]) => !ckptKeys.includes(k)));
  }
  const vacuum = (
    await c.query<Record<string, string | null>>(
      `SELECT p.pid::text, c.relname, p.phase, p.heap_blks_total::text, p.heap_blks_scanned::text,
              p.heap_blks_vacuumed::text, p.index_vacuum_count::text
         FROM pg_stat_progress_vacuum p LEFT JOIN pg_class c ON c.oid = p.relid`,
    )
  ).rows.map((r) => ({
    pid: n(r.pid),
    relname: r.relname,
    phase: r.phase ?? '',
    heap_blks_total: n(r.heap_blks_total),
    heap_blks_scanned: n(r.heap_blks_scanned),
    heap_blks_vacuumed: n(r.heap_blks_vacuumed),
    index_vacuum_count: n(r.index_vacuum_count),
  }));
  const sizeRows = (
    await c.query<{ name: string; kind: string; bytes: string }>(
      `SELECT c.relname AS name, 'table' AS kind, pg_relation_size(c.oid)::text AS bytes FROM pg_class c WHERE c.oid = to_regclass($1)
       UNION ALL
       SELECT 'total', 'total', pg_total_relation_size(to_regclass($1))::text WHERE to_regclass($1) IS NOT NULL
       UNION ALL
       SELECT i.relname, 'index', pg_relation_size(i.oid)::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = to_regclass($1)`,
      [table],
    )
  ).rows;
  const sizes = { table: 0, indexes: {} as Record<string, number>, total: 0 };
  for (const r of sizeRows) {
    if (r.kind === 'table') sizes.table = n(r.bytes);
    else if (r.kind === 'total') sizes.total = n(r.bytes);
    else sizes.indexes[r.name] = n(r.bytes);
  }
  const ts = (
    await c.query<Record<string, string | null>>(
      `SELECT n_tup_ins::text, n_live_tup::text, n_dead_tup::text, n_mod_since_analyze::text, n_ins_since_vacuum::text,
              last_autovacuum::text, last_autoanalyze::text, autovacuum_count::text, autoanalyze_count::text
         FROM pg_stat_user_tables WHERE relid = to_regclass($1)`,
      [table],
    )
  ).rows[0];
  const tableStats: Record<string, number | string | null> = {};
  for (const [k, v] of Object.entries(ts ?? {})) tableStats[k] = k.startsWith('last_') ? v : n(v);
  const activeBackends = waits.filter((w) => w.state === 'active').reduce((s, w) => s + w.count, 0);
  return { waits, activeBackends, wal, checkpointer, bgwriter, vacuum, sizes, tableStats };
}

export interface DbSamplerOptions {
  /** A superuser (or pg_read_all_stats) URL, with password. */
  url: string;
  /** JSON lines file the samples are appended to. */
  file: string;
  /** Default 5000 ms. */
  intervalMs?: number;
  table?: string;
  onSample?: (s: DbSample) => void;
}

export interface DbSampler {
  readonly file: string;
  /** Stop after the sample in flight; resolves with how many samples (and errors) were written. */
  stop(): Promise<{ samples: number; errors: number }>;
}

export async function startDbSampler(opts: DbSamplerOptions): Promise<DbSampler> {
  const client = new pg.Client(pgConfig(opts.url, { application_name: 'rig-db-sampler' }));
  await client.connect();
  // A sampler must never be the thing that stalls: short statement timeout, and errors become rows.
  await client.query("SET statement_timeout = '4s'");
  const version = await serverVersion(client);
  const out = new JsonlWriter(opts.file);
  let samples = 0;
  let errors = 0;
  client.on('error', () => {
    // reported through the failing query of the next tick
  });
  const loop = runPeriodic(opts.intervalMs ?? 5000, async (seq) => {
    const t = new Date().toISOString();
    try {
      const s: DbSample = { t, seq, ...(await sampleDb(client, { table: opts.table, version })) };
      samples++;
      await out.write(s);
      opts.onSample?.(s);
    } catch (err) {
      errors++;
      await out.write({ t, seq, error: (err as Error).message } satisfies DbSampleError);
    }
  });
  return {
    file: opts.file,
    async stop() {
      await loop.stop();
      await out.flush();
      await client.end().catch(() => {});
      return { samples, errors };
    },
  };
}

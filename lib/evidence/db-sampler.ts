// The DB sampler (the spec's third run): what the backends wait on, WAL written, checkpointer and
// background-writer counters, vacuum progress, and the measured table's and its indexes' sizes.
// Each sample is one JSON line, appended as it is taken. Connect as a role that sees every backend's
// wait event (superuser, or pg_read_all_stats; on RDS the master user).
//
// Two rates: the snapshot of pg_stat_activity (who waits on what), pg_stat_progress_vacuum and WAL is
// taken every `intervalMs`, dense enough for a share of waits to rest on 100+ snapshots a repeat
// (lib/protocol/db-sampling.ts picks it); the slower counters (checkpointer, bgwriter, sizes, table
// statistics) only every `countersEveryMs` (5 s), on the first row and on the rows after.
//
// Each group of backends says whose it is (`who`): 'request' is a client backend of the service's role
// (hardcount_app, the role every request path connects as: bring-up checks it), 'rig' a client backend
// of the rig's own (application_name rig-*), 'other client' any other session, and a background
// process its backend_type (checkpointer, walwriter, autovacuum worker, ...). Background processes in
// their idle loop (wait type Activity) are never work and are left out of the rows.
//
// The first row also carries the cluster's settings (pg_settings read back: what differs from the
// default, and the few every page names), so the evidence says what the database ran with.
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
  /** Whose backends: 'request', 'rig', 'other client', or the background process's backend_type. Absent in rows written before it was kept. */
  who?: string;
  count: number;
}

/** pg_settings read back at the sampler's start (first row only). */
export interface DbSettings {
  /**
   * Every setting whose source is not 'default': name, value (as SHOW gives it, with its unit) and source; but for the
   * sampler's own connection's ('client', 'session': its statement_timeout, its client encoding).
   */
  changed: Array<{ name: string; value: string; source: string }>;
  /** The few the page always names, whatever their source. */
  named: Record<string, string>;
}

/** Settings named on every page whatever their source: the markers' logging, and how WAL is written. */
export const NAMED_SETTINGS = ['log_timezone', 'log_checkpoints', 'log_autovacuum_min_duration', 'data_checksums', 'wal_compression', 'wal_segment_size', 'server_version'] as const;

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
  /** Backends other than this sampler, grouped by whose, state and wait event (background idle loops left out). */
  waits: WaitCount[];
  activeBackends: number;
  wal: WalCounters;
  vacuum: VacuumProgress[];
  /** Checkpointer + bgwriter counters (pg_stat_bgwriter up to PG16, pg_stat_checkpointer from PG17): counter rows only. */
  checkpointer?: Record<string, number>;
  bgwriter?: Record<string, number>;
  /** Bytes: the table's heap, each index, and the total with TOAST (counter rows only). */
  sizes?: { table: number; indexes: Record<string, number>; total: number };
  /** pg_stat_user_tables counters of the table (counter rows only). */
  tableStats?: Record<string, number | string | null>;
  /** The first row only. */
  settings?: DbSettings;
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

/** The role every request path connects as (reference/schema.ts APP_ROLE; bring-up refuses any other). */
export const REQUEST_ROLE = 'hardcount_app';

/** pg_settings: what differs from the default, and NAMED_SETTINGS whatever their source. */
export async function readSettings(c: pg.ClientBase): Promise<DbSettings> {
  const rows = (
    await c.query<{ name: string; value: string; source: string }>(
      `SELECT name, current_setting(name) AS value, source FROM pg_settings
        WHERE (source <> 'default' AND source NOT IN ('client', 'session')) OR name = ANY($1) ORDER BY name`,
      [[...NAMED_SETTINGS]],
    )
  ).rows;
  // Values as SHOW has them, with their unit ('16MB', '128MB'), not pg_settings' bare count of units.
  const named: Record<string, string> = {};
  for (const r of rows) if ((NAMED_SETTINGS as readonly string[]).includes(r.name)) named[r.name] = r.value;
  return { changed: rows.filter((r) => r.source !== 'default' && r.source !== 'client' && r.source !== 'session').map((r) => ({ name: r.name, value: r.value, source: r.source })), named };
}

/** The frequent part of a sample: whose backends wait on what, vacuum progress, WAL. */
export async function sampleActivity(c: pg.ClientBase, opts: { requestRole?: string } = {}): Promise<Pick<DbSample, 'waits' | 'activeBackends' | 'wal' | 'vacuum'>> {
  const waits = (
    await c.query<{ who: string; state: string | null; wait_event_type: string | null; wait_event: string | null; backend_type: string | null; count: string }>(
      `SELECT CASE WHEN backend_type = 'client backend' AND usename = $1 THEN 'request'
                   WHEN backend_type = 'client backend' AND application_name LIKE 'rig-%' THEN 'rig'
                   WHEN backend_type = 'client backend' THEN 'other client'
                   ELSE coalesce(backend_type, 'unknown') END AS who,
              state, wait_event_type, wait_event, backend_type, count(*)::text AS count
         FROM pg_stat_activity
        WHERE pid <> pg_backend_pid()
          AND (backend_type = 'client backend' OR wait_event_type IS DISTINCT FROM 'Activity')
        GROUP BY 1, 2, 3, 4, 5 ORDER BY count(*) DESC`,
      [opts.requestRole ?? REQUEST_ROLE],
    )
  ).rows.map((r) => ({ state: r.state, wait_event_type: r.wait_event_type, wait_event: r.wait_event, backend_type: r.backend_type, who: r.who, count: Number(r.count) }));
  const wal = await readWal(c);
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
  const activeBackends = waits.filter((w) => w.state === 'active').reduce((s, w) => s + w.count, 0);
  return { waits, activeBackends, wal, vacuum };
}

/** The slow part of a sample: checkpointer and bgwriter counters, the table's sizes and statistics. `version` is server_version_num. */
export async function sampleCounters(c: pg.ClientBase, opts: { table?: string; version?: number } = {}): Promise<Required<Pick<DbSample, 'checkpointer' | 'bgwriter' | 'sizes' | 'tableStats'>>> {
  const table = opts.table ?? 'usage_events';
  const version = opts.version ?? (await serverVersion(c));
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
  return { checkpointer, bgwriter, sizes, tableStats };
}

/** One whole sample (activity and counters). */
export async function sampleDb(c: pg.ClientBase, opts: { table?: string; version?: number; requestRole?: string } = {}): Promise<Omit<DbSample, 't' | 'seq'>> {
  return { ...(await sampleActivity(c, opts)), ...(await sampleCounters(c, opts)) };
}

export interface DbSamplerOptions {
  /** A superuser (or pg_read_all_stats) URL, with password. */
  url: string;
  /** JSON lines file the samples are appended to. */
  file: string;
  /** The activity snapshot's interval. Default 5000 ms (a repeat passes lib/protocol/db-sampling.ts's). */
  intervalMs?: number;
  /** The slow counters at most this often. Default 5000 ms. */
  countersEveryMs?: number;
  table?: string;
  /** The service's role (its client backends are the 'request' rows). Default hardcount_app. */
  requestRole?: string;
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
  const countersEvery = opts.countersEveryMs ?? 5000;
  let countersAt = -Infinity;
  let settings: DbSettings | undefined;
  try {
    settings = await readSettings(client);
  } catch {
    settings = undefined; // a sampler without its settings still samples; the page says they were not read
  }
  const out = new JsonlWriter(opts.file);
  let samples = 0;
  let errors = 0;
  client.on('error', () => {
    // reported through the failing query of the next tick
  });
  const loop = runPeriodic(opts.intervalMs ?? 5000, async (seq) => {
    const t = new Date().toISOString();
    try {
      const activity = await sampleActivity(client, { requestRole: opts.requestRole });
      const due = Date.now() - countersAt >= countersEvery;
      const counters = due ? await sampleCounters(client, { table: opts.table, version }) : {};
      if (due) countersAt = Date.now();
      const s: DbSample = { t, seq, ...activity, ...counters, ...(seq === 0 && settings ? { settings } : {}) };
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

// After a bulk load, wait until autovacuum and autoanalyze have nothing left to do on the table, so the
// first measured repeat does not meet them (the spec: a 22M-row load left autovacuum busy for minutes and
// the first repeat hit a 5-second stall). "Idle" mirrors autovacuum's own decision: no vacuum or analyze
// of the table in progress, and none due by the thresholds (base + scale factor x reltuples), seen twice
// in a row. And the statistics must show the load first: PostgreSQL 15+ flushes a session's table
// counts when it has been idle for 10 s (PGSTAT_IDLE_INTERVAL) if it flushed less than a second before,
// so right after a short COPY the table can read "nothing inserted" for seconds. The seed passes the
// cumulative n_tup_ins the load must have reached (its baseline plus the rows it copied), and no
// poll counts as idle before the statistics show it.
// Thresholds are the table's own where it sets them (pg_class.reloptions: autovacuum_vacuum_threshold,
// _scale_factor, _insert_threshold, _insert_scale_factor, autovacuum_analyze_*), as autovacuum reads
// them (relation_needs_vacanalyze); else the global settings. A table with autovacuum_enabled=false (or
// autovacuum off) has nothing coming: only a pass already running keeps it from being idle. An insert
// threshold of -1 turns insert-triggered vacuums off. The end of settling is the seed's CHECKPOINT
// (lib/targets/checkpoint.ts), which writes the pages the passes dirtied.
import type pg from 'pg';
import { sleep } from './local/proc';

export interface SettleState {
  vacuuming: number;
  analyzing: number;
  nInsSinceVacuum: number;
  nModSinceAnalyze: number;
  nDeadTup: number;
  /** Rows ever inserted, as the statistics show them (cumulative: vacuum does not reset it). */
  nTupIns: number;
  reltuples: number;
  insertThreshold: number;
  analyzeThreshold: number;
  vacuumThreshold: number;
  lastAutovacuum: string | null;
  lastAutoanalyze: string | null;
  /** The table's own autovacuum settings (pg_class.reloptions), which override the global ones above. */
  reloptions: Record<string, string>;
  /** autovacuum on globally and not turned off for the table: false means no pass is coming. */
  autovacuumEnabled: boolean;
  idle: boolean;
}

/** The reloption that overrides each global setting (the global setting's own name). */
const PER_TABLE = [
  'autovacuum_vacuum_insert_threshold',
  'autovacuum_vacuum_insert_scale_factor',
  'autovacuum_analyze_threshold',
  'autovacuum_analyze_scale_factor',
  'autovacuum_vacuum_threshold',
  'autovacuum_vacuum_scale_factor',
] as const;

export interface SettleOptions {
  table?: string;
  timeoutMs?: number;
  pollMs?: number;
  /** No poll counts as idle until n_tup_ins has reached this (the load's rows visible in the statistics). */
  insertedAtLeast?: number;
  onProgress?: (state: SettleState, elapsedMs: number) => void;
}

export interface SettleResult {
  seconds: number;
  state: SettleState;
  polls: number;
}

export async function readSettleState(c: pg.ClientBase, table = 'usage_events'): Promise<SettleState> {
  const r = await c.query<Record<string, string | null>>(
    `SELECT
       (SELECT count(*) FROM pg_stat_progress_vacuum WHERE relid = $1::regclass)::text AS vacuuming,
       (SELECT count(*) FROM pg_stat_progress_analyze WHERE relid = $1::regclass)::text AS analyzing,
       s.n_ins_since_vacuum::text, s.n_mod_since_analyze::text, s.n_dead_tup::text, s.n_tup_ins::text,
       greatest(c.reltuples, 0)::text AS reltuples,
       s.last_autovacuum::text, s.last_autoanalyze::text,
       current_setting('autovacuum') AS autovacuum,
       ${PER_TABLE.map((k) => `current_setting('${k}') AS "${k}"`).join(', ')},
       coalesce((SELECT json_object_agg(option_name, option_value) FROM pg_options_to_table(c.reloptions)), '{}')::text AS reloptions
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE s.relid = $1::regclass`,
    [table],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`table ${table} not found in pg_stat_user_tables`);
  const n = (k: string) => Number(row[k] ?? 0);
  const reloptions = JSON.parse(row.reloptions ?? '{}') as Record<string, string>;
  // The table's own value where it sets one, as autovacuum reads it; else the global setting.
  const setting = (k: (typeof PER_TABLE)[number]) => Number(reloptions[k] ?? row[k] ?? 0);
  const reltuples = n('reltuples');
  const insBase = setting('autovacuum_vacuum_insert_threshold');
  const enabled = row.autovacuum === 'on' && !/^(false|off|no|0)$/i.test(reloptions.autovacuum_enabled ?? 'true');
  const state: SettleState = {
    vacuuming: n('vacuuming'),
    analyzing: n('analyzing'),
    nInsSinceVacuum: n('n_ins_since_vacuum'),
    nModSinceAnalyze: n('n_mod_since_analyze'),
    nDeadTup: n('n_dead_tup'),
    nTupIns: n('n_tup_ins'),
    reltuples,
    insertThreshold: insBase < 0 ? Infinity : insBase + setting('autovacuum_vacuum_insert_scale_factor') * reltuples,
    analyzeThreshold: setting('autovacuum_analyze_threshold') + setting('autovacuum_analyze_scale_factor') * reltuples,
    vacuumThreshold: setting('autovacuum_vacuum_threshold') + setting('autovacuum_vacuum_scale_factor') * reltuples,
    lastAutovacuum: row.last_autovacuum,
    lastAutoanalyze: row.last_autoanalyze,
    reloptions,
    autovacuumEnabled: enabled,
    idle: false,
  };
  state.idle =
    state.vacuuming === 0 &&
    state.analyzing === 0 &&
    (!enabled || (state.nInsSinceVacuum <= state.insertThreshold && state.nModSinceAnalyze <= state.analyzeThreshold && state.nDeadTup <= state.vacuumThreshold));
  return state;
}

/**
 * Thrown when the table did not settle in time. Not worth retrying as it stands (a retry waits on the
 * same autovacuum), so the activity turns it into a refusal; the message names the table, its
 * thresholds, and what autovacuum was doing at the end (workers, vacuum progress, locks in its way).
 */
export class SettleTimeoutError extends Error {
  constructor(
    message: string,
    readonly table: string,
    readonly state: SettleState,
    readonly autovacuum: string,
  ) {
    super(message);
  }
}

/**
 * What autovacuum is doing, in one line: its workers (what each runs, what it waits on), the vacuum
 * progress on `table`, and sessions holding locks on `table` that keep vacuum and analyze out
 * (SHARE UPDATE EXCLUSIVE or stronger: autovacuum skips a table it cannot lock at once).
 */
export async function describeAutovacuum(c: pg.ClientBase, table = 'usage_events'): Promise<string> {
  const workers = (
    await c.query<{ pid: number; query: string; wait: string | null; secs: string }>(
      `SELECT pid, coalesce(query, '') AS query, wait_event_type || ':' || wait_event AS wait,
              round(extract(epoch FROM now() - xact_start))::text AS secs
         FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' ORDER BY pid`,
    )
  ).rows;
  const progress = (
    await c.query<{ pid: number; phase: string; scanned: string; total: string }>(
      `SELECT pid, phase, heap_blks_scanned::text AS scanned, heap_blks_total::text AS total
         FROM pg_stat_progress_vacuum WHERE relid = $1::regclass`,
      [table],
    )
  ).rows;
  const blockers = (
    await c.query<{ pid: number; mode: string; app: string; state: string; secs: string }>(
      `SELECT l.pid, l.mode, coalesce(a.application_name, '') AS app, coalesce(a.state, '') AS state,
              coalesce(round(extract(epoch FROM now() - a.xact_start))::text, '?') AS secs
         FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'relation' AND l.relation = $1::regclass AND l.granted AND l.pid <> pg_backend_pid()
          AND l.mode IN ('ShareUpdateExclusiveLock', 'ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
          AND coalesce(a.backend_type, '') <> 'autovacuum worker'
        ORDER BY l.pid`,
      [table],
    )
  ).rows;
  const parts: string[] = [];
  parts.push(
    workers.length
      ? `Autovacuum workers: ${workers.map((w) => `pid ${w.pid} '${w.query}' for ${w.secs} s${w.wait ? ` waiting on ${w.wait}` : ''}`).join('; ')}`
      : 'No autovacuum worker running',
  );
  if (progress.length) parts.push(`Vacuum of ${table}: ${progress.map((p) => `pid ${p.pid} ${p.phase}, ${p.scanned}/${p.total} heap blocks scanned`).join('; ')}`);
  if (blockers.length) {
    parts.push(
      `Locks on ${table} that keep autovacuum out: ${blockers.map((b) => `pid ${b.pid} ${b.mode} (${b.app || 'no application_name'}, ${b.state}, transaction open ${b.secs} s)`).join('; ')}`,
    );
  }
  return parts.join('. ');
}

/** Wait until the table is idle (twice in a row); throws SettleTimeoutError after timeoutMs with the last state. */
export async function settle(c: pg.ClientBase, opts: SettleOptions = {}): Promise<SettleResult> {
  const table = opts.table ?? 'usage_events';
  const timeoutMs = opts.timeoutMs ?? 15 * 60_000;
  const pollMs = opts.pollMs ?? 2000;
  const t0 = Date.now();
  let streak = 0;
  let polls = 0;
  for (;;) {
    const state = await readSettleState(c, table);
    polls++;
    const elapsed = Date.now() - t0;
    opts.onProgress?.(state, elapsed);
    const caughtUp = opts.insertedAtLeast === undefined || state.nTupIns >= opts.insertedAtLeast;
    streak = state.idle && caughtUp ? streak + 1 : 0;
    if (streak >= 2) return { seconds: elapsed / 1000, state, polls };
    if (elapsed > timeoutMs) {
      const autovacuum = await describeAutovacuum(c, table);
      throw new SettleTimeoutError(
        `${table} did not settle within ${Math.round(timeoutMs / 1000)} s: vacuum running=${state.vacuuming}, analyze running=${state.analyzing}, ` +
          `inserted since vacuum ${state.nInsSinceVacuum} (threshold ${Math.round(state.insertThreshold)}), ` +
          `modified since analyze ${state.nModSinceAnalyze} (threshold ${Math.round(state.analyzeThreshold)}), ` +
          `last autovacuum ${state.lastAutovacuum ?? 'never'}, last autoanalyze ${state.lastAutoanalyze ?? 'never'}` +
          `${caughtUp ? '' : `; the statistics do not show the load yet (n_tup_ins ${state.nTupIns} < ${opts.insertedAtLeast})`}. ${autovacuum}. ` +
          'Raise the settle timeout, or lower autovacuum_naptime / raise the cost limit',
        table,
        state,
        autovacuum,
      );
    }
    await sleep(pollMs);
  }
}

// A CHECKPOINT that leaves the next phase no debt: after a bulk load is vacuumed (settle), a rollup is
// rebuilt, a variant's settings are taken, or a pgbench leg wrote its rows, every heap page they
// dirtied is in shared buffers waiting for the next paced checkpoint, which would then write them
// during the warm-up and the first repeat (issue 31, defect 6). CHECKPOINT writes them now and waits
// until they are on disk. It is harmless to repeat, so a retried step simply checkpoints again.
//
// Only a superuser or a member of pg_checkpoint (PG 15+) may run it. A role that may not (an existing
// deployment's owner, say) gets a record saying so, never a failed step: the page then shows that the
// phase began without one.
import pg from 'pg';
import { pgConfig } from '../pg/connection';

export interface CheckpointRecord {
  /** Why it was taken: "after settle", "after the rollup rebuild", "before pgbench leg owner-1row"... */
  why: string;
  /** ISO time CHECKPOINT returned (its writes are then on disk). */
  at: string;
  seconds: number;
  /** Checkpoints requested, as the statistics count them, before and after (pg_stat_bgwriter.checkpoints_req; pg_stat_checkpointer.num_requested from PG 17). */
  requested_before: number | null;
  requested_after: number | null;
  /** Buffers the checkpoints wrote between the two readings (buffers_checkpoint; buffers_written from PG 17). */
  buffers_written: number | null;
  /** The refusal or failure, when it could not be taken (the phase then begins without one). */
  error?: string;
}

interface Counters {
  requested: number;
  written: number;
}

async function counters(c: pg.ClientBase): Promise<Counters | null> {
  try {
    const v = Number((await c.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0].v);
    const sql =
      v >= 170000
        ? 'SELECT num_requested::text AS requested, buffers_written::text AS written FROM pg_stat_checkpointer'
        : 'SELECT checkpoints_req::text AS requested, buffers_checkpoint::text AS written FROM pg_stat_bgwriter';
    const r = (await c.query<{ requested: string; written: string }>(sql)).rows[0];
    return { requested: Number(r.requested), written: Number(r.written) };
  } catch {
    return null;
  }
}

/**
 * CHECKPOINT on the cluster of `url`, and what the statistics say it did. The checkpointer publishes
 * its counters just after it wakes the requesting backend (checkpointer.c: the done broadcast, then
 * pgstat_report_checkpointer), so they are read again, briefly, until they show it.
 */
export async function checkpoint(url: string, why: string): Promise<CheckpointRecord> {
  const c = new pg.Client(pgConfig(url, { application_name: 'rig-checkpoint' }));
  const t0 = Date.now();
  try {
    await c.connect();
    const before = await counters(c);
    await c.query('CHECKPOINT');
    const at = new Date().toISOString();
    const seconds = (Date.now() - t0) / 1000;
    let after = await counters(c);
    for (let i = 0; i < 40 && before && after && after.requested <= before.requested; i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = await counters(c);
    }
    return {
      why,
      at,
      seconds: Math.round(seconds * 1000) / 1000,
      requested_before: before?.requested ?? null,
      requested_after: after?.requested ?? null,
      buffers_written: before && after ? after.written - before.written : null,
    };
  } catch (err) {
    return { why, at: new Date().toISOString(), seconds: (Date.now() - t0) / 1000, requested_before: null, requested_after: null, buffers_written: null, error: (err as Error).message };
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** One line for a log: "CHECKPOINT after settle: 1234 buffers written in 0.4 s" or why there was none. */
export function checkpointLine(r: CheckpointRecord): string {
  if (r.error) return `no CHECKPOINT ${r.why} (${r.error}): the next phase may pay for the pages left dirty`;
  return `CHECKPOINT ${r.why}: ${r.buffers_written ?? '?'} buffers written in ${r.seconds.toFixed(1)} s`;
}

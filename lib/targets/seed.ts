// Seeding: history rows COPYed into usage_events, in the fixtures' partition. The COPY session sets
// app.livemode to the fixtures' mode (the set_livemode trigger overwrites the column from it, COPY
// included), and a requested mode that differs is refused. Then the table is left to settle until
// autovacuum and autoanalyze are idle, and a CHECKPOINT writes what the load and its vacuum dirtied
// (lib/targets/checkpoint.ts), so the first repeat does not pay for it. rows/s counts the COPY only;
// settling is reported apart.
//
// Safe to run twice with the same tag: rows go in by chunks, one COPY transaction each, and a run first
// counts what is already under the tag (per chunk), then copies only the missing rows, so the table
// ends with exactly `rows` rows under it whatever was interrupted. Row i is the same bytes in every
// run (the history's end time is read back from the rows an earlier run wrote), and its
// idempotency key `seed-<tag>-<i>` is unique per tenant, so even two writers at once cannot double it.
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { pgConfig } from '../pg/connection';
import { from as copyFrom } from 'pg-copy-streams';
import { checkpoint, type CheckpointRecord } from './checkpoint';
import { exactNumber } from './db';
import { assertMode, detectFixtures, type FixtureScope } from './fixtures-scope';
import { SEED_COLUMNS, SEED_INDEX_PATTERN, SEED_TAG_PROPERTY, seedEndFrom, seedRows } from './seed-rows';
import { readSettleState, settle, type SettleResult, type SettleState } from './settle';

export interface SeedProgress {
  /** count: reading what is already in (before the COPY) or verifying it (after). */
  phase: 'count' | 'copy' | 'settle';
  /** Rows under the tag so far: committed plus the ones in the COPY in flight. */
  rows: number;
  /** Rows under the tag that are committed. */
  committed: number;
  total: number;
  rowsPerSec: number;
  elapsedMs: number;
  /** During settle: what autovacuum still has to do. */
  settle?: SettleState;
}

export interface SeedOptions {
  /** The owner role's URL (with password). */
  ownerUrl: string;
  rows: number;
  /** The mode asked for; refused when it is not the fixtures' mode. Default: the fixtures' mode. */
  livemode?: boolean;
  tenantId?: string;
  meterKey?: string;
  /** History span, default 30 days. */
  days?: number;
  /** Default: a fresh random tag. The same tag again resumes (see the header). */
  tag?: string;
  /** Rows per COPY transaction, default 100,000: an interruption loses at most one chunk. */
  chunkRows?: number;
  /** The history's end, default now; a resumed seed keeps the end its first run wrote. */
  end?: Date;
  /** Skip the settle phase (tests of the COPY alone; a campaign always settles). */
  settle?: false | { timeoutMs?: number; pollMs?: number };
  /**
   * Who runs the CHECKPOINT that ends settling (a superuser, or pg_checkpoint's member); default the
   * owner, which on a deployment it does not administer may be refused: then the result says so.
   */
  checkpointUrl?: string;
  onProgress?: (p: SeedProgress) => void;
  /** How often onProgress is called during the COPY, default 500 ms. */
  progressEveryMs?: number;
  /** Aborting it ends the connection at once: the COPY in flight rolls back and nothing more is written. */
  signal?: AbortSignal;
}

export interface SeedResult {
  tag: string;
  rows: number;
  tenantId: string;
  livemode: boolean;
  /** Rows that were already under the tag when this run started (an earlier, interrupted run's). */
  alreadyIn: number;
  /** Rows this run copied (rows - alreadyIn). */
  copiedRows: number;
  copySeconds: number;
  /** copiedRows per second of COPY; 0 when nothing was left to copy. */
  rowsPerSec: number;
  /** Rows with the seed tag counted in the intended partition afterwards (== rows). */
  verifiedRows: number;
  settle?: SettleResult;
  /** The CHECKPOINT that ended settling (with settle only). */
  checkpoint?: CheckpointRecord;
}

export function newSeedTag(): string {
  return `seed-${new Date().toISOString().slice(0, 10)}-${crypto.randomBytes(4).toString('hex')}`;
}

/** The seed tag of a campaign: the same for every attempt of its seed step, so a retry resumes. */
export function seedTagFor(campaignId: string): string {
  return `seed-${crypto.createHash('sha256').update(campaignId).digest('hex').slice(0, 10)}`;
}

/**
 * A fresh history for a variant's block (issue 13, `variants.fresh`): when usage_events holds any row
 * not under `tag` (the earlier variant's history and repeats), it is emptied, so the seed that follows
 * writes the whole table anew. A retry after a kill finds only its own tag's rows and empties nothing:
 * the seed resumes. Returns how many rows were removed.
 */
export async function emptyForFreshSeed(ownerUrl: string, tag: string): Promise<number> {
  const c = new pg.Client(pgConfig(ownerUrl));
  await c.connect();
  try {
    // One scan: whether anything else is there, and how much the table holds.
    const r = await c.query<{ other: string; total: string }>(
      `SELECT count(*) FILTER (WHERE NOT properties @> $1::jsonb)::text AS other, count(*)::text AS total FROM usage_events`,
      [JSON.stringify({ [SEED_TAG_PROPERTY]: tag })],
    );
    if (Number(r.rows[0].other) === 0) return 0;
    await c.query('TRUNCATE usage_events');
    return Number(r.rows[0].total);
  } finally {
    await c.end();
  }
}

/** What is under the tag already, per chunk of the plan. */
interface Existing {
  /** rows under the tag in the intended partition */
  rows: number;
  perChunk: Map<number, number>;
  /** the lowest index present and its occurred_at (ms), to recover the history's end */
  first?: { index: number; atMs: number };
}

async function existingRows(c: pg.ClientBase, tenantId: string, tag: string, livemode: boolean, chunkRows: number, total: number): Promise<Existing> {
  const tagJson = JSON.stringify({ [SEED_TAG_PROPERTY]: tag });
  const r = await c.query<{ chunk: string; n: string; other: string; min_i: string; max_i: string }>(
    `SELECT (substring(idempotency_key FROM '${SEED_INDEX_PATTERN}')::bigint / $3)::text AS chunk,
            count(*) FILTER (WHERE livemode = $2)::text AS n, count(*) FILTER (WHERE livemode <> $2)::text AS other,
            min(substring(idempotency_key FROM '${SEED_INDEX_PATTERN}')::bigint)::text AS min_i,
            max(substring(idempotency_key FROM '${SEED_INDEX_PATTERN}')::bigint)::text AS max_i
       FROM usage_events WHERE properties @> $1::jsonb GROUP BY 1 ORDER BY 1`,
    [tagJson, livemode, chunkRows],
  );
  const out: Existing = { rows: 0, perChunk: new Map() };
  let minIndex = Infinity;
  for (const row of r.rows) {
    if (Number(row.other) > 0) {
      throw new Error(`seed ${tag}: ${row.other} of its rows are in the livemode=${!livemode} partition; the fixtures' mode changed since it began. Use another tag`);
    }
    if (Number(row.max_i) >= total) {
      throw new Error(`seed ${tag}: a row with index ${row.max_i} is already there, beyond the ${total} rows asked for: it was begun with more rows. Use another tag`);
    }
    const n = exactNumber(row.n, 'seeded rows');
    out.rows += n;
    out.perChunk.set(Number(row.chunk), n);
    minIndex = Math.min(minIndex, Number(row.min_i));
  }
  if (out.rows > 0) {
    const at = await c.query<{ ms: string }>(
      `SELECT (extract(epoch FROM occurred_at) * 1000)::bigint::text AS ms FROM usage_events WHERE tenant_id = $1 AND idempotency_key = $2`,
      [tenantId, `seed-${tag}-${minIndex}`],
    );
    out.first = { index: minIndex, atMs: Number(at.rows[0].ms) };
  }
  return out;
}

/** The indexes present in [from, to) (for a chunk only part of which is in: never by our own COPYs). */
async function presentIndexes(c: pg.ClientBase, tag: string, from: number, to: number): Promise<Set<number>> {
  const r = await c.query<{ i: string }>(
    `SELECT i::text FROM (SELECT substring(idempotency_key FROM '${SEED_INDEX_PATTERN}')::bigint AS i FROM usage_events WHERE properties @> $1::jsonb) k
      WHERE i >= $2 AND i < $3`,
    [JSON.stringify({ [SEED_TAG_PROPERTY]: tag }), from, to],
  );
  return new Set(r.rows.map((x) => Number(x.i)));
}

export async function seed(opts: SeedOptions): Promise<SeedResult> {
  if (!Number.isSafeInteger(opts.rows) || opts.rows < 1) throw new Error(`rows must be a positive integer, not ${opts.rows}`);
  const days = opts.days ?? 30;
  if (!(days > 0)) throw new Error(`days must be positive, not ${days}`);
  const chunkRows = opts.chunkRows ?? 100_000;
  if (!Number.isSafeInteger(chunkRows) || chunkRows < 1) throw new Error(`chunkRows must be a positive integer, not ${chunkRows}`);
  const tag = opts.tag ?? newSeedTag();
  const signal = opts.signal;
  signal?.throwIfAborted();
  const client = new pg.Client(pgConfig(opts.ownerUrl, { application_name: 'rig-seed' }));
  let ended: Promise<void> | undefined;
  const end = () => (ended ??= client.end().catch(() => undefined));
  // Ending the session mid-COPY makes the server abort the COPY's transaction: no second writer is
  // left behind a cancelled attempt, and whatever the statement in flight was, it fails here.
  const onAbort = () => void end();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await client.connect();
    const scope: FixtureScope = await detectFixtures(client, { tenantId: opts.tenantId, meterKey: opts.meterKey });
    const livemode = assertMode(scope, opts.livemode, 'seeding');
    // The trigger reads this for every row, COPY included: it decides the partition, not our columns.
    await client.query(`SELECT set_config('app.livemode', $1, false)`, [String(livemode)]);
    const total = opts.rows;
    const t0 = process.hrtime.bigint();
    const elapsedMs = () => Number(process.hrtime.bigint() - t0) / 1e6;
    let committed = 0;
    let inFlight = 0;
    let copied = 0;
    let copyMs = 0;
    const report = (phase: SeedProgress['phase'], settleState?: SettleState, ms = elapsedMs()) =>
      opts.onProgress?.({
        phase,
        rows: committed + inFlight,
        committed,
        total,
        rowsPerSec: copyMs > 0 ? (copied * 1000) / copyMs : 0,
        elapsedMs: ms,
        settle: settleState,
      });

    // The rows ever inserted before this attempt's COPY, as the statistics show them: settling waits
    // until they show this attempt's rows too (lib/targets/settle.ts).
    const insertedBefore = (await readSettleState(client)).nTupIns;
    report('count');
    const existing = await existingRows(client, scope.tenantId, tag, livemode, chunkRows, total);
    committed = existing.rows;
    const alreadyIn = existing.rows;
    const rowSpec = {
      scope,
      rows: total,
      tag,
      days,
      end: existing.first ? seedEndFrom({ rows: total, days }, existing.first.index, existing.first.atMs) : (opts.end ?? new Date()),
      chunkRows: 5000,
    };

    let lastReport = 0;
    const every = opts.progressEveryMs ?? 500;
    for (let from = 0; from < total; from += chunkRows) {
      const to = Math.min(total, from + chunkRows);
      const have = existing.perChunk.get(from / chunkRows) ?? 0;
      if (have === to - from) continue;
      signal?.throwIfAborted();
      const skip = have > 0 ? await presentIndexes(client, tag, from, to) : undefined;
      const c0 = elapsedMs();
      inFlight = 0;
      const source = Readable.from(
        (function* () {
          for (const chunk of seedRows(rowSpec, from, to, skip)) {
            inFlight += chunk.rows;
            const ms = elapsedMs();
            if (ms - lastReport >= every) {
              lastReport = ms;
              report('copy');
            }
            yield chunk.text;
          }
        })(),
        { objectMode: false },
      );
      // One COPY = one transaction: this chunk is all in or all out.
      const copy = client.query(copyFrom(`COPY usage_events (${SEED_COLUMNS.join(', ')}) FROM STDIN`));
      await pipeline(source, copy);
      if (copy.rowCount !== to - from - have) throw new Error(`COPY reported ${copy.rowCount} rows, ${to - from - have} were sent`);
      committed += copy.rowCount;
      copied += copy.rowCount;
      inFlight = 0;
      copyMs += elapsedMs() - c0;
      report('copy');
    }

    report('count');
    const verified = exactNumber(
      (
        await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM usage_events WHERE properties @> $1::jsonb AND livemode = $2`, [
          JSON.stringify({ [SEED_TAG_PROPERTY]: tag }),
          livemode,
        ])
      ).rows[0].n,
      'seeded rows',
    );
    if (verified !== total) {
      throw new Error(`seed ${tag}: ${verified} rows found in the livemode=${livemode} partition, ${total} were meant to be there`);
    }
    const result: SeedResult = {
      tag,
      rows: total,
      tenantId: scope.tenantId,
      livemode,
      alreadyIn,
      copiedRows: copied,
      copySeconds: copyMs / 1000,
      rowsPerSec: copyMs > 0 ? (copied * 1000) / copyMs : 0,
      verifiedRows: verified,
    };
    if (opts.settle !== false) {
      result.settle = await settle(client, {
        timeoutMs: opts.settle?.timeoutMs,
        pollMs: opts.settle?.pollMs,
        insertedAtLeast: insertedBefore + copied,
        onProgress: (state, ms) => report('settle', state, ms),
      });
      // Settled means no debt left: the vacuum passes dirtied every page the COPY wrote.
      result.checkpoint = await checkpoint(opts.checkpointUrl ?? opts.ownerUrl, 'after settle');
    }
    return result;
  } catch (err) {
    // Whatever failed after a cancellation, the cancellation is the reason.
    if (signal?.aborted) throw signal.reason ?? err;
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await end();
  }
}

// WAL per event, provoked: a known number of usage_events rows, inserted the way the multi-row ingest
// path does (INSERT ... SELECT over the batch), between the readings of the rig's own WAL bracket
// (wal-bracket.ts, as a repeat takes them), turned into the page's figure by walFromBracket. The truth
// is PostgreSQL's own count of the same LSN range: pg_walinspect's pg_get_wal_stats() (also on RDS for
// PostgreSQL 15+), else pg_waldump --stats on the cluster's pg_wal (a local cluster only).
import pg from 'pg';
import { walFromBracket } from '../../evidence/report/wal-figure';
import { WalBracket, type WalBracketFile } from '../../evidence/wal-bracket';
import { pgConfig } from '../../pg/connection';
import { judgeWal, type DbCaseResult } from '../../protocol/db-calibration';
import type { ScratchDb } from './scratch-db';
import type { ProvokedRegressions } from './sampling';

/** pg_waldump --stats over [start, end) of the cluster's pg_wal: records, and record + full-page-image bytes (local clusters). */
export type WalDump = (startLsn: string, endLsn: string) => Promise<{ records: number; bytes: number }>;

export interface WalCaseOptions {
  /** Rows inserted (default 5,000) in batches of `batch` (default 10). */
  rows?: number;
  batch?: number;
  waldump?: WalDump;
  /** Wait this long for pg_stat_wal after the last insert (default the bracket's own). */
  statsLagMs?: number;
  regressions?: ProvokedRegressions;
}

const INSERT = `INSERT INTO usage_events (tenant_id, customer_id, meter_id, quantity, idempotency_key, properties, cost)
  SELECT $1::bigint, $2::bigint, $3::bigint, q, 'dbcal-' || $4::text || '-' || g, jsonb_build_object('rig_calibration', $4::text, 'region', 'eu-west-1', 'n', g), q * 0.0001
    FROM generate_series($5::int, $6::int) AS g, LATERAL (SELECT (g % 100) + 1 AS q) v`;

async function withInspector<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(pgConfig(url, { application_name: 'rig-dbcal-walinspect' }));
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function walinspect(c: pg.Client, start: string, end: string): Promise<{ records: number; bytes: number } | string> {
  try {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const r = (await c.query<{ n: string; b: string }>('SELECT sum(count)::text AS n, sum(combined_size)::text AS b FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, false)', [start, end])).rows[0];
    return { records: Number(r.n), bytes: Number(r.b) };
  } catch (err) {
    return (err as Error).message;
  }
}

export async function walCase(db: ScratchDb, opts: WalCaseOptions = {}): Promise<DbCaseResult> {
  const rows = opts.rows ?? 5000;
  const batch = opts.batch ?? 10;
  const tag = `w${Date.now().toString(36)}`;
  const c = new pg.Client(pgConfig(db.url, { application_name: 'rig-dbcal-ingest' }));
  await c.connect();
  let closed = false;
  try {
    const bracket = await WalBracket.open(db.url);
    await bracket.atStart();
    // The true range, read on the inserting session itself right before its first row and right after
    // its last commit: PostgreSQL counts this range, the rig's bracket is judged against it.
    const lsn = async () => (await c.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0].l;
    const trueStart = await lsn();
    // Provoked regression: the end readings (the insert LSN and pg_stat_wal, which the bytes are since
    // issue 47) taken before the last tenth of the rows.
    const cutAt = opts.regressions?.walWindowCutShort ? Math.floor(rows * 0.9) : rows;
    let file: WalBracketFile | null = null;
    for (let from = 1; from <= rows; from += batch) {
      if (!file && from > cutAt) {
        await bracket.atEnd();
        file = await bracket.finish(opts.statsLagMs);
      }
      await c.query(INSERT, [db.tenantId, db.customerId, db.meterId, tag, from, Math.min(rows, from + batch - 1)]);
    }
    const trueEnd = await lsn();
    if (!file) await bracket.atEnd();
    // A backend left idle publishes its WAL counters only after 10 s (wal-per-event.ts), one that exits
    // at once: the bytes, records and full-page images (pg_stat_wal's) are then whole even with the test
    // suite's short wait.
    closed = true;
    await c.end().catch(() => undefined);
    file ??= await bracket.finish(opts.statsLagMs);
    const { wal, problem } = walFromBracket(file, rows);
    let truth: { records: number; bytes: number } | string;
    let source = 'pg_walinspect';
    {
      truth = await withInspector(db.url, (i) => walinspect(i, trueStart, trueEnd));
      if (typeof truth === 'string' && opts.waldump) {
        source = 'pg_waldump';
        truth = await opts.waldump(trueStart, trueEnd).catch((err: Error) => err.message);
      }
    }
    return judgeWal({
      rows,
      rigBytesPerEvent: wal?.bytes_per_event ?? null,
      rigRecordsPerEvent: wal?.records_per_event ?? null,
      problem,
      truthBytes: typeof truth === 'string' ? null : truth.bytes,
      truthRecords: typeof truth === 'string' ? null : truth.records,
      truthSource: typeof truth === 'string' ? `${source}: ${truth}` : source,
      ranges: { rig: file.start && file.end ? `${file.start.lsn}..${file.end.lsn}` : null, truth: `${trueStart}..${trueEnd}` },
    });
  } finally {
    if (!closed) await c.end().catch(() => undefined);
  }
}

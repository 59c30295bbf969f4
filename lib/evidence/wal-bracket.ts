// The WAL a repeat wrote, from readings that bracket its load (issue 31, defect 2): the insert LSN and
// pg_stat_wal right before the generator's first request, the insert LSN right after its last reply,
// and pg_stat_wal again once every backend has published its counters (WAL_STATS_LAG_MS after the last
// reply). The rig takes them itself, through the same code on every target (local, aws, existing), on
// one connection opened before the load. The first-to-last sampler-row window it replaces began before
// the generator's child started and ended up to an interval before the load did, so it missed WAL at
// both ends, by a different amount in each repeat.
//
// Written to wal-bracket.json beside the repeat's other files. Never fatal: a reading that fails is a
// problem in the file, and the page then falls back to the sampler rows, marked as such.
import pg from 'pg';
import { pgConfig } from '../pg/connection';
import { WAL_BYTES_STAT, walStatsLagMs, type WalBytesMeasure } from './wal-per-event';

export interface WalLsnReading {
  /** ISO time of the reading. */
  t: string;
  /** pg_current_wal_insert_lsn(), as PostgreSQL prints it (e.g. 0/1A2B3C8). */
  lsn: string;
  /** The same as a byte position. */
  lsn_bytes: number;
}

export interface WalStatsReading {
  t: string;
  wal_records: number;
  wal_fpi: number;
  wal_bytes: number;
}

export interface WalBracketFile {
  /** Right before the first request. */
  start: (WalLsnReading & WalStatsReading) | null;
  /** Right after the last reply (the LSN has no lag). */
  end: WalLsnReading | null;
  /** pg_stat_wal read stats_waited_ms after `end`, once the backends' counters are published. */
  end_stats: WalStatsReading | null;
  /** How long after the last reply end_stats was read. */
  stats_waited_ms: number | null;
  /** Readings that failed (the page then falls back to the sampler rows). */
  problems: string[];
  /**
   * Which difference the WAL bytes are (wal-per-event.ts): pg_stat_wal's wal_bytes, which a segment
   * switch inside the load does not pad. Absent in files written before issue 47: their figure was the
   * insert-LSN difference, and the page still says so.
   */
  bytes_measure?: WalBytesMeasure;
}

const READ = `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS t, pg_current_wal_insert_lsn()::text AS lsn,
                     pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS lsn_bytes,
                     wal_records::text, wal_fpi::text, wal_bytes::text
                FROM pg_stat_wal`;

type Row = { t: string; lsn: string; lsn_bytes: string; wal_records: string; wal_fpi: string; wal_bytes: string };

export class WalBracket {
  private readonly file: WalBracketFile = { start: null, end: null, end_stats: null, stats_waited_ms: null, problems: [], bytes_measure: WAL_BYTES_STAT };
  private endMs: number | null = null;

  private constructor(private readonly client: pg.Client | null) {}

  /** Connects (a failure is recorded, not thrown: the load runs without a bracket). */
  static async open(url: string): Promise<WalBracket> {
    const client = new pg.Client(pgConfig(url, { application_name: 'rig-wal-bracket', connectionTimeoutMillis: 5000 }));
    client.on('error', () => undefined); // reported by the next reading that fails
    try {
      await client.connect();
      await client.query("SET statement_timeout = '4s'");
      return new WalBracket(client);
    } catch (err) {
      await client.end().catch(() => undefined);
      const b = new WalBracket(null);
      b.file.problems.push(`could not connect for the WAL readings: ${(err as Error).message}`);
      return b;
    }
  }

  private async read(what: string): Promise<Row | null> {
    if (!this.client) return null;
    try {
      return (await this.client.query<Row>(READ)).rows[0];
    } catch (err) {
      this.file.problems.push(`${what}: ${(err as Error).message}`);
      return null;
    }
  }

  /** Right before the first request. */
  async atStart(): Promise<void> {
    const r = await this.read('the reading before the first request');
    if (r) this.file.start = { t: isoOf(r.t), lsn: r.lsn, lsn_bytes: Number(r.lsn_bytes), wal_records: Number(r.wal_records), wal_fpi: Number(r.wal_fpi), wal_bytes: Number(r.wal_bytes) };
  }

  /** Right after the last reply: the insert LSN; pg_stat_wal comes later (finish). */
  async atEnd(): Promise<void> {
    this.endMs = Date.now();
    const r = await this.read('the reading after the last reply');
    if (r) this.file.end = { t: isoOf(r.t), lsn: r.lsn, lsn_bytes: Number(r.lsn_bytes) };
  }

  /**
   * Waits until `lagMs` after the last reply (the backends' pg_stat_wal counters are then published),
   * reads pg_stat_wal, closes the connection and returns the file. Without an end reading (the load
   * never reported its last reply) nothing is waited for.
   */
  async finish(lagMs = walStatsLagMs()): Promise<WalBracketFile> {
    try {
      if (this.endMs !== null && this.file.start) {
        const wait = this.endMs + lagMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const r = await this.read('pg_stat_wal after the statistics flush');
        if (r) {
          this.file.end_stats = { t: isoOf(r.t), wal_records: Number(r.wal_records), wal_fpi: Number(r.wal_fpi), wal_bytes: Number(r.wal_bytes) };
          this.file.stats_waited_ms = Date.now() - this.endMs;
        }
      }
      if (this.endMs === null) this.file.problems.push('the load reported no last reply: no end reading');
      return this.file;
    } finally {
      await this.client?.end().catch(() => undefined);
    }
  }
}

/** The server's clock (epoch ms) as ISO. */
function isoOf(ms: string): string {
  return new Date(Number(ms)).toISOString();
}

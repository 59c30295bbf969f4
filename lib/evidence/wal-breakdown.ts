// What the WAL of a phase is made of, record type by record type: pg_waldump --stats=record over the
// phase's LSN range (local rig only: it reads the cluster's pg_wal, as the cluster's OS user). This is
// how "heap + five index entries ~6 records" is checked rather than assumed, and where an extra
// record per event (e.g. Heap/HEAP_CONFIRM from INSERT ... ON CONFLICT's speculative insertion, or
// Heap/LOCK from foreign-key KEY SHARE locks on parent rows) shows up by name.
import { PgCluster } from '../targets/local/pg-cluster';

export interface WalRecordCount {
  type: string;
  count: number;
  /** Record bytes plus full-page-image bytes. */
  bytes: number;
}

export interface WalBreakdown {
  startLsn: string;
  endLsn: string;
  total: { count: number; bytes: number };
  records: WalRecordCount[];
}

/** Parse pg_waldump --stats=record output (rows: Type N (%) RecordSize (%) FPISize (%) Combined (%)). */
export function parseWaldumpStats(text: string, startLsn = '', endLsn = ''): WalBreakdown {
  const records: WalRecordCount[] = [];
  let total = { count: 0, bytes: 0 };
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s+(\d+)\s+\(\s*[\d.]+\)\s+(\d+)\s+\(\s*[\d.]+\)\s+(\d+)\s+\(\s*[\d.]+\)\s+(\d+)\s+\(\s*[\d.]+\)\s*$/.exec(line);
    if (m) {
      if (Number(m[2]) > 0) records.push({ type: m[1], count: Number(m[2]), bytes: Number(m[5]) });
      continue;
    }
    const t = /^Total\s+(\d+)\s+(\d+)\s+\[[\d.]+%\]\s+(\d+)\s+\[[\d.]+%\]\s+(\d+)/.exec(line);
    if (t) total = { count: Number(t[1]), bytes: Number(t[4]) };
  }
  if (!total.count && !records.length) throw new Error(`pg_waldump output has no statistics:\n${text.slice(0, 500)}`);
  records.sort((a, b) => b.count - a.count);
  return { startLsn, endLsn, total, records };
}

/** pg_waldump over [startLsn, endLsn) of a local cluster. The WAL must still be in pg_wal. */
export async function walBreakdown(clusterDir: string, startLsn: string, endLsn: string): Promise<WalBreakdown> {
  const cluster = PgCluster.attach(clusterDir);
  const out = await cluster.exec('pg_waldump', ['--stats=record', '-p', `${cluster.dataDir}/pg_wal`, '-s', startLsn, '-e', endLsn]);
  return parseWaldumpStats(out.stdout, startLsn, endLsn);
}

/** Records per event by type, for the types that carry at least `min` per event (the rest summed as 'other'). */
export function perEvent(b: WalBreakdown, events: number, min = 0.02): Array<{ type: string; perEvent: number }> {
  const out: Array<{ type: string; perEvent: number }> = [];
  let other = 0;
  for (const r of b.records) {
    const p = r.count / events;
    if (p >= min) out.push({ type: r.type, perEvent: p });
    else other += p;
  }
  if (other > 0) out.push({ type: 'other', perEvent: other });
  return out;
}

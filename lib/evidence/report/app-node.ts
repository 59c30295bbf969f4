// The app node's host (aws: where the service under test runs), per repeat. Its sampler runs all
// campaign long (lib/evidence/node-host-sampler.ts), so each repeat's figures are the rows whose
// interval overlaps the repeat's window (load.json's started_at..ended_at), with how much of the window
// they cover: a worker restart mid-repeat shows as coverage under 100 %, never as a quiet host.
import { isSampleError, type HostSampleRow } from '../records';
import { summarizeHost, type HostSummary } from './db-summary';

export interface AppNodeSummary extends HostSummary {
  /** Share of the repeat's window that the rows' intervals cover, in %. */
  coverage_pct: number;
}

const NOMINAL_INTERVAL_MS = 5000;

/** The rows whose interval (t - intervalMs, t] overlaps [start, end]. Pure. */
export function rowsInWindow(rows: readonly HostSampleRow[], startIso: string, endIso: string): HostSampleRow[] {
  const start = Date.parse(startIso);
  const end = Date.parse(endIso);
  return rows.filter((r) => {
    const t = Date.parse(r.t);
    const ms = intervalOf(r);
    return t > start && t - ms < end;
  });
}

/** The app node's figures over one window; null when no row falls in it. Pure. */
export function summarizeAppNode(rows: readonly HostSampleRow[], startIso: string, endIso: string): AppNodeSummary | null {
  const inWindow = rowsInWindow(rows, startIso, endIso);
  if (!inWindow.length) return null;
  const start = Date.parse(startIso);
  const end = Date.parse(endIso);
  let covered = 0;
  for (const r of inWindow) {
    if (isSampleError(r)) continue;
    const t = Date.parse(r.t);
    covered += Math.max(0, Math.min(t, end) - Math.max(t - intervalOf(r), start));
  }
  const span = Math.max(1, end - start);
  return { ...summarizeHost(inWindow), coverage_pct: Math.min(100, Math.round((1000 * covered) / span) / 10) };
}

function intervalOf(r: HostSampleRow): number {
  const ms = (r as { intervalMs?: unknown }).intervalMs;
  return typeof ms === 'number' && ms > 0 ? ms : NOMINAL_INTERVAL_MS;
}

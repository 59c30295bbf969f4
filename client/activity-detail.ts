// What the running step is doing right now, from its activity's last heartbeat (the server keeps it
// with the pending activity; `rig campaign watch` and `rig rehearse` read it with DescribeWorkflow).
// The campaign's progress query says which step and repeat; this says how far along it is: the seed's
// rows and rate, the settle's wait, the repeat's second and live p99, the teardown's last line. Nothing
// here enters the workflow's history: heartbeats are the activities' own, and reading them costs the
// workflow nothing.
import type { SeedHeartbeat } from '../activities/seed';

/** One pending activity as DescribeWorkflowExecution gives it, reduced to what is shown. */
export interface PendingActivity {
  type: string;
  attempt: number;
  /** Its last heartbeat's details, decoded (undefined before the first). */
  details: unknown;
  /** When the server recorded that heartbeat, ms since the epoch. */
  atMs?: number;
}

/** The seed's rows at the previous look, for its rate. */
export interface DetailMemory {
  seed?: { rows: number; atMs: number };
}

const n = (x: number) => Math.round(x).toLocaleString('en-US');

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null;
}

function seedDetail(hb: SeedHeartbeat, a: PendingActivity, mem: DetailMemory): string {
  const attempt = a.attempt > 1 ? ` (attempt ${a.attempt})` : '';
  if (hb.phase === 'copy' || hb.phase === 'count') {
    let rate = '';
    const prev = mem.seed;
    if (a.atMs !== undefined) {
      if (prev && a.atMs > prev.atMs && hb.rows >= prev.rows) rate = ` · ${n((hb.rows - prev.rows) / ((a.atMs - prev.atMs) / 1000))} rows/s`;
      if (!prev || a.atMs > prev.atMs) mem.seed = { rows: hb.rows, atMs: a.atMs };
    }
    if (hb.phase === 'count') return `seed: counting the rows an earlier attempt left${attempt}`;
    return `seed: ${n(hb.rows)} of ${n(hb.total)} rows (${n(hb.committed)} committed)${rate}${attempt}`;
  }
  if (hb.phase === 'settle') return `seed: all ${n(hb.total)} rows in; waiting for autovacuum to settle the table${attempt}`;
  if (hb.phase === 'rollup') return `seed: rebuilding the daily rollup${attempt}`;
  return `seed: starting${attempt}`;
}

/** The measured load's second from a repeat's last heartbeat (not a warm-up's), or undefined. */
export function loadSecond(a: PendingActivity): number | undefined {
  const d = a.details;
  return isObject(d) && typeof d.second === 'number' && typeof d.warmup !== 'string' ? d.second : undefined;
}

/** The line's detail, or undefined when the activity has said nothing yet. */
export function activityDetail(a: PendingActivity, mem: DetailMemory = {}): string | undefined {
  const d = a.details;
  if (d === undefined || d === null) return undefined;
  if (typeof d === 'string') return d.length > 160 ? `${d.slice(0, 157)}...` : d;
  if (!isObject(d)) return undefined;
  if (a.type === 'seedHistory' && typeof d.phase === 'string' && typeof d.total === 'number') return seedDetail(d as unknown as SeedHeartbeat, a, mem);
  if (typeof d.second === 'number') {
    // A repeat's or a warm-up's load: its second, what was sent, and the live p99 where it has one.
    const what = typeof d.warmup === 'string' ? `warm-up ${d.warmup}` : 'load';
    const parts = [`${what}: second ${d.second}`, `${n(Number(d.sent ?? 0))} sent in it`];
    if (typeof d.dropped === 'number' && d.dropped > 0) parts.push(`${n(d.dropped)} dropped`);
    if (typeof d.failed === 'number' && d.failed > 0) parts.push(`${n(d.failed)} failed`);
    if (typeof d.p99_ms === 'number') parts.push(`live p99 ${d.p99_ms.toFixed(1)} ms`);
    return parts.join(', ');
  }
  if (typeof d.phase === 'string') return `${d.phase}${typeof d.message === 'string' ? `: ${d.message}` : ''}`;
  return undefined;
}

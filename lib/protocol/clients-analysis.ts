// What a stream of several clients holds (issue 35, item 2): each row's index k on the plan's schedule
// gives its tenant and its original (clients.ts), so the stream's rows need no column for them.
//
// - The claims count each original once: an original is claimed when any of its rows (itself or a
//   repeat) was answered 2xx, with the events and quantity of that row (a repeat's are its
//   original's). That is what the database must hold: rows == unique events, Σ quantity over them.
// - Each tenant's counts and p99 (nearest rank over done - sent of its sent rows, percentile.ts).
// Pure: the analysis (analysis.ts) calls it for a plan with tenants or duplicates, and only then.
import { ClientMap } from './clients';
import { percentiles } from './percentile';
import { INGEST, STATUS_DROPPED, isOk, type SampleColumns } from './sample-row';
import { requestRate, scheduleIndex, scheduledUs, shapedSchedule, type StreamPlan } from './stream-plan';

export interface TenantFigures {
  /** 1-based: tenant 1 is the Zipf draw's hottest (the fixtures tenant). */
  tenant: number;
  offered: number;
  sent: number;
  ok: number;
  p99_us: number | null;
}

export interface ClientsAnalysis {
  /** Ingest rows that repeat an earlier request's keys (sent or dropped). */
  repeats: number;
  /** Of those, sent and answered 2xx. */
  repeats_ok: number;
  /** Distinct originals with a 2xx row: the requests whose events the database must hold. */
  unique_requests_ok: number;
  /** Events and quantity of those originals, each counted once. */
  unique_events: number;
  unique_quantity: number;
  /** Per tenant (absent without tenants), tenant 1 first. */
  tenants?: TenantFigures[];
}

/** The map of a plan with tenants or duplicates, or null (one client, no repeats). */
export function planClients(plan: StreamPlan | null): ClientMap | null {
  if (!plan || plan.mode !== 'open' || (!plan.tenants && !plan.duplicates)) return null;
  const shaped = shapedSchedule(plan);
  const rr = requestRate(plan);
  return new ClientMap(plan.tenants ?? null, plan.duplicates ?? null, shaped ? (k) => shaped.at(k) : (k) => scheduledUs(rr, k));
}

export function analyzeClients(cols: SampleColumns, plan: StreamPlan): ClientsAnalysis | null {
  const map = planClients(plan);
  if (!map) return null;
  const shaped = shapedSchedule(plan);
  const rr = requestRate(plan);
  const count = plan.tenants?.count ?? 0;
  const lat: number[][] = Array.from({ length: count }, () => []);
  const figures: TenantFigures[] = Array.from({ length: count }, (_, i) => ({ tenant: i + 1, offered: 0, sent: 0, ok: 0, p99_us: null }));
  const claimed = new Set<number>();
  let repeats = 0;
  let repeatsOk = 0;
  let events = 0;
  let quantity = 0;
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== INGEST) continue;
    const t = cols.intended[i];
    // Every row is on the schedule (refuseOffSchedule ran first): its index is found.
    const k = shaped ? shaped.indexOf(t) : scheduleIndex(rr, t);
    const original = map.originalOf(k);
    const st = cols.status[i];
    const ok = isOk(st);
    if (original !== k) {
      repeats++;
      if (ok) repeatsOk++;
    }
    if (ok && !claimed.has(original)) {
      claimed.add(original);
      events += cols.events[i];
      quantity += cols.quantity[i];
    }
    if (count) {
      const f = figures[map.tenantOf(k)];
      f.offered++;
      if (st === STATUS_DROPPED) continue;
      f.sent++;
      if (ok) f.ok++;
      lat[map.tenantOf(k)].push(cols.done[i] - cols.sent[i]);
    }
  }
  for (let j = 0; j < count; j++) if (lat[j].length) figures[j].p99_us = percentiles(lat[j], [99])[0];
  return {
    repeats,
    repeats_ok: repeatsOk,
    unique_requests_ok: claimed.size,
    unique_events: events,
    unique_quantity: quantity,
    ...(count ? { tenants: figures } : {}),
  };
}

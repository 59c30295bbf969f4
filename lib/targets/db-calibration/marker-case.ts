// Markers, provoked inside a load window (small ingest batches into usage_events, as the DB sampler
// samples): an autovacuum pass of usage_events and a CHECKPOINT (lib/targets/checkpoint.ts, the one
// settle takes). Each must come out of the server log through the page's own path (report/tails.ts
// tailsOf: logMarkers with the log_timezone the DB sampler read back, the progress snapshots, and
// attributeTails) within 1 s of its true time, and a freeze-second put at the event's second must be
// classified as that event.
//
// Why an autovacuum and not a manual VACUUM: PostgreSQL logs only autovacuum passes
// (log_autovacuum_min_duration); a manual VACUUM leaves no line, and a campaign's vacuum markers are
// autovacuum passes. It is forced by the table's own thresholds (insert threshold 50, scale 0) with
// autovacuum_naptime at 1 s for the calibration; its truth is pg_stat_user_tables.last_autovacuum,
// which the worker sets as the pass ends, just before it writes the completion line. Automatic analyze
// is held off (its threshold raised) so that it cannot put a second request-path pass beside the
// checkpoint. The CHECKPOINT's truth is the time the command returned: its completion line is written
// as the checkpointer wakes the caller (the rig's own clock: the same host for a local cluster).
import path from 'node:path';
import pg from 'pg';
import type { AttemptEvidence } from '../../evidence/report/load';
import { logTimeZoneOf, tailsOf } from '../../evidence/report/tails';
import { pgConfig } from '../../pg/connection';
import type { MarkerReading } from '../../protocol/db-calibration';
import { logMarkers, type LogMarker } from '../../protocol/postgres-log';
import type { RunReport } from '../../protocol/run-report';
import { checkpoint } from '../checkpoint';
import type { PostgresLogWindow } from '../target';
import type { ScratchDb } from './scratch-db';
import { sampleDuring, type ProvokedRegressions } from './sampling';

export interface MarkerCaseOptions {
  openLog: () => Promise<PostgresLogWindow>;
  dir: string;
  /** A label for the evidence files ('utc', 'zone'). */
  label: string;
  regressions?: ProvokedRegressions;
}

export interface MarkerCaseResult {
  vacuum: MarkerReading;
  checkpoint: MarkerReading;
  /** The zone the log was read in (the sampler's read-back). */
  zone: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const INGEST = `INSERT INTO usage_events (tenant_id, customer_id, meter_id, quantity, idempotency_key, properties)
  SELECT $1::bigint, $2::bigint, $3::bigint, 1, $4 || '-' || g, '{"rig_calibration": "markers"}'::jsonb FROM generate_series(1, 5) g`;

/** The marker of `kind` nearest to `atMs` (a vacuum only on usage_events). */
function nearest(markers: readonly LogMarker[], kind: 'vacuum' | 'checkpoint', atMs: number): LogMarker | null {
  const mine = markers.filter((m) => m.kind === kind && (kind === 'checkpoint' || m.table?.endsWith('usage_events')));
  return mine.sort((a, b) => Math.abs(a.to_ms - atMs) - Math.abs(b.to_ms - atMs))[0] ?? null;
}

export async function markerCase(db: ScratchDb, opts: MarkerCaseOptions): Promise<MarkerCaseResult> {
  const c = new pg.Client(pgConfig(db.url, { application_name: 'rig-dbcal-markers' }));
  const load = new pg.Client(pgConfig(db.url, { application_name: 'rig-dbcal-load' }));
  c.on('error', () => undefined);
  load.on('error', () => undefined);
  await c.connect();
  await load.connect();
  let loading = true;
  let loop: Promise<void> | undefined;
  try {
    await c.query('ALTER TABLE usage_events SET (autovacuum_analyze_threshold = 2000000000)');
    const countBefore = Number((await c.query<{ n: string }>("SELECT autovacuum_count::text AS n FROM pg_stat_user_tables WHERE relid = 'usage_events'::regclass")).rows[0].n);
    const log = await opts.openLog();
    const sampler = await sampleDuring(db.url, db.requestRole, 10, path.join(opts.dir, `markers-${opts.label}-db-samples.jsonl`), opts.regressions);
    const startedAt = new Date().toISOString();
    let k = 0;
    loop = (async () => {
      while (loading) {
        await load.query(INGEST, [db.tenantId, db.customerId, db.meterId, `m-${opts.label}-${Date.now()}-${k++}`]);
        await sleep(50);
      }
    })();
    await sleep(1000);
    await c.query('ALTER TABLE usage_events SET (autovacuum_vacuum_insert_threshold = 50, autovacuum_vacuum_insert_scale_factor = 0)');
    let vacuumMs: number | null = null;
    for (let i = 0; i < 300 && vacuumMs === null; i++) {
      await sleep(100);
      const r = (await c.query<{ n: string; at: string | null }>("SELECT autovacuum_count::text AS n, (extract(epoch FROM last_autovacuum) * 1000)::text AS at FROM pg_stat_user_tables WHERE relid = 'usage_events'::regclass")).rows[0];
      if (Number(r.n) > countBefore && r.at !== null) vacuumMs = Math.round(Number(r.at));
    }
    // One pass is the event: no further one near the checkpoint.
    await c.query('ALTER TABLE usage_events RESET (autovacuum_vacuum_insert_threshold, autovacuum_vacuum_insert_scale_factor)');
    await sleep(2500);
    const ck = await checkpoint(db.url, 'database calibration');
    const checkpointMs = ck.error ? null : Date.parse(ck.at);
    await sleep(1500);
    loading = false;
    await loop;
    const rows = await sampler.stop();
    const text = await log.read();

    // The page's own reading of this evidence.
    const evidence = { load: { started_at: startedAt }, postgresLog: text, db: rows, disk: null, cloud: undefined } as unknown as AttemptEvidence;
    const zone = logTimeZoneOf(evidence);
    const { markers, unplaced } = logMarkers(text, { timeZone: zone });
    const t0 = Date.parse(startedAt);
    const second = (ms: number | null) => (ms === null ? null : Math.floor((ms - t0) / 1000));
    const seconds = [second(vacuumMs), second(checkpointMs)];
    const report = { freeze_seconds: seconds.filter((s): s is number => s !== null), windows: [] } as unknown as RunReport;
    const tails = tailsOf(evidence, report, ['usage_events']);
    const classOf = (s: number | null) => (s === null ? null : (tails?.rows.find((r) => r.what === 'freeze-second' && r.from_s === s)?.class ?? null));
    const reading = (kind: 'vacuum' | 'checkpoint', trueMs: number | null, s: number | null): MarkerReading => {
      const m = trueMs === null ? null : nearest(markers, kind, trueMs);
      return { kind, trueMs, markerMs: m?.to_ms ?? null, classified: classOf(s), unplaced, markerLine: m?.line ?? null };
    };
    return { vacuum: reading('vacuum', vacuumMs, seconds[0]), checkpoint: reading('checkpoint', checkpointMs, seconds[1]), zone };
  } finally {
    loading = false;
    await loop?.catch(() => undefined);
    await c.query('ALTER TABLE usage_events RESET (autovacuum_analyze_threshold, autovacuum_vacuum_insert_threshold, autovacuum_vacuum_insert_scale_factor)').catch(() => undefined);
    await Promise.all([c.end().catch(() => undefined), load.end().catch(() => undefined)]);
  }
}

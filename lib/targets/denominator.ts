// The denominator: pgbench on the same database and row shape, into the fixtures' partition, so that
// "the service does N events/s" always stands beside "the database alone does M rows/s" (and "commits
// N one-row transactions/s"). Four legs (pgbench-script.ts): the commit rate at batch 1, then three at
// the campaign's batch. Each leg tags its rows and then checks that the table gained exactly the rows
// pgbench says it committed, in the intended partition and none in the other; it refuses to run when
// the fixtures are in the other mode. Passwords reach pgbench through PGPASSWORD, never its argv.
// Each leg starts settled (issue 31, defect 7): a VACUUM of usage_events (what the leg before wrote)
// and a CHECKPOINT (what that vacuum and the leg dirtied), so a later leg does not absorb the vacuum
// and checkpoint an earlier one caused. What each took is in the leg's result, with its place in the
// order the legs ran.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { libpqEnv, pgConfig } from '../pg/connection';
import { checkpoint, type CheckpointRecord } from './checkpoint';
import { assertMode, detectFixtures } from './fixtures-scope';
import { parsePgbench, type PgbenchSummary } from './pgbench-output';
import { LEGS, legBatch, legScript, rowsPerTransaction, type LegName, type PgbenchProtocol } from './pgbench-script';
import { reconcile } from './reconcile';
import type { PgbenchRunner, ProgressFn } from './target';

// The runner is the target's (Target.pgbenchRunner); the local one is re-exported for the callers that
// run pgbench on a local cluster directly (rig denominator, bench:target, the tests).
export type { PgbenchRunner };
export { localPgbenchRunner } from './local/pgbench-runner';

export interface DenominatorOptions {
  /** Owner and app role URLs, with passwords (kept in this process). */
  ownerUrl: string;
  appUrl: string;
  runner: PgbenchRunner;
  /** C: pgbench clients (the spec: 16). */
  clients: number;
  /** T: seconds per leg. */
  seconds: number;
  /** B: rows per transaction (the spec: 500). */
  batch: number;
  /** Asked-for mode; refused when it is not the fixtures'. Default: the fixtures' mode. */
  livemode?: boolean;
  tenantId?: string;
  meterKey?: string;
  legs?: readonly LegName[];
  /** Prefix of the legs' run tags (default a random one). */
  tag?: string;
  /**
   * pgbench -M, default 'prepared': the service runs its INSERTs as named prepared statements, so the
   * database's own ceiling is measured the same way (simple mode re-plans every INSERT: ~20 % slower at
   * batch 500, ~2x at batch 1 on the 2-core machine).
   */
  protocol?: PgbenchProtocol;
  /** Who runs each leg's CHECKPOINT (a superuser, or pg_checkpoint's member); default the owner. */
  checkpointUrl?: string;
  /** Awaited once the leg is settled, right before its pgbench starts (bench:target reads its WAL here). */
  beforeLeg?: (leg: LegName) => Promise<void>;
  onProgress?: ProgressFn;
}

/** How a leg was made to start settled: the VACUUM and the CHECKPOINT before it. */
export interface LegStart {
  vacuum_s: number;
  /** Set when the VACUUM failed (the leg then runs on what the leg before left). */
  vacuum_error?: string;
  checkpoint: CheckpointRecord;
}

export interface LegResult {
  leg: LegName;
  /** 1-based place in the order the legs ran. */
  order: number;
  settledBefore: LegStart;
  tag: string;
  role: string;
  protocol: PgbenchProtocol;
  clients: number;
  seconds: number;
  batch: number;
  transactions: number;
  failed: number;
  tps: number;
  latencyAvgMs: number;
  /** transactions x rows per transaction / measured duration (pgbench's tps x rows per transaction). */
  rowsPerSec: number;
  expectedRows: number;
  countedRows: number;
  otherModeRows: number;
}

export interface DenominatorResult {
  tenantId: string;
  livemode: boolean;
  legs: LegResult[];
}

export async function denominator(opts: DenominatorOptions): Promise<DenominatorResult> {
  for (const [k, v] of [
    ['clients', opts.clients],
    ['seconds', opts.seconds],
    ['batch', opts.batch],
  ] as const) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`denominator: ${k} must be a positive integer, not ${v}`);
  }
  const say = opts.onProgress ?? (() => {});
  const owner = new pg.Client(pgConfig(opts.ownerUrl, { application_name: 'rig-denominator' }));
  await owner.connect();
  try {
    const scope = await detectFixtures(owner, { tenantId: opts.tenantId, meterKey: opts.meterKey });
    const livemode = assertMode(scope, opts.livemode, 'the pgbench denominator');
    const legs = opts.legs ?? LEGS;
    let keyHash: string | undefined;
    if (legs.includes('rls-1row')) {
      keyHash = (
        await owner.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE tenant_id = $1 AND livemode = $2 ORDER BY id LIMIT 1', [
          scope.tenantId,
          livemode,
        ])
      ).rows[0]?.key_hash;
      if (!keyHash) throw new Error(`the rls-1row leg needs an API key of tenant ${scope.tenantId} with livemode=${livemode}: run bring-up (fixtures) first`);
    }
    const prefix = opts.tag ?? `pgb-${crypto.randomBytes(4).toString('hex')}`;
    const protocol = opts.protocol ?? 'prepared';
    const results: LegResult[] = [];
    for (const [i, leg] of legs.entries()) {
      const tag = `${prefix}-${leg}`;
      say(`pgbench ${leg}: VACUUM usage_events and CHECKPOINT first, so the leg starts settled`);
      const settledBefore = await settleLeg(owner, opts.checkpointUrl ?? opts.ownerUrl, leg, say);
      const script = path.join(opts.runner.scriptDir(), `${tag}.sql`);
      fs.writeFileSync(script, legScript(leg, { scope, tag, batch: opts.batch, keyHash, protocol }), { mode: 0o644 });
      // Host, port, role, database, password and TLS all through libpq's environment (lib/pg/connection.ts):
      // the password never reaches argv, and pgbench verifies the server as node-postgres does.
      const conn = libpqEnv(leg === 'rls-1row' ? opts.appUrl : opts.ownerUrl);
      const threads = Math.max(1, Math.min(opts.clients, os.cpus().length));
      const args = ['-n', '-M', protocol, '-c', String(opts.clients), '-j', String(threads), '-T', String(opts.seconds), '-f', script];
      const env: Record<string, string> = { ...conn, PGAPPNAME: `rig-pgbench-${leg}` };
      // Owner legs: the set_livemode trigger reads app.livemode; set it for the session at connect. The
      // RLS leg sets it per transaction from the key, as the service does.
      if (leg !== 'rls-1row') env.PGOPTIONS = `-c app.livemode=${livemode}`;
      say(`pgbench ${leg} (-M ${protocol}): ${opts.clients} clients, ${opts.seconds} s, batch ${legBatch(leg, opts.batch)}`);
      let out: { stdout: string; stderr: string };
      await opts.beforeLeg?.(leg);
      try {
        out = await opts.runner.run(args, env);
      } catch (err) {
        throw new Error(`pgbench leg ${leg} failed: ${(err as Error).message}`);
      }
      const s: PgbenchSummary = parsePgbench(out.stdout);
      if (s.failed > 0) throw new Error(`pgbench leg ${leg}: ${s.failed} transactions failed:\n${out.stderr.slice(-2000)}`);
      const perTx = rowsPerTransaction(leg, opts.batch);
      const expectedRows = s.transactions * perTx;
      const rec = await reconcile(owner, { runTag: tag, livemode, tenantId: scope.tenantId });
      if (rec.rows !== expectedRows || rec.otherModeRows !== 0) {
        throw new Error(
          `pgbench leg ${leg} does not reconcile: pgbench committed ${s.transactions} transactions x ${perTx} rows = ${expectedRows}, ` +
            `the livemode=${livemode} partition gained ${rec.rows} rows tagged ${tag}, the other partition ${rec.otherModeRows}`,
        );
      }
      const result: LegResult = {
        leg,
        order: i + 1,
        settledBefore,
        tag,
        role: conn.PGUSER,
        protocol,
        clients: opts.clients,
        seconds: opts.seconds,
        batch: perTx,
        transactions: s.transactions,
        failed: s.failed,
        tps: s.tps,
        latencyAvgMs: s.latencyAvgMs,
        rowsPerSec: s.tps * perTx,
        expectedRows,
        countedRows: rec.rows,
        otherModeRows: rec.otherModeRows,
      };
      say(`pgbench ${leg}: ${Math.round(result.rowsPerSec)} rows/s (${s.tps.toFixed(1)} tps, latency avg ${s.latencyAvgMs} ms), ${rec.rows} rows verified`);
      results.push(result);
    }
    return { tenantId: scope.tenantId, livemode, legs: results };
  } finally {
    await owner.end();
    opts.runner.cleanup();
  }
}

/** VACUUM what the leg before wrote, then CHECKPOINT what that dirtied: the leg starts with no debt. */
async function settleLeg(owner: pg.Client, checkpointUrl: string, leg: LegName, say: ProgressFn): Promise<LegStart> {
  const t0 = Date.now();
  // A VACUUM after a long leg, or the CHECKPOINT of what it dirtied, can outlast a heartbeat timeout.
  const beat = setInterval(() => say(`pgbench ${leg}: settling before it (${Math.round((Date.now() - t0) / 1000)} s)`), 10_000);
  try {
    return await settleLegNow(owner, checkpointUrl, leg, t0);
  } finally {
    clearInterval(beat);
  }
}

async function settleLegNow(owner: pg.Client, checkpointUrl: string, leg: LegName, t0: number): Promise<LegStart> {
  let vacuumError: string | undefined;
  try {
    await owner.query('VACUUM usage_events');
  } catch (err) {
    vacuumError = (err as Error).message;
  }
  const vacuumS = Math.round(Date.now() - t0) / 1000;
  const ckpt = await checkpoint(checkpointUrl, `before pgbench leg ${leg}`);
  return { vacuum_s: vacuumS, ...(vacuumError ? { vacuum_error: vacuumError } : {}), checkpoint: ckpt };
}

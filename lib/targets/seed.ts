// Seeding: history rows COPYed into usage_events, in the fixtures' partition. The COPY session sets
// app.livemode to the fixtures' mode (the set_livemode trigger overwrites the column from it, COPY
// included), and a requested mode that differs is refused. Then the table is left to settle until
// autovacuum and autoanalyze are idle. rows/s counts the COPY only; settling is reported apart.
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { exactNumber } from './db';
import { assertMode, detectFixtures, type FixtureScope } from './fixtures-scope';
import { SEED_COLUMNS, SEED_TAG_PROPERTY, seedRows } from './seed-rows';
import { settle, type SettleResult, type SettleState } from './settle';

export interface SeedProgress {
  phase: 'copy' | 'settle';
  rows: number;
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
  /** Default: a fresh random tag. */
  tag?: string;
  /** Skip the settle phase (tests of the COPY alone; a campaign always settles). */
  settle?: false | { timeoutMs?: number; pollMs?: number };
  onProgress?: (p: SeedProgress) => void;
  /** How often onProgress is called during the COPY, default 500 ms. */
  progressEveryMs?: number;
}

export interface SeedResult {
  tag: string;
  rows: number;
  tenantId: string;
  livemode: boolean;
  copySeconds: number;
  rowsPerSec: number;
  /** Rows with the seed tag counted in the intended partition afterwards (== rows). */
  verifiedRows: number;
  settle?: SettleResult;
}

export function newSeedTag(): string {
  return `seed-${new Date().toISOString().slice(0, 10)}-${crypto.randomBytes(4).toString('hex')}`;
}

export async function seed(opts: SeedOptions): Promise<SeedResult> {
  if (!Number.isSafeInteger(opts.rows) || opts.rows < 1) throw new Error(`rows must be a positive integer, not ${opts.rows}`);
  const days = opts.days ?? 30;
  if (!(days > 0)) throw new Error(`days must be positive, not ${days}`);
  const tag = opts.tag ?? newSeedTag();
  const client = new pg.Client({ connectionString: opts.ownerUrl, application_name: 'rig-seed' });
  await client.connect();
  try {
    const scope: FixtureScope = await detectFixtures(client, { tenantId: opts.tenantId, meterKey: opts.meterKey });
    const livemode = assertMode(scope, opts.livemode, 'seeding');
    // The trigger reads this for every row, COPY included: it decides the partition, not our columns.
    await client.query(`SELECT set_config('app.livemode', $1, false)`, [String(livemode)]);
    const total = opts.rows;
    let done = 0;
    const t0 = process.hrtime.bigint();
    const elapsedMs = () => Number(process.hrtime.bigint() - t0) / 1e6;
    let lastReport = 0;
    const every = opts.progressEveryMs ?? 500;
    const report = (phase: SeedProgress['phase']) => {
      const ms = elapsedMs();
      opts.onProgress?.({ phase, rows: done, total, rowsPerSec: ms > 0 ? (done * 1000) / ms : 0, elapsedMs: ms });
    };
    const source = Readable.from(
      (function* () {
        for (const chunk of seedRows({ scope, rows: total, tag, days, end: new Date() })) {
          done += chunk.rows;
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
    const copy = client.query(copyFrom(`COPY usage_events (${SEED_COLUMNS.join(', ')}) FROM STDIN`));
    await pipeline(source, copy);
    const copyMs = elapsedMs();
    report('copy');
    if (copy.rowCount !== total) throw new Error(`COPY reported ${copy.rowCount} rows, ${total} were sent`);

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
      throw new Error(`seed ${tag}: ${verified} rows found in the livemode=${livemode} partition, ${total} were copied`);
    }
    const result: SeedResult = {
      tag,
      rows: total,
      tenantId: scope.tenantId,
      livemode,
      copySeconds: copyMs / 1000,
      rowsPerSec: (total * 1000) / copyMs,
      verifiedRows: verified,
    };
    if (opts.settle !== false) {
      result.settle = await settle(client, {
        timeoutMs: opts.settle?.timeoutMs,
        pollMs: opts.settle?.pollMs,
        onProgress: (state, ms) => opts.onProgress?.({ phase: 'settle', rows: total, total, rowsPerSec: result.rowsPerSec, elapsedMs: ms, settle: state }),
      });
    }
    return result;
  } finally {
    await client.end();
  }
}

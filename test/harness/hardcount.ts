// Throw-away clusters with the reference schema: roles and default privileges made as the superuser,
// then the migrations run as the owner, in that order (the spec's trap).
//
// hardcountDb() binds the cluster to where it is called, like throwAwayCluster: inside a test, it ends
// with that test; at the top level of a file (call it there, not in a `before` hook, whose end would
// end the cluster), it is shared by the file's tests and ends with the file. Anything that talks to the
// cluster (a service, a pool) is registered with db.defer(), which runs before the cluster stops, last
// registered first, so that nothing sees its connections cut.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import pg from 'pg';
import { createFixtures, type Fixtures } from '../../lib/targets/bringup/fixtures';
import { PgCluster } from '../../lib/targets/local/pg-cluster';
import { migrate } from '../../reference/migrate';
import { setupRoles } from '../../reference/roles';
import { startService, type RunningService } from '../../reference/service';

export interface HardcountDb {
  cluster: PgCluster;
  /** superuser, database hardcount */
  superUrl: string;
  ownerUrl: string;
  appUrl: string;
  /** Run `fn` when the test (or file) ends, before the cluster is stopped. */
  defer(fn: () => Promise<unknown> | unknown): void;
}

export const TEST_OWNER_PASSWORD = 'owner-pw-for-tests';
export const TEST_APP_PASSWORD = 'app-pw-for-tests';

const live = new Set<PgCluster>();
process.on('exit', () => {
  for (const c of live) {
    c.stopSync();
    fs.rmSync(c.info.dir, { recursive: true, force: true });
  }
});

export interface HardcountDbOptions {
  migrate?: boolean;
  parameters?: Record<string, string | number | boolean>;
  superuserPassword?: string;
}

/** Starts making the cluster at once; `after` is registered synchronously, in the caller's context. */
export function hardcountDb(opts: HardcountDbOptions = {}): Promise<HardcountDb> {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  after(async () => {
    const errors: unknown[] = [];
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length) throw errors[0];
  });
  const ready = (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-pg-'));
    fs.chmodSync(dir, 0o755);
    const cluster = await PgCluster.create({ dir, parameters: opts.parameters, superuserPassword: opts.superuserPassword });
    live.add(cluster);
    cleanups.push(async () => {
      await cluster.destroy();
      live.delete(cluster);
    });
    const su = opts.superuserPassword ? cluster.url('postgres', 'postgres', opts.superuserPassword) : cluster.url();
    const { ownerUrl, appUrl } = await setupRoles(su, {
      ownerPassword: TEST_OWNER_PASSWORD,
      appPassword: TEST_APP_PASSWORD,
    });
    if (opts.migrate !== false) await migrate(ownerUrl);
    return {
      cluster,
      superUrl: opts.superuserPassword ? cluster.url('hardcount', 'postgres', opts.superuserPassword) : cluster.url('hardcount'),
      ownerUrl,
      appUrl,
      defer: (fn: () => Promise<unknown> | unknown) => void cleanups.push(fn),
    };
  })();
  // Marked handled here (a top-level call is awaited only later, by the tests); awaiting it still throws.
  ready.catch(() => undefined);
  return ready;
}

/**
 * The file's cluster with fixtures (`customers` of them) and the reference service on it, the service
 * closed before the cluster stops. Call in a `before` hook with the top-level hardcountDb() promise.
 */
export async function referenceServiceOn(dbReady: Promise<HardcountDb>, customers = 20): Promise<{ db: HardcountDb; fx: Fixtures; svc: RunningService }> {
  const db = await dbReady;
  const fx = await createFixtures(db.ownerUrl, { customers });
  const svc = await startService({ databaseUrl: db.appUrl });
  db.defer(() => svc.close());
  return { db, fx, svc };
}

/** One query on its own connection (opened and closed around it): for tests that check a database now and then. */
export async function queryOnce<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

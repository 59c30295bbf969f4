// Schema migrations: reference/migrations/NNN_name.sql, applied in order, each in its own transaction,
// and recorded in schema_migrations. Run as the owner role only: objects made by any other role would
// not be owned by hardcount_owner, so the default privileges (roles.ts) would not grant them to the app
// role, and the cluster would migrate cleanly and then fail every request (the spec's trap).
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { pgConfig } from '../lib/pg/connection';

// The SQL files sit beside this file in the sources; a tsc build (dist/reference/) does not copy them,
// so from there they are found in the source tree.
export const MIGRATIONS_DIR = fs.existsSync(path.join(__dirname, 'migrations'))
  ? path.join(__dirname, 'migrations')
  : path.resolve(__dirname, '..', '..', 'reference', 'migrations');

export interface Migration {
  version: number;
  name: string;
  file: string;
}

export interface MigrateResult {
  /** Versions applied by this call, in order (empty when the schema was current). */
  applied: number[];
  /** The highest version recorded after the call. */
  current: number;
}

const FILE_RE = /^(\d{3})_([a-z0-9_]+)\.sql$/;
// Any constant works; it only has to be the same for every migrator of this database.
const ADVISORY_LOCK = 0x6863_6d67; // "hcmg"

/** The migration files, ordered by version. Throws on a badly named file or a repeated version. */
export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const out: Migration[] = [];
  for (const file of fs.readdirSync(dir)) {
    if (!file.endsWith('.sql')) continue;
    const m = FILE_RE.exec(file);
    if (!m) throw new Error(`migration file ${file} is not named NNN_name.sql`);
    out.push({ version: Number(m[1]), name: m[2], file: path.join(dir, file) });
  }
  out.sort((a, b) => a.version - b.version);
  for (let i = 1; i < out.length; i++) {
    if (out[i].version === out[i - 1].version) throw new Error(`two migrations with version ${out[i].version}`);
  }
  return out;
}

/** Apply every pending migration as the owner role. Safe to run concurrently (an advisory lock serializes). */
export async function migrate(ownerUrl: string, opts: { dir?: string } = {}): Promise<MigrateResult> {
  const migrations = listMigrations(opts.dir);
  const client = new pg.Client(pgConfig(ownerUrl, { application_name: 'hardcount-migrate' }));
  await client.connect();
  try {
    // Refuse to migrate as anyone but the database's owner (see the header).
    const who = await client.query<{ me: string; owner: string }>(
      `SELECT current_user AS me, pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = current_database()`,
    );
    const { me, owner } = who.rows[0];
    if (me !== owner) {
      throw new Error(
        `migrate must run as the database owner (${owner}), not ${me}: objects it made would not be owned by ` +
          `${owner}, and the app role's default privileges would not cover them`,
      );
    }
    await client.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCK]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version    int PRIMARY KEY,
        name       text,
        applied_at timestamptz DEFAULT now()
      )`);
      const done = new Set(
        (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
      );
      const known = new Set(migrations.map((m) => m.version));
      const unknown = [...done].filter((v) => !known.has(v)).sort((a, b) => a - b);
      if (unknown.length) {
        throw new Error(`the database has migration version(s) ${unknown.join(', ')} that this code does not know`);
      }
      const applied: number[] = [];
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        const sql = fs.readFileSync(m.file, 'utf8');
        await client.query('BEGIN');
        try {
          await client.query(sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())', [
            m.version,
            m.name,
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${path.basename(m.file)} failed: ${(err as Error).message}`);
        }
        applied.push(m.version);
      }
      const current = migrations.length ? Math.max(...migrations.map((m) => m.version)) : 0;
      return { applied, current };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCK]);
    }
  } finally {
    await client.end();
  }
}

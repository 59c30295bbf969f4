// Roles, database and default privileges, made as the cluster's superuser (or RDS's master user)
// BEFORE the first migration. The order is the spec's trap: CREATE ROLE hardcount_app alone is not
// enough, because every table the owner creates later gets its grant from ALTER DEFAULT PRIVILEGES.
// Made afterwards, the cluster migrates cleanly and then answers 500 on ingest.
import pg from 'pg';
import { asRole, onDatabase, pgConfig } from '../lib/pg/connection';
import { APP_ROLE, DATABASE, OWNER_ROLE } from './schema';
import { scramSha256Verifier } from './scram';

export interface RoleSetupOptions {
  /** Password for hardcount_owner (runs migrations, owns everything). */
  ownerPassword: string;
  /** Password for hardcount_app (the service's request path). */
  appPassword: string;
  /** Database to create; default `hardcount`. */
  database?: string;
}

export interface RoleSetupResult {
  /** The superuser URL with user, password and database replaced: the owner's. */
  ownerUrl: string;
  /** The same for the app role. */
  appUrl: string;
  database: string;
}

/** Replace user, password and database in a libpq URL (its TLS parameters are kept). */
export const roleUrl = asRole;

/** The attributes both roles must have (pg_roles columns): row-level security must bind the app role, and an owner that bypassed it by attribute would hide that from the bring-up checks. */
const WANTED: Record<string, { column: 'rolcanlogin' | 'rolsuper' | 'rolbypassrls' | 'rolcreatedb' | 'rolcreaterole'; on: boolean }> = {
  LOGIN: { column: 'rolcanlogin', on: true },
  SUPERUSER: { column: 'rolsuper', on: false },
  BYPASSRLS: { column: 'rolbypassrls', on: false },
  CREATEDB: { column: 'rolcreatedb', on: false },
  CREATEROLE: { column: 'rolcreaterole', on: false },
};
/** Only a superuser may name these at all (PostgreSQL 15 AlterRole: even NOSUPERUSER as a non-superuser is refused). */
const SUPERUSER_ONLY = new Set(['SUPERUSER', 'BYPASSRLS']);

/**
 * Create the role, or bring an existing one to the wanted attributes naming ONLY those that differ:
 * a retried prepare on RDS runs as the master user, who is not a superuser, and PostgreSQL refuses a
 * non-superuser's ALTER ROLE that names SUPERUSER or BYPASSRLS even to turn them off. CREATE ROLE
 * names neither: NOSUPERUSER and NOBYPASSRLS are the defaults.
 */
async function ensureRole(admin: pg.Client, role: string, password: string): Promise<void> {
  const id = admin.escapeIdentifier(role);
  const verifier = admin.escapeLiteral(scramSha256Verifier(password));
  const found = await admin.query<Record<string, boolean>>(
    'SELECT rolcanlogin, rolsuper, rolbypassrls, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = $1',
    [role],
  );
  if (found.rowCount === 0) {
    await admin.query(`CREATE ROLE ${id} LOGIN NOCREATEDB NOCREATEROLE PASSWORD ${verifier}`);
    return;
  }
  const current = found.rows[0];
  const differ = Object.entries(WANTED).filter(([, w]) => current[w.column] !== w.on);
  const me = (await admin.query<{ rolsuper: boolean }>('SELECT rolsuper FROM pg_roles WHERE rolname = current_user')).rows[0];
  const needSuper = differ.filter(([name]) => SUPERUSER_ONLY.has(name));
  if (needSuper.length && !me.rolsuper) {
    throw new Error(
      `role ${role} has ${needSuper.map(([n]) => n).join(' and ')}, which only a superuser can remove, and this login is not one ` +
        `(RDS's master user never is): as a superuser run ALTER ROLE ${role} ${needSuper.map(([n]) => `NO${n}`).join(' ')}, or drop the role and prepare again`,
    );
  }
  const clauses = differ.map(([name, w]) => (w.on ? name : `NO${name}`));
  await admin.query(`ALTER ROLE ${id} ${clauses.join(' ')} PASSWORD ${verifier}`);
}

/**
 * Create (or bring up to date: it is idempotent) hardcount_owner and hardcount_app with the given
 * passwords, the database owned by the owner, and the owner's default privileges for the app role.
 * `superuserUrl` may name any database of the cluster; the function connects to the new one itself.
 */
export async function setupRoles(superuserUrl: string, opts: RoleSetupOptions): Promise<RoleSetupResult> {
  const database = opts.database ?? DATABASE;
  const admin = new pg.Client(pgConfig(superuserUrl, { application_name: 'hardcount-roles' }));
  await admin.connect();
  try {
    const id = (s: string) => admin.escapeIdentifier(s);
    for (const [role, password] of [
      [OWNER_ROLE, opts.ownerPassword],
      [APP_ROLE, opts.appPassword],
    ] as const) {
      await ensureRole(admin, role, password);
    }
    // On RDS the master user is not a superuser: it must be a member of the owner role to create a
    // database owned by it and to alter the owner's default privileges.
    const me = await admin.query<{ rolsuper: boolean; rolname: string }>(
      'SELECT rolsuper, rolname FROM pg_roles WHERE rolname = current_user',
    );
    if (!me.rows[0].rolsuper) await admin.query(`GRANT ${id(OWNER_ROLE)} TO ${id(me.rows[0].rolname)}`);

    const db = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (db.rowCount === 0) {
      await admin.query(`CREATE DATABASE ${id(database)} OWNER ${id(OWNER_ROLE)} ENCODING 'UTF8' TEMPLATE template0`);
    } else {
      await admin.query(`ALTER DATABASE ${id(database)} OWNER TO ${id(OWNER_ROLE)}`);
    }
    await admin.query(`GRANT CONNECT ON DATABASE ${id(database)} TO ${id(APP_ROLE)}`);
  } finally {
    await admin.end();
  }

  // Default privileges are per database: set them inside the new one.
  const inDb = new pg.Client(pgConfig(onDatabase(superuserUrl, database), { application_name: 'hardcount-roles' }));
  await inDb.connect();
  try {
    const o = inDb.escapeIdentifier(OWNER_ROLE);
    const a = inDb.escapeIdentifier(APP_ROLE);
    await inDb.query(`GRANT USAGE ON SCHEMA public TO ${a}`);
    await inDb.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${o}`);
    await inDb.query(
      `ALTER DEFAULT PRIVILEGES FOR ROLE ${o} IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${a}`,
    );
    await inDb.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${o} IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ${a}`);
    // Functions are executable by PUBLIC by default; the owner's (auth_api_key is SECURITY DEFINER) go to
    // the app role only. A global default cannot be revoked per schema, hence no IN SCHEMA here.
    await inDb.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${o} REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC`);
    await inDb.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${o} IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO ${a}`);
  } finally {
    await inDb.end();
  }

  return {
    ownerUrl: roleUrl(superuserUrl, OWNER_ROLE, opts.ownerPassword, database),
    appUrl: roleUrl(superuserUrl, APP_ROLE, opts.appPassword, database),
    database,
  };
}

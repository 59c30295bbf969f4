// Roles, database and default privileges, made as the cluster's superuser (or RDS's master user)
// BEFORE the first migration. The order is the spec's trap: CREATE ROLE hardcount_app alone is not
// enough, because every table the owner creates later gets its grant from ALTER DEFAULT PRIVILEGES.
// Made afterwards, the cluster migrates cleanly and then answers 500 on ingest.
import pg from 'pg';
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

/** Replace user, password and database in a libpq URL. */
export function roleUrl(baseUrl: string, user: string, password: string, database: string): string {
  const u = new URL(baseUrl);
  u.username = encodeURIComponent(user);
  u.password = encodeURIComponent(password);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

/**
 * Create (or bring up to date: it is idempotent) hardcount_owner and hardcount_app with the given
 * passwords, the database owned by the owner, and the owner's default privileges for the app role.
 * `superuserUrl` may name any database of the cluster; the function connects to the new one itself.
 */
export async function setupRoles(superuserUrl: string, opts: RoleSetupOptions): Promise<RoleSetupResult> {
  const database = opts.database ?? DATABASE;
  const admin = new pg.Client({ connectionString: superuserUrl, application_name: 'hardcount-roles' });
  await admin.connect();
  try {
    const lit = (s: string) => admin.escapeLiteral(s);
    const id = (s: string) => admin.escapeIdentifier(s);
    const existing = new Set(
      (
        await admin.query<{ rolname: string }>('SELECT rolname FROM pg_roles WHERE rolname = ANY($1)', [
          [OWNER_ROLE, APP_ROLE],
        ])
      ).rows.map((r) => r.rolname),
    );
    // Explicit NOSUPERUSER NOBYPASSRLS: row-level security must bind the app role, and an owner that
    // bypassed it by attribute would hide that from the bring-up checks.
    const attrs = 'LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE';
    for (const [role, password] of [
      [OWNER_ROLE, opts.ownerPassword],
      [APP_ROLE, opts.appPassword],
    ] as const) {
      const verb = existing.has(role) ? 'ALTER' : 'CREATE';
      await admin.query(`${verb} ROLE ${id(role)} ${attrs} PASSWORD ${lit(scramSha256Verifier(password))}`);
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
  const inDb = new pg.Client({
    connectionString: roleUrlKeepingAuth(superuserUrl, database),
    application_name: 'hardcount-roles',
  });
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

function roleUrlKeepingAuth(baseUrl: string, database: string): string {
  const u = new URL(baseUrl);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

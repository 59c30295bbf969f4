// The one place a database URL becomes a connection: node-postgres options (pgConfig) and libpq's
// environment for pgbench and psql (libpqEnv), with the same TLS meaning for both. Every client the
// rig opens goes through here, so what a URL's `sslmode` means cannot differ between the samplers,
// the service, the migrations and pgbench.
//
// Why not node-postgres's own connectionString: it maps sslmode=prefer/require/verify-ca all to one
// behaviour (pg-connection-string 2.x warns about it), it has no fallback like libpq's `prefer` (RDS
// with rds.force_ssl=1 then refuses every connection), and with `connectionString` set it overrides
// any `ssl` given beside it. So the URL is parsed here and node-postgres gets discrete fields.
//
// URLs are libpq URIs: postgres://user:password@host:port/db?sslmode=verify-full&sslrootcert=/path.
// `host` as a query parameter names a Unix-socket folder (the local cluster's bootstrap superuser).
import fs from 'node:fs';
import net from 'node:net';
import type pg from 'pg';

export type SslMode = 'disable' | 'require' | 'verify-ca' | 'verify-full';

/** What a URL asks for, parsed and checked (no file read yet). */
export interface ConnectionParts {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** Absent: no TLS (a URL without sslmode, as node-postgres has always read it). */
  sslmode?: SslMode;
  /** The CA file for verify-ca/verify-full ('system': the platform's trust store, as libpq 16's sslrootcert=system). */
  sslrootcert?: string;
  applicationName?: string;
  connectTimeoutSeconds?: number;
}

const KNOWN_PARAMS = new Set(['sslmode', 'sslrootcert', 'host', 'application_name', 'connect_timeout']);

/** Where a refusal says the URL came from, never the URL itself (it carries a password). */
function refuse(what: string): never {
  throw new Error(`database URL: ${what}`);
}

/** Parses a libpq URI; refuses what this module would otherwise silently ignore, naming the parameter and the fix. */
export function connectionParts(url: string): ConnectionParts {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    refuse('not a URL: give postgres://user:password@host:port/database');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') refuse(`scheme ${u.protocol} is not postgres:`);
  for (const k of u.searchParams.keys()) {
    if (!KNOWN_PARAMS.has(k)) refuse(`parameter "${k}" is not understood here (known: ${[...KNOWN_PARAMS].join(', ')}): remove it`);
  }
  const mode = u.searchParams.get('sslmode') ?? undefined;
  if (mode === 'prefer' || mode === 'allow') {
    refuse(
      `sslmode=${mode} cannot be honoured: node-postgres does not fall back between TLS and plaintext as libpq does, ` +
        'so the service and pgbench could disagree. Use sslmode=verify-full with sslrootcert=/path/to/ca.pem (or disable on a loopback test cluster)',
    );
  }
  if (mode !== undefined && !['disable', 'require', 'verify-ca', 'verify-full'].includes(mode)) {
    refuse(`sslmode=${mode} is not one of disable, require, verify-ca, verify-full`);
  }
  const rootcert = u.searchParams.get('sslrootcert') ?? undefined;
  if ((mode === 'verify-ca' || mode === 'verify-full') && !rootcert) {
    refuse(`sslmode=${mode} needs sslrootcert=/path/to/ca.pem (the CA that signed the server's certificate), or sslrootcert=system`);
  }
  const timeout = u.searchParams.get('connect_timeout');
  if (timeout !== null && !/^\d+$/.test(timeout)) refuse(`connect_timeout=${timeout} is not a whole number of seconds`);
  const socketDir = u.searchParams.get('host');
  return {
    host: socketDir ?? decodeURIComponent(u.hostname.replace(/^\[|\]$/g, '')),
    port: u.port ? Number(u.port) : 5432,
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username),
    ...(mode ? { sslmode: mode as SslMode } : {}),
    ...(rootcert ? { sslrootcert: rootcert } : {}),
    ...(u.searchParams.get('application_name') ? { applicationName: u.searchParams.get('application_name')! } : {}),
    ...(timeout !== null ? { connectTimeoutSeconds: Number(timeout) } : {}),
  };
}

/** node-postgres's `ssl` for the parts: false, or the TLS options with libpq's meaning of sslmode. */
export function nodeSsl(p: ConnectionParts): pg.ClientConfig['ssl'] {
  if (!p.sslmode || p.sslmode === 'disable') return false;
  // require: encrypted, not verified (libpq's meaning without a root certificate).
  if (p.sslmode === 'require') return { rejectUnauthorized: false };
  const ca = p.sslrootcert === 'system' ? undefined : readCa(p.sslrootcert!);
  const verifyName = p.sslmode === 'verify-full';
  return {
    rejectUnauthorized: true,
    ...(ca ? { ca } : {}),
    // SNI must not be an IP (RFC 6066); Node then checks the certificate against the host itself.
    ...(verifyName && net.isIP(p.host) === 0 ? { servername: p.host } : {}),
    // verify-ca: the chain is checked, the name is not.
    ...(verifyName ? {} : { checkServerIdentity: () => undefined }),
  };
}

function readCa(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    return refuse(`sslrootcert ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): put the CA bundle there, or fix the path`);
  }
}

/** node-postgres options for a URL (Client or Pool); `extra` adds pool sizes, application_name, timeouts. */
export function pgConfig(url: string, extra: Omit<pg.PoolConfig, 'connectionString' | 'ssl' | 'host' | 'port' | 'user' | 'password' | 'database'> = {}): pg.PoolConfig {
  const p = connectionParts(url);
  return {
    host: p.host,
    port: p.port,
    user: p.user,
    ...(p.password ? { password: p.password } : {}),
    database: p.database,
    ssl: nodeSsl(p),
    ...(p.applicationName ? { application_name: p.applicationName } : {}),
    ...(p.connectTimeoutSeconds ? { connectionTimeoutMillis: p.connectTimeoutSeconds * 1000 } : {}),
    ...extra,
  };
}

/**
 * libpq's environment for the same connection (pgbench, psql): the password in PGPASSWORD, never an
 * argument, and PGSSLMODE/PGSSLROOTCERT so libpq verifies exactly what node-postgres does. Without
 * sslmode the connection is plaintext, as for node-postgres: PGSSLMODE=disable, not libpq's `prefer`.
 */
export function libpqEnv(url: string): Record<string, string> {
  const p = connectionParts(url);
  return {
    PGHOST: p.host,
    PGPORT: String(p.port),
    PGUSER: p.user,
    PGDATABASE: p.database,
    ...(p.password ? { PGPASSWORD: p.password } : {}),
    PGSSLMODE: p.sslmode ?? 'disable',
    ...(p.sslrootcert ? { PGSSLROOTCERT: p.sslrootcert } : {}),
    ...(p.connectTimeoutSeconds ? { PGCONNECT_TIMEOUT: String(p.connectTimeoutSeconds) } : {}),
  };
}

/** The URL with verify-full TLS against `caFile` (replacing any sslmode/sslrootcert it had). */
export function withVerifyFull(url: string, caFile: string): string {
  const u = new URL(url);
  u.searchParams.set('sslmode', 'verify-full');
  u.searchParams.set('sslrootcert', caFile);
  return u.toString();
}

/** The same server and TLS settings as another role on another database (the query string is kept). */
export function asRole(url: string, user: string, password: string, database: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = encodeURIComponent(password);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

/** The same login on another database (the query string is kept). */
export function onDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

// RDS-fidelity mode of a local cluster (issue 23, spec `local.rdsFidelity`): the constraints a rig
// meets on RDS for PostgreSQL, here, so that the roles, migrations, bring-up checks, samplers and
// pgbench are tested against them before a campaign pays for RDS:
// - TLS required (rds.force_ssl=1 on RDS 15+): pg_hba.conf has `hostssl` lines only, so a plaintext
//   connection is refused ("no pg_hba.conf entry ... no encryption"), and the server's certificate
//   comes from a test CA (test-ca.ts) that clients verify with sslmode=verify-full;
// - the rig's admin is not a superuser: LOGIN CREATEDB CREATEROLE NOREPLICATION, as RDS's master user
//   (AWS's rds_superuser page gives its CREATE ROLE), a member of pg_monitor and pg_signal_backend as
//   rds_superuser's members are. The bootstrap superuser is for cluster setup only (the admin itself,
//   a variant's ALTER SYSTEM, which on RDS is a parameter-group change);
// - the settings RDS keeps for itself are refused: a DB parameter group answers "The parameter X
//   cannot be modified", and as a non-superuser the admin's ALTER SYSTEM and SET of a superuser-only
//   setting are refused by PostgreSQL itself.
import pg from 'pg';
import { pgConfig } from '../../pg/connection';
import { scramSha256Verifier } from '../../../reference/scram';
import type { ClusterTls } from './test-ca';

/**
 * Settings the rig never passes to a cluster in fidelity mode: the server's own files, sockets,
 * listening address and TLS (RDS manages them; the fidelity cluster's are set here), and WAL archiving
 * (RDS's backups own archive_command). Not RDS's whole list, only what a campaign could plausibly ask.
 */
export const RDS_RESERVED_SETTINGS = [
  'listen_addresses',
  'port',
  'unix_socket_directories',
  'data_directory',
  'config_file',
  'hba_file',
  'ident_file',
  'ssl',
  'ssl_cert_file',
  'ssl_key_file',
  'ssl_ca_file',
  'archive_mode',
  'archive_command',
] as const;

/** Throws, as RDS's ModifyDBParameterGroup would, when `parameters` set a reserved setting. */
export function refuseReservedSettings(parameters: Record<string, unknown>, field = 'database'): void {
  const reserved = Object.keys(parameters).filter((k) => (RDS_RESERVED_SETTINGS as readonly string[]).includes(k));
  if (reserved.length) {
    throw new Error(
      `${reserved.map((k) => `${field}.${k}`).join(', ')}: RDS reserves ${reserved.length > 1 ? 'these settings' : 'this setting'} ` +
        `(a DB parameter group answers "The parameter ${reserved[0]} cannot be modified"), and local.rdsFidelity refuses ${reserved.length > 1 ? 'them' : 'it'} the same way: remove ${reserved.length > 1 ? 'them' : 'it'}`,
    );
  }
}

/** postgresql.conf lines that make the cluster require TLS with the test CA's certificate. */
export function tlsParameters(tls: ClusterTls): Record<string, string> {
  return { ssl: 'on', ssl_cert_file: tls.certFile, ssl_key_file: tls.keyFile, ssl_min_protocol_version: 'TLSv1.2' };
}

/**
 * pg_hba.conf: TCP over TLS only, with a password (scram-sha-256, RDS's default). The Unix socket is
 * trusted for pg_ctl and the cluster's OS user only (RDS has no socket; nothing of the rig uses it).
 */
export function fidelityHba(auth: 'scram-sha-256' | 'trust' = 'scram-sha-256'): string {
  return [
    '# RDS-fidelity mode (lib/targets/local/rds-fidelity.ts): no "host" line, so plaintext TCP is refused',
    'local    all  all                 trust',
    `hostssl  all  all  127.0.0.1/32   ${auth}`,
    '',
  ].join('\n');
}

/** Creates the admin role as RDS creates its master user (idempotent: an existing one gets its password again). */
export async function createRdsAdmin(superuserUrl: string, admin: string, password: string | undefined): Promise<void> {
  const c = new pg.Client(pgConfig(superuserUrl, { application_name: 'rig-rds-fidelity' }));
  await c.connect();
  try {
    const id = c.escapeIdentifier(admin);
    const pw = password === undefined ? '' : ` PASSWORD ${c.escapeLiteral(scramSha256Verifier(password))}`;
    const exists = (await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [admin])).rowCount;
    await c.query(`${exists ? 'ALTER' : 'CREATE'} ROLE ${id} LOGIN NOSUPERUSER INHERIT CREATEDB CREATEROLE NOREPLICATION NOBYPASSRLS${pw}`);
    // The DB sampler reads pg_stat_activity's wait events of every role, as RDS's master can.
    await c.query(`GRANT pg_monitor, pg_signal_backend TO ${id}`);
  } finally {
    await c.end();
  }
}

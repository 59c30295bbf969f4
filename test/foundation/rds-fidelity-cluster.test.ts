// A cluster in RDS-fidelity mode (lib/targets/local/rds-fidelity.ts) behaves as RDS 15+ with
// rds.force_ssl=1 does, through both client libraries the rig uses (node-postgres and libpq, via
// lib/pg/connection.ts): plaintext is refused, verify-full against the cluster's test CA succeeds,
// a CA that did not sign its certificate and a host name it was not issued for are refused. Its admin
// is not a superuser, so ALTER SYSTEM and superuser-only settings are refused as on RDS.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { libpqEnv, pgConfig, withVerifyFull } from '../../lib/pg/connection';
import { refuseReservedSettings } from '../../lib/targets/local/rds-fidelity';
import { makeClusterTls } from '../../lib/targets/local/test-ca';
import { throwAwayCluster } from '../harness/pg';

const ADMIN = 'rig_admin';
const ADMIN_PW = 'admin-pw-not-secret';

async function query(config: pg.ClientConfig, sql: string): Promise<unknown[]> {
  const c = new pg.Client(config);
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

/** Runs psql as the cluster's OS user with libpq's environment for `url` (plus overrides). */
function psql(cluster: Awaited<ReturnType<typeof throwAwayCluster>>, url: string, extra: Record<string, string> = {}) {
  return cluster.exec('psql', ['-X', '-A', '-t', '-c', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'], {
    env: { ...process.env, HOME: os.tmpdir(), LC_ALL: 'C', ...libpqEnv(url), ...extra },
  });
}

test('RDS-fidelity cluster: TLS required and verified, the admin is not a superuser', async (t) => {
  const cluster = await throwAwayCluster({ superuserPassword: 'su-pw', rdsFidelity: { admin: ADMIN, adminPassword: ADMIN_PW } });
  const url = cluster.url('postgres', ADMIN, ADMIN_PW);
  assert.match(url, /sslmode=verify-full/);
  const plain = url.replace(/\?.*$/, '');

  await t.test('verify-full with the test CA succeeds, and the session is encrypted (node-postgres)', async () => {
    assert.deepEqual(await query(pgConfig(url), 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'), [{ ssl: true }]);
  });

  await t.test('verify-full with the test CA succeeds (libpq: psql)', async () => {
    assert.equal((await psql(cluster, url)).stdout.trim(), 't');
  });

  await t.test('plaintext is refused by pg_hba.conf, as rds.force_ssl=1 refuses it (node-postgres and libpq)', async () => {
    await assert.rejects(query(pgConfig(plain), 'SELECT 1'), /no pg_hba\.conf entry .*no encryption/);
    await assert.rejects(psql(cluster, plain), /no pg_hba\.conf entry .*no encryption/);
  });

  await t.test('a CA that did not sign the server certificate is refused', async () => {
    const other = await makeClusterTls(fs.mkdtempSync(path.join(os.tmpdir(), 'rig-other-ca-')), { label: 'other' });
    const wrongCa = withVerifyFull(url, other.caFile);
    await assert.rejects(query(pgConfig(wrongCa), 'SELECT 1'), /self[- ]signed|unable to verify|certificate/i);
    fs.chmodSync(path.dirname(other.caFile), 0o755); // psql runs as the cluster's OS user
    await assert.rejects(psql(cluster, wrongCa), /certificate verify failed/);
    fs.rmSync(path.dirname(other.caFile), { recursive: true, force: true });
  });

  await t.test('a host name the certificate was not issued for is refused', async () => {
    // node-postgres sends the URL's host as the server name when it is a DNS name; the same check, named.
    const cfg = pgConfig(url);
    await assert.rejects(query({ ...cfg, ssl: { ...(cfg.ssl as object), servername: 'not-this-cluster.invalid' } }, 'SELECT 1'), /does not match|altnames/i);
    // libpq verifies PGHOST while connecting to PGHOSTADDR.
    await assert.rejects(psql(cluster, url, { PGHOST: 'not-this-cluster.invalid', PGHOSTADDR: '127.0.0.1' }), /does not match host name "not-this-cluster\.invalid"/);
  });

  await t.test('the admin has CREATEROLE and CREATEDB and nothing of a superuser: ALTER SYSTEM and a superuser-only SET are refused', async () => {
    const c = new pg.Client(pgConfig(url));
    await c.connect();
    try {
      const me = (await c.query('SELECT rolsuper, rolcreaterole, rolcreatedb, rolbypassrls, rolreplication FROM pg_roles WHERE rolname = current_user')).rows[0];
      assert.deepEqual(me, { rolsuper: false, rolcreaterole: true, rolcreatedb: true, rolbypassrls: false, rolreplication: false });
      // PostgreSQL 15 words it by the parameter (ALTER SYSTEM is a per-parameter privilege since 15).
      await assert.rejects(c.query("ALTER SYSTEM SET max_wal_size = '2GB'"), /permission denied to set parameter "max_wal_size"/);
      await assert.rejects(c.query("SET log_min_duration_statement = '1s'"), /permission denied to set parameter/);
    } finally {
      await c.end();
    }
  });
});

test('the settings RDS reserves are refused by name, with RDS\'s own wording', () => {
  assert.throws(() => refuseReservedSettings({ shared_buffers: '1GB', listen_addresses: '*' }), /database\.listen_addresses: RDS reserves this setting .*"The parameter listen_addresses cannot be modified".* remove it/);
  assert.doesNotThrow(() => refuseReservedSettings({ shared_buffers: '1GB', autovacuum_naptime: 1 }));
});

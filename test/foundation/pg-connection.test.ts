// test-mode: unit
// lib/pg/connection.ts: a URL's sslmode means the same to node-postgres and to libpq (pgbench, psql);
// what either would silently ignore or read differently is refused naming the parameter and the fix,
// and no refusal echoes the URL (it carries a password).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { asRole, libpqEnv, onDatabase, pgConfig, withVerifyFull } from '../../lib/pg/connection';

const ca = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rig-conn-')), 'ca.pem');
fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nnot checked here\n-----END CERTIFICATE-----\n');
const base = 'postgres://rig_admin:s3cret%2Fpw@db.example.internal:5433/postgres';

test('verify-full: node-postgres gets the CA, the server name and rejectUnauthorized; libpq gets PGSSLMODE and PGSSLROOTCERT', () => {
  const url = withVerifyFull(base, ca);
  const cfg = pgConfig(url, { application_name: 'x', max: 3 });
  assert.equal(cfg.host, 'db.example.internal');
  assert.equal(cfg.port, 5433);
  assert.equal(cfg.password, 's3cret/pw');
  assert.equal(cfg.max, 3);
  assert.deepEqual(cfg.ssl, { rejectUnauthorized: true, ca: fs.readFileSync(ca, 'utf8'), servername: 'db.example.internal' });
  assert.equal('connectionString' in cfg, false, 'a connectionString would override ssl inside node-postgres');
  assert.deepEqual(libpqEnv(url), {
    PGHOST: 'db.example.internal',
    PGPORT: '5433',
    PGUSER: 'rig_admin',
    PGDATABASE: 'postgres',
    PGPASSWORD: 's3cret/pw',
    PGSSLMODE: 'verify-full',
    PGSSLROOTCERT: ca,
  });
});

test('an IP host gets no SNI server name (RFC 6066): Node checks the certificate against the IP itself', () => {
  const ssl = pgConfig(withVerifyFull('postgres://u:p@127.0.0.1:5432/d', ca)).ssl as Record<string, unknown>;
  assert.equal(ssl.rejectUnauthorized, true);
  assert.equal('servername' in ssl, false);
});

test('without sslmode: plaintext for both (libpq is told disable, not its default prefer)', () => {
  assert.equal(pgConfig('postgres://u:p@127.0.0.1:5432/d').ssl, false);
  assert.equal(libpqEnv('postgres://u:p@127.0.0.1:5432/d').PGSSLMODE, 'disable');
});

test('verify-ca checks the chain but not the name; require encrypts without verifying', () => {
  const vca = pgConfig(`postgres://u@h/d?sslmode=verify-ca&sslrootcert=${ca}`).ssl as Record<string, unknown>;
  assert.equal(vca.rejectUnauthorized, true);
  assert.equal(typeof vca.checkServerIdentity, 'function');
  assert.deepEqual(pgConfig('postgres://u@h/d?sslmode=require').ssl, { rejectUnauthorized: false });
});

test('refusals name the parameter and the fix, never the password', () => {
  const cases: Array<[string, RegExp]> = [
    ['postgres://u:pw1@h/d?sslmode=prefer', /sslmode=prefer cannot be honoured: node-postgres does not fall back .*Use sslmode=verify-full/],
    ['postgres://u:pw1@h/d?sslmode=verify-full', /sslmode=verify-full needs sslrootcert=/],
    ['postgres://u:pw1@h/d?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem', /sslrootcert \/nonexistent\/ca\.pem cannot be read \(ENOENT\)/],
    ['postgres://u:pw1@h/d?sslmode=strict', /sslmode=strict is not one of disable, require, verify-ca, verify-full/],
    ['postgres://u:pw1@h/d?sslcert=/x', /parameter "sslcert" is not understood here/],
    ['mysql://u:pw1@h/d', /scheme mysql: is not postgres:/],
  ];
  for (const [url, re] of cases) {
    assert.throws(() => pgConfig(url), (err: Error) => re.test(err.message) && !err.message.includes('pw1'), url);
  }
});

test('changing role or database keeps the TLS settings', () => {
  const url = withVerifyFull(base, ca);
  const owner = asRole(url, 'hardcount_owner', 'o p', 'hardcount');
  assert.equal(libpqEnv(owner).PGSSLROOTCERT, ca);
  assert.equal(libpqEnv(owner).PGPASSWORD, 'o p');
  assert.equal(libpqEnv(onDatabase(url, 'hardcount')).PGDATABASE, 'hardcount');
  assert.equal(libpqEnv(onDatabase(url, 'hardcount')).PGSSLMODE, 'verify-full');
});

test('a Unix-socket folder as the host query parameter (libpq URI form)', () => {
  const cfg = pgConfig('postgres://postgres@localhost:5444/postgres?host=%2Ftmp%2Fsock');
  assert.equal(cfg.host, '/tmp/sock');
  assert.equal(cfg.port, 5444);
});

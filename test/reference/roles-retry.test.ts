// Roles and migrations as RDS runs them: as a non-superuser admin with CREATEROLE and CREATEDB, over
// verify-full TLS (an RDS-fidelity cluster). A retried prepare (roles and migrations again, the roles
// already there) must succeed: PostgreSQL 15 refuses a non-superuser's ALTER ROLE that names
// SUPERUSER at all, which the first test shows of the server itself, so the roles are brought up to
// date naming only the attributes that differ.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type pg from 'pg';
import { migrate } from '../../reference/migrate';
import { setupRoles } from '../../reference/roles';
import { APP_ROLE, OWNER_ROLE } from '../../reference/schema';
import { withClient } from '../../lib/targets/db';
import { throwAwayCluster } from '../harness/pg';

const attrs = (c: pg.ClientBase, role: string) =>
  c.query('SELECT rolcanlogin, rolsuper, rolbypassrls, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = $1', [role]).then((r) => r.rows[0] as Record<string, boolean>);

test('prepare as a non-superuser admin over TLS, then again (the retry)', async (t) => {
  const cluster = await throwAwayCluster({ superuserPassword: 'su-pw', rdsFidelity: { admin: 'rig_admin', adminPassword: 'admin-pw' } });
  const adminUrl = cluster.url('postgres', 'rig_admin', 'admin-pw');
  const superUrl = cluster.url('postgres', 'postgres', 'su-pw');
  const passwords = { ownerPassword: 'owner-1', appPassword: 'app-1' };

  const first = await setupRoles(adminUrl, passwords);
  assert.match(first.ownerUrl, /sslmode=verify-full/, 'the owner URL keeps the TLS settings');
  assert.deepEqual((await migrate(first.ownerUrl)).applied.length > 0, true);

  await t.test('the server refuses what the old code sent on a retry: ALTER ROLE ... NOSUPERUSER from a non-superuser', async () => {
    await withClient(adminUrl, (c) => assert.rejects(c.query(`ALTER ROLE ${OWNER_ROLE} NOSUPERUSER`), /must be superuser to alter superuser roles or change superuser attribute/));
  });

  await t.test('the retry succeeds, with new passwords taking effect, and the schema is current', async () => {
    const again = await setupRoles(adminUrl, { ownerPassword: 'owner-2', appPassword: 'app-2' });
    assert.deepEqual((await migrate(again.ownerUrl)).applied, []);
    for (const url of [again.ownerUrl, again.appUrl]) {
      assert.deepEqual(await withClient(url, async (c) => (await c.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).rows), [{ ssl: true }]);
    }
    await assert.rejects(withClient(first.ownerUrl, (c) => c.query('SELECT 1')), /password authentication failed/);
    await withClient(adminUrl, async (c) => {
      for (const role of [OWNER_ROLE, APP_ROLE]) {
        assert.deepEqual(await attrs(c, role), { rolcanlogin: true, rolsuper: false, rolbypassrls: false, rolcreatedb: false, rolcreaterole: false });
      }
    });
  });

  await t.test('an attribute that drifted is put back, naming only it', async () => {
    await withClient(adminUrl, (c) => c.query(`ALTER ROLE ${APP_ROLE} CREATEDB`));
    await setupRoles(adminUrl, passwords);
    await withClient(adminUrl, async (c) => assert.equal((await attrs(c, APP_ROLE)).rolcreatedb, false));
  });

  await t.test('a role given BYPASSRLS by a superuser is refused with what to run, not an opaque server error', async () => {
    await withClient(superUrl, (c) => c.query(`ALTER ROLE ${APP_ROLE} BYPASSRLS`));
    await assert.rejects(setupRoles(adminUrl, passwords), /role hardcount_app has BYPASSRLS, which only a superuser can remove.*ALTER ROLE hardcount_app NOBYPASSRLS/);
    // As a superuser (the local target without fidelity) the same call repairs it.
    await setupRoles(superUrl, passwords);
    await withClient(adminUrl, async (c) => assert.equal((await attrs(c, APP_ROLE)).rolbypassrls, false));
  });
});

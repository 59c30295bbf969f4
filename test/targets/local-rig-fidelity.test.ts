// The local target in RDS-fidelity mode (spec local.rdsFidelity, issue 23): provisioning makes the
// roles as the non-superuser admin over verify-full, the service connects over TLS, the URLs the
// steps get all carry verify-full, plaintext is refused, a second provision reuses the rig, and a
// reserved setting is refused before anything is made.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { pgConfig } from '../../lib/pg/connection';
import { rigDbUrls } from '../../lib/targets/local/connection';
import { liveResources } from '../../lib/targets/local/ledger';
import { provisionLocal } from '../../lib/targets/local/provision';
import { teardownLocal } from '../../lib/targets/local/teardown';
import { isolatedStateDir, testCampaign } from '../harness/local-rig';

isolatedStateDir();

async function rows<T>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client(pgConfig(url));
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

test('provision in RDS-fidelity mode: TLS everywhere, a non-superuser admin, reused when asked again', async () => {
  const id = testCampaign('fidelity');
  try {
    const params = { db: { shared_buffers: '64MB' }, service: { poolSize: 2 }, local: { rdsFidelity: true } };
    const r = await provisionLocal(id, params);
    assert.equal(r.db.superuser, 'rig_admin', 'the rig administers the cluster as the admin, as RDS\'s master user');
    assert.match(r.db.ownerUrl, /sslmode=verify-full&sslrootcert=/);

    const urls = rigDbUrls(id);
    for (const url of [urls.superuserUrl, urls.ownerUrl, urls.appUrl]) assert.match(url, /sslmode=verify-full/);
    const [me] = await rows<{ rolname: string; rolsuper: boolean; rolcreaterole: boolean; rolcreatedb: boolean }>(
      urls.superuserUrl,
      'SELECT rolname, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user',
    );
    assert.deepEqual(me, { rolname: 'rig_admin', rolsuper: false, rolcreaterole: true, rolcreatedb: true });

    // The service answers, and every one of its connections is encrypted.
    const health = (await (await fetch(`${r.serviceUrl}/healthz`)).json()) as { db_role: string; rls: boolean };
    assert.equal(health.db_role, 'hardcount_app');
    const service = await rows<{ ssl: boolean }>(
      urls.superuserUrl,
      "SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.application_name = 'hardcount-reference'",
    );
    assert.ok(service.length > 0 && service.every((x) => x.ssl), `the service's sessions are all TLS: ${JSON.stringify(service)}`);

    // Plaintext to the rig is refused.
    await assert.rejects(rows(urls.ownerUrl.replace(/\?.*$/, ''), 'SELECT 1'), /no pg_hba\.conf entry .*no encryption/);

    // Asked again, the live rig is reused; asked without fidelity, it is refused naming why.
    assert.equal((await provisionLocal(id, params)).reused, true);
    await assert.rejects(provisionLocal(id, { ...params, local: { rdsFidelity: false } }), /already has a rig in RDS-fidelity mode, and this spec asks for local\.rdsFidelity false: tear it down first/);
  } finally {
    await teardownLocal(id);
  }
});

test('a setting RDS reserves is refused before anything is made', async () => {
  const id = testCampaign('reserved');
  await assert.rejects(
    provisionLocal(id, { db: { extra: { listen_addresses: '*' } }, local: { rdsFidelity: true } }),
    /database\.listen_addresses: RDS reserves this setting .*local\.rdsFidelity refuses it the same way: remove it/,
  );
  assert.deepEqual(liveResources(id), [], 'nothing was made');
  await teardownLocal(id);
});

// The local target in RDS-fidelity mode (spec local.rdsFidelity, issue 23): provisioning makes the
// roles as the non-superuser admin over verify-full, the service connects over TLS, the URLs the
// steps get all carry verify-full, plaintext is refused, a second provision reuses the rig, and a
// reserved setting is refused before anything is made. And a retried provision that meets the service a
// dead attempt started before its pid reached the ledger stops it by its marker (stop 28's CI: the
// RDS-fidelity campaign's SIGKILL landed there, and that service outlived teardown).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import pg from 'pg';
import { pgConfig } from '../../lib/pg/connection';
import { rigDbUrls } from '../../lib/targets/local/connection';
import { appendLedger, liveResources } from '../../lib/targets/local/ledger';
import { isAlive, scanMarkedProcesses, waitGone } from '../../lib/targets/local/proc';
import { readRigRecord, writeRigRecord } from '../../lib/targets/local/rig-record';
import { MARKER_CAMPAIGN, MARKER_RESOURCE, MARKER_RIG_DIR, rigPaths } from '../../lib/targets/local/rig-paths';
import { cleanCheckLocal } from '../../lib/targets/local';
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

test('a retried provision stops the service a dead attempt started whose pid never reached the ledger', async () => {
  const id = testCampaign('orphan');
  const params = { service: { poolSize: 2 }, local: { rdsFidelity: true } };
  let orphanPid: number | undefined;
  try {
    await provisionLocal(id, params);
    // What a worker SIGKILLed between the spawn and the ledger's write leaves: the record written and not
    // complete, the service announced ('intend') with no pid, and a live process marked as that service.
    const rec = readRigRecord(id)!;
    writeRigRecord({ ...rec, complete: false });
    appendLedger(id, 'intend', 'service-9', 'service', { command: ['node', '-e', 'a dead attempt\'s service'] });
    const orphan = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, [MARKER_CAMPAIGN]: id, [MARKER_RESOURCE]: 'service-9', [MARKER_RIG_DIR]: rigPaths(id).dir },
    });
    orphan.unref();
    orphanPid = orphan.pid!;
    assert.ok(scanMarkedProcesses().marked.some((p) => p.pid === orphanPid), 'the orphan carries its marker');

    const lines: string[] = [];
    const again = await provisionLocal(id, params, (l) => lines.push(l));
    assert.equal(again.reused, true, 'the same cluster, resumed');
    assert.ok(await waitGone(orphanPid, 15_000), `the orphan was stopped: ${lines.join(' | ')}`);
    assert.ok(lines.some((l) => /stopping service-9 found by its marker/.test(l)), lines.join(' | '));
    assert.equal((await fetch(`${again.serviceUrl}/healthz`)).status, 200, 'the new attempt\'s service answers');
  } finally {
    await teardownLocal(id);
    if (orphanPid !== undefined && isAlive(orphanPid)) process.kill(orphanPid, 'SIGKILL');
  }
  const after = await cleanCheckLocal();
  assert.equal(after.status, 'clean', JSON.stringify(after));
});

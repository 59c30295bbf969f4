// The local target's lifecycle on real clusters: provision, find again, teardown (twice, and after a
// crash halfway), and `rig check` telling clean (0), dirty (1) and could-not-look (69).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { cleanCheckLocal } from '../../lib/targets/local/clean-check';
import { rigDbUrls } from '../../lib/targets/local/connection';
import { appendLedger, liveResources, readLedger } from '../../lib/targets/local/ledger';
import { PgCluster } from '../../lib/targets/local/pg-cluster';
import { isAlive } from '../../lib/targets/local/proc';
import { provisionLocal } from '../../lib/targets/local/provision';
import { readRigRecord } from '../../lib/targets/local/rig-record';
import { rigPaths } from '../../lib/targets/local/rig-paths';
import { readSecrets } from '../../lib/targets/local/secrets';
import { teardownLocal } from '../../lib/targets/local/teardown';
import type { CleanCheckResult } from '../../lib/targets/target';
import { isolatedStateDir, testCampaign } from '../harness/local-rig';
import { rig } from '../harness/rig-cli';

const stateDir = isolatedStateDir();

/** Leftovers of the campaigns this file made (the process scan is machine-wide). */
function mine(r: CleanCheckResult, campaign: string) {
  return r.status === 'clean' ? [] : r.leftovers.filter((l) => l.campaignId === campaign);
}

test('provision makes a running rig with the campaign parameters; teardown leaves nothing', async () => {
  const id = testCampaign('life');
  try {
    await lifecycle(id);
  } finally {
    await teardownLocal(id);
  }
});

async function lifecycle(id: string): Promise<void> {
  const r = await provisionLocal(id, {
    db: { shared_buffers: '96MB', max_wal_size: '2GB', min_wal_size: '160MB', autovacuum_vacuum_insert_scale_factor: 0.02, wal_compression: 'pglz' },
    service: { poolSize: 4 },
  });
  assert.equal(r.reused, false);
  // no secret in what provision returns
  const s = readSecrets(id);
  const text = JSON.stringify(r);
  for (const secret of [s.superuserPassword, s.ownerPassword, s.appPassword]) assert.ok(!text.includes(secret));
  assert.equal(fs.statSync(rigPaths(id).secretsFile).mode & 0o777, 0o600);
  // the service answers on the app role with RLS
  const health = (await (await fetch(`${r.serviceUrl}/healthz`)).json()) as { db_role: string; rls: boolean };
  assert.equal(health.db_role, 'hardcount_app');
  assert.equal(health.rls, true);
  // the cluster runs with the campaign's settings and the logging the evidence needs
  const c = new pg.Client({ connectionString: rigDbUrls(id).superuserUrl });
  await c.connect();
  const settings = Object.fromEntries(
    (
      await c.query<{ name: string; setting: string; unit: string | null }>(
        `SELECT name, current_setting(name) AS setting, unit FROM pg_settings WHERE name = ANY($1)`,
        [['shared_buffers', 'max_wal_size', 'min_wal_size', 'autovacuum_vacuum_insert_scale_factor', 'wal_compression', 'log_checkpoints', 'log_autovacuum_min_duration']],
      )
    ).rows.map((x) => [x.name, x.setting]),
  );
  await c.end();
  assert.deepEqual(settings, {
    shared_buffers: '96MB',
    max_wal_size: '2GB',
    min_wal_size: '160MB',
    autovacuum_vacuum_insert_scale_factor: '0.02',
    wal_compression: 'pglz',
    log_checkpoints: 'on',
    log_autovacuum_min_duration: '0',
  });
  // the Postgres log is in the rig folder
  assert.ok(r.files.postgresLog.startsWith(rigPaths(id).dir) && fs.existsSync(r.files.postgresLog));
  // the ledger listed every resource before it was made: each 'made' follows its 'intend'
  const entries = readLedger(id);
  for (const e of entries.filter((x) => x.op === 'made')) {
    const intent = entries.findIndex((x) => x.op === 'intend' && x.id === e.id);
    assert.ok(intent >= 0 && intent < entries.indexOf(e), `${e.id} made before intended`);
  }
  assert.deepEqual(
    liveResources(id).map((x) => x.id),
    ['rig-dir', 'cluster', 'service-1'],
  );
  const before = await cleanCheckLocal();
  assert.equal(before.status, 'dirty');
  const kinds = new Set(mine(before, id).map((l) => l.kind));
  for (const k of ['ledger-entry', 'rig-folder', 'postmaster', 'service']) assert.ok(kinds.has(k as never), `check lists no ${k}`);

  const rec = readRigRecord(id)!;
  const down = await teardownLocal(id);
  assert.equal(down.removed.length, 3);
  // the evidence outlives the rig: the Postgres log (with the checkpoint lines log_checkpoints adds) and the service log
  assert.deepEqual(down.keptLogs!.map((f) => path.basename(f)).sort(), ['postgres.log', 'service-1.log']);
  assert.ok(down.keptLogs!.every((f) => f.startsWith(path.join(stateDir, 'results', id, 'rig-logs'))));
  assert.match(fs.readFileSync(down.keptLogs!.find((f) => f.endsWith('postgres.log'))!, 'utf8'), /database system is ready to accept connections/);
  assert.equal(isAlive(rec.service!.pid), false);
  assert.equal(fs.existsSync(rigPaths(id).dir), false);
  assert.equal(fs.existsSync(rigPaths(id).ledgerFile), false, 'the ledger is closed once nothing is live');
  assert.deepEqual(mine(await cleanCheckLocal(), id), []);
  // teardown again: nothing to do, no error
  const again = await teardownLocal(id);
  assert.deepEqual(again.removed, []);
}

test('a fresh provision call for the same campaign finds the live rig and reuses it; a dead service is restarted', async () => {
  const id = testCampaign('reuse');
  try {
    const first = await provisionLocal(id, {});
    const again = await provisionLocal(id, {});
    assert.equal(again.reused, true);
    assert.equal(again.db.port, first.db.port);
    assert.equal(again.serviceUrl, first.serviceUrl);
    // different parameters for the same campaign are refused, naming the way out
    await assert.rejects(provisionLocal(id, { db: { shared_buffers: '64MB' } }), /PostgreSQL parameters.*tear it down first/);
    // the service dies (orchestrator gone, OOM, ...): provision starts a new one on the same cluster
    const pid = readRigRecord(id)!.service!.pid;
    process.kill(-pid, 'SIGKILL');
    for (let i = 0; i < 50 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    const third = await provisionLocal(id, {});
    assert.equal(third.reused, true);
    assert.equal(third.db.port, first.db.port);
    assert.notEqual(readRigRecord(id)!.service!.pid, pid);
    assert.equal((await fetch(`${third.serviceUrl}/healthz`)).status, 200);
  } finally {
    await teardownLocal(id);
  }
  assert.deepEqual(mine(await cleanCheckLocal(), id), []);
});

test('a rig outlives the process that provisioned it: the next process finds and reuses it', async () => {
  const id = testCampaign('orphan');
  try {
    // another orchestrator process provisions, then dies without teardown
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '-e', `require('./lib/targets/local/provision').provisionLocal(${JSON.stringify(id)}, {}).then((r) => { console.log(JSON.stringify(r)); process.exit(0); })`],
      { cwd: path.resolve(__dirname, '..', '..'), env: { ...process.env, RIG_STATE_DIR: stateDir }, encoding: 'utf8', timeout: 120_000 },
    );
    assert.equal(child.status, 0, child.stderr);
    const made = JSON.parse(child.stdout.trim().split('\n').pop()!) as { serviceUrl: string; db: { port: number } };
    assert.equal((await fetch(`${made.serviceUrl}/healthz`)).status, 200, 'the service survived its parent');
    const found = await provisionLocal(id, {});
    assert.equal(found.reused, true);
    assert.equal(found.serviceUrl, made.serviceUrl);
    assert.equal(found.db.port, made.db.port);
  } finally {
    await teardownLocal(id);
  }
  assert.deepEqual(mine(await cleanCheckLocal(), id), []);
});

test('teardown after a crash halfway: service already dead, cluster folder half gone', async () => {
  const id = testCampaign('crash');
  await provisionLocal(id, {});
  const rec = readRigRecord(id)!;
  // the service was killed first (as a crashed teardown would leave it); SIGKILL lands when the kernel
  // gets to it, so wait until it has (on a loaded host, teardown could otherwise find it still alive)
  process.kill(-rec.service!.pid, 'SIGKILL');
  for (let i = 0; i < 100 && isAlive(rec.service!.pid); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(isAlive(rec.service!.pid), false, 'the service is dead before teardown starts');
  // and part of the cluster folder is gone while the postmaster still runs
  fs.rmSync(path.join(rec.cluster.dir, 'cluster.json'));
  fs.rmSync(path.join(rec.cluster.dataDir, 'postmaster.pid'));
  const pm = readLedger(id).find((e) => e.id === 'cluster' && e.op === 'made')!.detail.pid!;
  assert.ok(isAlive(pm));
  const down = await teardownLocal(id);
  assert.ok(down.alreadyGone.some((x) => x.startsWith('service-1')));
  assert.ok(down.removed.some((x) => x.startsWith('cluster')));
  assert.equal(isAlive(pm), false);
  assert.deepEqual(mine(await cleanCheckLocal(), id), []);
});

test('teardown after a crash halfway: the rig folder removed under a running rig', async () => {
  const id = testCampaign('nofolder');
  await provisionLocal(id, {});
  const rec = readRigRecord(id)!;
  const pm = PgCluster.attach(rec.cluster.dir).postmasterPid()!;
  fs.rmSync(rigPaths(id).dir, { recursive: true, force: true });
  const down = await teardownLocal(id);
  // PostgreSQL itself shuts down (within a minute) once its lock file is gone: by the time teardown
  // looks, the postmaster may already have stopped. Either way the ledger entry is closed.
  assert.ok([...down.removed, ...down.alreadyGone].some((x) => x.startsWith('cluster')), JSON.stringify(down));
  assert.ok(down.removed.some((x) => x.startsWith('service-1')));
  assert.equal(isAlive(pm), false);
  assert.equal(isAlive(rec.service!.pid), false);
  assert.deepEqual(mine(await cleanCheckLocal(), id), []);
});

test('provision over a damaged rig (cluster folder gone) removes what is left and makes a new one', async () => {
  const id = testCampaign('damaged');
  try {
    const first = await provisionLocal(id, {});
    const rec = readRigRecord(id)!;
    const oldService = rec.service!.pid;
    fs.rmSync(rec.cluster.dir, { recursive: true, force: true }); // the postmaster now runs on a deleted folder
    const second = await provisionLocal(id, {});
    assert.equal(second.reused, false);
    assert.equal(isAlive(oldService), false);
    assert.equal((await fetch(`${second.serviceUrl}/healthz`)).status, 200);
    assert.notEqual(second.serviceUrl, first.serviceUrl);
  } finally {
    await teardownLocal(id);
  }
  assert.deepEqual(mine(await cleanCheckLocal(), id), []);
});

test('teardown never signals a pid the ledger recorded once it belongs to another process', async () => {
  const id = testCampaign('recycled');
  // a ledger that says service-1 is our own test process (as if the pid had been recycled)
  appendLedger(id, 'intend', 'service-1', 'service', { script: 'reference/main.ts' });
  appendLedger(id, 'made', 'service-1', 'service', { pid: process.pid });
  const down = await teardownLocal(id);
  assert.deepEqual(down.alreadyGone.length, 1);
  assert.ok(isAlive(process.pid)); // still here
});

// The CLI checks below use --scope state: on a machine shared with other rigs (another developer's
// rehearsal), the machine-wide default would rightly list theirs. The machine scope itself is covered by
// the library calls above (mine() filters their leftovers to this file's campaigns).
test('rig check: clean exits 0; a leftover postmaster and ledger entry exit 1 listing them; unreadable state exits 69 (could not look)', async () => {
  const clean = await rig(['check', '--target', 'local', '--scope', 'state'], { RIG_STATE_DIR: stateDir });
  assert.equal(clean.code, 0, clean.stderr + clean.stdout);
  assert.match(clean.stdout, /^CLEAN/);

  const id = testCampaign('dirty');
  await provisionLocal(id, {});
  try {
    // the orchestrator "crashed": its ledger and a live postmaster are left
    const dirty = await rig(['check', '--target', 'local', '--scope', 'state'], { RIG_STATE_DIR: stateDir });
    assert.equal(dirty.code, 1);
    assert.match(dirty.stderr, /^DIRTY/);
    assert.match(dirty.stderr, new RegExp(`ledger-entry\\s+campaign ${id}\\s+\\d+s old\\s+cluster`));
    assert.match(dirty.stderr, new RegExp(`postmaster\\s+campaign ${id}\\s+\\d+s old\\s+postmaster pid \\d+`));
    assert.match(dirty.stderr, new RegExp(`service\\s+campaign ${id}.*listening on 127\\.0\\.0\\.1:\\d+`));
    // seen from another state folder: the machine-wide scan still finds this rig's processes; the
    // state scope does not (its ledger and folder are elsewhere)
    const elsewhere = fs.mkdtempSync(path.join(stateDir, 'other-'));
    const machine = await rig(['check', '--target', 'local'], { RIG_STATE_DIR: elsewhere });
    assert.equal(machine.code, 1);
    assert.match(machine.stderr, new RegExp(`postmaster\\s+campaign ${id}`));
    const scoped = await rig(['check', '--target', 'local', '--scope', 'state'], { RIG_STATE_DIR: elsewhere });
    assert.equal(scoped.code, 0, scoped.stderr);
    fs.rmSync(elsewhere, { recursive: true });
    // even with the ledger gone, the marked processes are found
    const ledger = rigPaths(id).ledgerFile;
    const saved = fs.readFileSync(ledger);
    fs.rmSync(ledger);
    const noLedger = await rig(['check', '--target', 'local', '--scope', 'state'], { RIG_STATE_DIR: stateDir });
    assert.equal(noLedger.code, 1);
    assert.match(noLedger.stderr, new RegExp(`postmaster\\s+campaign ${id}`));
    fs.writeFileSync(ledger, saved);
    // an unparsable ledger: could not look
    fs.appendFileSync(ledger, '{"torn": ');
    const torn = await rig(['check', '--target', 'local', '--scope', 'state'], { RIG_STATE_DIR: stateDir });
    assert.equal(torn.code, 69);
    assert.match(torn.stderr, /^COULD NOT LOOK: ledger .* is unreadable: line \d+ is not JSON/);
    // and teardown refuses to guess from it
    await assert.rejects(teardownLocal(id), /unreadable/);
    fs.writeFileSync(ledger, saved);
  } finally {
    await teardownLocal(id);
  }
  // a state folder that is not a folder: could not look
  const notDir = path.join(stateDir, 'a-file');
  fs.writeFileSync(notDir, 'x');
  const unreadable = await rig(['check', '--target', 'local', '--scope', 'state'], { RIG_STATE_DIR: notDir });
  assert.equal(unreadable.code, 69);
  assert.match(unreadable.stderr, /^COULD NOT LOOK: state folder .* is not a folder/);
  fs.rmSync(notDir);

  const after = await rig(['check', '--target', 'local', '--scope', 'state'], { RIG_STATE_DIR: stateDir });
  assert.equal(after.code, 0, after.stderr);
});

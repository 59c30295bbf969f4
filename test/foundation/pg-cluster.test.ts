import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { PgCluster } from '../../lib/targets/local/pg-cluster';
import { throwAwayCluster } from '../harness/pg';

test('a throw-away cluster starts on a free port, answers a query, and is gone after destroy', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-pg-test-'));
  fs.chmodSync(dir, 0o755);
  const cluster = await PgCluster.create({ dir, parameters: { shared_buffers: '64MB' } });
  try {
    assert.notEqual(cluster.port, 5432);
    const client = new pg.Client({ connectionString: cluster.url() });
    await client.connect();
    const { rows } = await client.query<{ v: string; sb: string }>(
      "select 41 + 1 as v, current_setting('shared_buffers') as sb",
    );
    await client.end();
    assert.equal(Number(rows[0].v), 42);
    assert.equal(rows[0].sb, '64MB');
    // another process can find it from its folder
    assert.equal(PgCluster.attach(dir).postmasterPid(), cluster.postmasterPid());
  } finally {
    await cluster.destroy();
  }
  assert.equal(cluster.isRunning(), false);
  assert.equal(fs.existsSync(dir), false);
  // idempotent
  await cluster.destroy();
});

test('the harness cluster is registered for removal when the file ends', async () => {
  const cluster = await throwAwayCluster();
  const client = new pg.Client({ connectionString: cluster.url() });
  await client.connect();
  await client.query('create table t (x int)');
  await client.end();
  assert.ok(cluster.isRunning());
});

test('a password-protected cluster refuses TCP without the password', async () => {
  const cluster = await throwAwayCluster({ superuserPassword: 's3cret-pw' });
  const bad = new pg.Client({ connectionString: cluster.url('postgres', 'postgres', 'wrong') });
  await assert.rejects(bad.connect(), /password authentication failed/);
  const good = new pg.Client({ connectionString: cluster.url('postgres', 'postgres', 's3cret-pw') });
  await good.connect();
  await good.end();
});

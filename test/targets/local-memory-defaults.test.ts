// test-mode: unit
// The local target's defaults where the spec names no setting (memory-defaults.ts): shared_buffers is
// 25 % of the host's memory between 128MB and 1GB, the rest PostgreSQL's own defaults; a named setting
// wins, and the local cluster's parameters carry both (provision.ts postgresParameters).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { localDatabaseDefaults, localSharedBuffers, withLocalDefaults } from '../../lib/targets/local/memory-defaults';
import { postgresParameters } from '../../lib/targets/local/provision';

const GB = 1024 ** 3;

test('shared_buffers: 25 % of memory, at least 128MB, at most 1GB', () => {
  assert.equal(localSharedBuffers(2 * GB), '512MB');
  assert.equal(localSharedBuffers(256 * 1024 ** 2), '128MB');
  assert.equal(localSharedBuffers(64 * GB), '1024MB');
  assert.deepEqual(localDatabaseDefaults(2 * GB), { shared_buffers: '512MB', min_wal_size: '80MB', max_wal_size: '1GB', autovacuum_vacuum_insert_scale_factor: 0.2, wal_compression: 'off' });
});

test('what the spec names wins; what it leaves out is filled; the cluster gets both and the marker logging', () => {
  assert.deepEqual(withLocalDefaults({ shared_buffers: '64MB', wal_compression: undefined }, 2 * GB), { shared_buffers: '64MB', min_wal_size: '80MB', max_wal_size: '1GB', autovacuum_vacuum_insert_scale_factor: 0.2, wal_compression: 'off' });
  const p = postgresParameters({ db: { max_wal_size: '4GB' } });
  assert.equal(p.max_wal_size, '4GB');
  assert.match(String(p.shared_buffers), /^\d+MB$/);
  assert.equal(p.min_wal_size, '80MB');
  assert.equal(p.log_checkpoints, 'on');
  assert.equal(p.log_autovacuum_min_duration, 0);
});

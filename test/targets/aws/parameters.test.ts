// test-mode: unit
// The parameter group gets exactly what the spec names, plus the marker logging (parameters.ts):
// a spec that names no database setting sends log_autovacuum_min_duration and log_checkpoints only,
// everything else keeps the family's default; a named setting is sent in RDS's unit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rdsParameters } from '../../../lib/targets/aws/parameters';

test('no settings named: only the logging set; shared_buffers named: that too, in 8 kB pages', () => {
  assert.deepEqual(rdsParameters({}).map((p) => `${p.name}=${p.value}`), ['log_autovacuum_min_duration=0', 'log_checkpoints=1']);
  assert.deepEqual(rdsParameters({ shared_buffers: '8GB' }).map((p) => `${p.name}=${p.value} ${p.applyMethod}`), [
    'log_autovacuum_min_duration=0 immediate',
    'log_checkpoints=1 immediate',
    'shared_buffers=1048576 pending-reboot',
  ]);
  assert.deepEqual(
    rdsParameters({ min_wal_size: '16GB', max_wal_size: '32GB', autovacuum_vacuum_insert_scale_factor: 0.02, wal_compression: 'zstd', extra: { autovacuum_naptime: '1s' } }).map((p) => p.name),
    ['log_autovacuum_min_duration', 'log_checkpoints', 'min_wal_size', 'max_wal_size', 'autovacuum_vacuum_insert_scale_factor', 'wal_compression'],
  );
});

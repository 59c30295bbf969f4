// Per-second disk figures in one shape from both sources: the local disk sampler's rows and Enhanced
// Monitoring's messages (the replayed RDSOSMetrics message of test/targets/aws/fixtures, read by the
// aws collector's own parser), and the second that covers a freeze-second.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { diskAt, diskSecondsFromLocal, diskSecondsFromOs } from '../../lib/protocol/disk-seconds';
import { osSeries, parseOsMessage, type OsMessage } from '../../lib/targets/aws/evidence/enhanced-monitoring';
import { fill } from '../harness/replay-server';

const T0 = Date.parse('2026-05-01T12:00:00Z');
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

test('local rows: devices taken together (IOPS and queues add, IO size over all IOs); error rows are gaps', () => {
  const d = diskSecondsFromLocal([
    { t: iso(1), intervalMs: 1000, devices: [{ reads_ps: 100, writes_ps: 900, read_kb_ps: 800, write_kb_ps: 5200, queue_depth: 200 }, { reads_ps: 0, writes_ps: 100, read_kb_ps: 0, write_kb_ps: 4000, queue_depth: 1 }] },
    { t: iso(2), error: 'device vda is not in /proc/diskstats' },
    { t: iso(3), intervalMs: 1000, devices: [{ reads_ps: 0, writes_ps: 0, read_kb_ps: 0, write_kb_ps: 0, queue_depth: 0 }] },
  ]);
  assert.equal(d.length, 2);
  assert.deepEqual(d[0], { from_ms: T0, to_ms: T0 + 1000, reads_ps: 100, writes_ps: 1000, write_kb_ps: 9200, avg_io_kb: 9.1, queue_depth: 201, source: 'disk sampler' });
  assert.equal(d[1].avg_io_kb, null);
  assert.equal(diskAt(d, T0 + 200, T0 + 1200), d[0]);
  assert.equal(diskAt(d, T0 + 1000, T0 + 2000), null);
});

test('Enhanced Monitoring (replayed RDSOSMetrics messages): average IO size from the KB and IO rates, queue from avgQueueLen, each over the second before its timestamp', () => {
  const template = fs.readFileSync(path.join(__dirname, '..', 'targets', 'aws', 'fixtures', 'rds-os-metrics-message.json'), 'utf8');
  const message = (s: number, v: Record<string, number>) => parseOsMessage(fill(template, { TIMESTAMP: iso(s).replace('.000Z', 'Z'), ...v })) as OsMessage;
  const f = osSeries([
    message(2, { READ_IOPS: 10, WRITE_IOPS: 90, READ_KBPS: 80, WRITE_KBPS: 10620, QUEUE: 2.5 }), // the pool's ~107 KB writes
    message(1, { READ_IOPS: 0, WRITE_IOPS: 4000, READ_KBPS: 0, WRITE_KBPS: 24000, QUEUE: 310 }), // the vacuum storm: 6 KB, queue in the hundreds
  ]);
  const d = diskSecondsFromOs(f);
  assert.deepEqual(d.map((x) => [x.from_ms - T0, x.to_ms - T0, x.avg_io_kb, x.queue_depth, x.source]), [
    [0, 1000, 6, 310, 'Enhanced Monitoring'],
    [1000, 2000, 107, 2.5, 'Enhanced Monitoring'],
  ]);
  // A file written before the KB rates were kept: the queue, no size.
  const old = diskSecondsFromOs({ ...f, disks: f.disks.map(({ read_kb_ps: _r, write_kb_ps: _w, ...rest }) => rest) });
  assert.equal(old[0].avg_io_kb, null);
  assert.equal(old[0].queue_depth, 310);
});

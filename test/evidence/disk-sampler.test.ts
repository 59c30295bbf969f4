// test-mode: unit
// The disk sampler: /proc/diskstats parsed and differenced into iostat -x's per-second figures (pure,
// on a text sample), the device found from a folder's st_dev, and a sampler over a diskstats file that
// changes between readings writes one row a second.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { blockDeviceOf, diskDelta, majorMinor, parseDiskstats, startDiskSampler, startFolderDiskSampler, type DiskSample } from '../../lib/evidence/disk-sampler';
import { readJsonl } from '../../lib/evidence/jsonl-writer';
import { DiskSampleSchema } from '../../lib/evidence/records';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-disk-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// A kernel 5.x/6.x /proc/diskstats (20 columns: discards and flushes after the classic 11), one second apart.
const BEFORE = `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 90028 14068 3903666 50511 315407 91529 9760368 54749 0 40688 114242 33573 41 3311088 3498 101834 5483
 254       1 vda1 89000 14000 3900000 50000 315000 91500 9760000 54700 0 40600 114000 0 0 0 0 0 0
`;
// One second later: 100 reads of 8 KB (1600 sectors), 1000 writes of 6 KB (12000 sectors),
// io in flight 900 ms of the second, weighted 250,000 ms (a queue of 250).
const AFTER = `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 90128 14068 3905266 50611 316407 91529 9772368 304649 3 41588 364242 33573 41 3311088 3498 101834 5483
 254       1 vda1 89100 14000 3901600 50100 316000 91500 9772000 304600 3 41500 364000 0 0 0 0 0 0
`;

test('parseDiskstats reads the classic eleven counters by device name, partitions included', () => {
  const s = parseDiskstats(BEFORE);
  assert.deepEqual([...s.keys()], ['loop0', 'vda', 'vda1']);
  assert.deepEqual(s.get('vda'), { reads: 90028, sectorsRead: 3903666, msReading: 50511, writes: 315407, sectorsWritten: 9760368, msWriting: 54749, ioTicksMs: 40688, weightedMs: 114242 });
  // An older kernel's 14-column line still reads; a short or garbled line is skipped.
  const old = parseDiskstats('   8       0 sda 1 0 2 3 4 0 8 9 0 10 11\n   8 1 broken x y\n');
  assert.deepEqual(old.get('sda'), { reads: 1, sectorsRead: 2, msReading: 3, writes: 4, sectorsWritten: 8, msWriting: 9, ioTicksMs: 10, weightedMs: 11 });
  assert.equal(old.has('broken'), false);
});

test('diskDelta: per-second IOPS, KB/s, average IO size, queue depth (weighted ms / interval) and util %', () => {
  const a = parseDiskstats(BEFORE).get('vda')!;
  const b = parseDiskstats(AFTER).get('vda')!;
  const f = diskDelta('vda', a, b, 1000);
  assert.deepEqual(f, {
    device: 'vda',
    reads_ps: 100,
    writes_ps: 1000,
    read_kb_ps: 800,
    write_kb_ps: 6000,
    avg_io_kb: 6.2, // (800 + 6000) KB / 1100 IOs
    avg_write_kb: 6,
    queue_depth: 250,
    util_pct: 90,
    await_ms: 227.27, // (100 + 249,900) ms / 1100 IOs
  });
  // Over two seconds the rates halve, the sizes do not; an idle interval has no size and no await.
  const two = diskDelta('vda', a, b, 2000);
  assert.equal(two.writes_ps, 500);
  assert.equal(two.avg_io_kb, 6.2);
  assert.equal(two.queue_depth, 125);
  const idle = diskDelta('vda', a, a, 1000);
  assert.equal(idle.avg_io_kb, null);
  assert.equal(idle.await_ms, null);
  assert.equal(idle.util_pct, 0);
});

test('majorMinor decodes Linux dev_t; the folder under the tests has a block device or a named reason', () => {
  assert.deepEqual(majorMinor(65024), { major: 254, minor: 0 });
  assert.deepEqual(majorMinor(2049), { major: 8, minor: 1 });
  assert.deepEqual(majorMinor(0x10010301), { major: 259, minor: 65536 + 1 }); // glibc's layout: minor's high bits above bit 20
  try {
    const name = blockDeviceOf(tmp);
    assert.ok(parseDiskstats(fs.readFileSync('/proc/diskstats', 'utf8')).has(name), `${name} is in /proc/diskstats`);
  } catch (err) {
    assert.match((err as Error).message, /no block device behind .*RIG_DISK_DEVICE/);
  }
});

test('the sampler writes one row a second from a diskstats file that changes; a folder with no device writes why', async () => {
  const stats = path.join(tmp, 'diskstats');
  fs.writeFileSync(stats, BEFORE);
  const file = path.join(tmp, 'disk.jsonl');
  const sampler = startDiskSampler({ file, devices: ['vda'], intervalMs: 200, diskstats: stats });
  await new Promise((r) => setTimeout(r, 50));
  fs.writeFileSync(stats, AFTER);
  await new Promise((r) => setTimeout(r, 500));
  const { samples } = await sampler.stop();
  const rows = readJsonl<DiskSample>(file);
  assert.equal(rows.length, samples);
  assert.ok(samples >= 2);
  for (const r of rows) assert.ok(DiskSampleSchema.safeParse(r).success, JSON.stringify(r));
  assert.equal(rows[0].devices[0].device, 'vda');
  assert.equal(rows.reduce((s, r) => s + r.devices[0].writes_ps * (r.intervalMs / 1000), 0).toFixed(0), '1000');

  const none = path.join(tmp, 'none.jsonl');
  const prev = process.env.RIG_DISK_DEVICE;
  delete process.env.RIG_DISK_DEVICE;
  try {
    await startFolderDiskSampler([path.join(tmp, 'does-not-exist')], none).stop();
  } finally {
    if (prev !== undefined) process.env.RIG_DISK_DEVICE = prev;
  }
  const [only] = readJsonl<{ error: string }>(none);
  assert.match(only.error, /^no disk sampled: none of .*does-not-exist exists/);
});

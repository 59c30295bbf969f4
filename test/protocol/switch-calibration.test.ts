// test-mode: unit
// The slowed builds' calibration summary (lib/protocol/switch-calibration.ts): the added cost is the
// shift between the off and on blocks, with its exact rank interval; WAL per event pooled per side.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeLatency, summarizeWal, switchTable } from '../../lib/protocol/switch-calibration';

test('summarizeLatency: blocks shifted by exactly 200 µs read +200 at the median, the interval around it; the p99 apart', () => {
  const off = Array.from({ length: 10 }, (_, b) => Array.from({ length: 101 }, (_, i) => 1000 + i * 10 + b));
  const on = off.map((block) => block.map((x) => x + 200));
  const r = summarizeLatency('HC_ADDED_WAIT_US', 200, 'GET /v1/customers?limit=1', off, on, { addedWaitUs: '200' });
  assert.equal(r.addedMedianUs, 200);
  assert.ok(r.interval && r.interval[0] <= 200 && r.interval[1] >= 200, JSON.stringify(r.interval));
  assert.ok(r.confidence !== null && r.confidence >= 0.95);
  assert.deepEqual([r.requests, r.blocks, r.intendedUs, r.offMedianUs, r.onMedianUs, r.addedP99Us.estimate], [2020, 10, 200, 1504, 1704, 200]);
  // An A/A pair reads 0, with an interval that holds 0.
  const aa = summarizeLatency('HC_ADDED_CPU_US', 0, 'x', off, off, {});
  assert.equal(aa.addedMedianUs, 0);
  assert.ok(aa.interval && aa.interval[0] <= 0 && aa.interval[1] >= 0);
  // Too few blocks for a 95 % interval: none is claimed.
  assert.equal(summarizeLatency('HC_ADDED_DELAY_MS', 1, 'x', off.slice(0, 2), on.slice(0, 2), {}).interval, null);
  assert.equal(summarizeLatency('HC_ADDED_DELAY_MS', 1, 'x', off.slice(0, 2), on.slice(0, 2), {}).intendedUs, 1000);
  assert.throws(() => summarizeLatency('HC_ADDED_CPU_US', 1, 'x', off, on.slice(1), {}), /pair up, off 10 and on 9/);
  assert.throws(() => summarizeLatency('HC_ADDED_CPU_US', 1, 'x', [[]], [[1]], {}), /no timed request/);
});

test('summarizeWal: bytes per event pooled per side; the shift of the blocks\' bytes per event', () => {
  const off = [1, 2, 3, 4].map((i) => ({ walBytes: 1200 * 100 + i * 50, events: 100 }));
  const on = off.map((b) => ({ walBytes: b.walBytes + 200 * b.events, events: b.events }));
  const w = summarizeWal(off, on);
  assert.deepEqual([w.events, w.blocks, w.offBytesPerEvent, w.onBytesPerEvent, w.added.estimate], [800, 4, 1201.3, 1401.3, 200]);
  assert.throws(() => summarizeWal(off, [...on, { walBytes: 1, events: 0 }]), /pair up/);
  assert.throws(() => summarizeWal([{ walBytes: 5, events: 0 }], [{ walBytes: 5, events: 1 }]), /wrote no event/);
  const r = summarizeLatency('HC_EXTRA_WAL_BYTES', 200, 'POST /v1/usage-events (1 event)', [[1, 2]], [[3, 4]], {});
  const table = switchTable([{ ...r, wal: w }]);
  assert.match(table, /\| HC_EXTRA_WAL_BYTES \| 200 \| POST \/v1\/usage-events \(1 event\) \| - \| 2 \(none\) \| 1 \/ 3 \| 2 \| 200 \| 200 \(.* off 1201.3\) \| 4 \|/);
});

// test-mode: unit
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buckets, groupBySecond, streamDurationS, upperBound } from '../../lib/protocol/buckets';
import { INGEST } from '../../lib/protocol/sample-row';
import { cols, dropped, req } from './fixtures';

// Second 0: four requests at 1, 2, 3, 4 ms. Second 1: nothing at all. Second 2: a 201 at 10 ms,
// a 500 at 60 ms, and one dropped request.
const fixture = () =>
  cols([
    req(0.0, 1),
    req(0.25, 2),
    req(0.5, 3),
    req(0.75, 4, { lagMs: 2 }),
    req(2.1, 10),
    req(2.2, 60, { status: 500 }),
    dropped(2.3),
  ]);

test('the duration is the second of the latest intended time, plus one', () => {
  assert.equal(streamDurationS(fixture()), 3);
  assert.equal(streamDurationS(cols([])), 0);
  assert.equal(streamDurationS(cols([req(0.999999, 1)])), 1);
  assert.equal(streamDurationS(cols([req(1, 1)])), 2);
});

test('1-s buckets by intended time, empty seconds kept, drops counted apart, failures in latency', () => {
  const b = buckets(groupBySecond(fixture(), INGEST, 3), 1);
  assert.equal(b.length, 3);
  assert.deepEqual(b[0], { start_s: 0, width_s: 1, offered: 4, sent: 4, ok: 4, failed: 0, dropped: 0, samples: 4, p50_us: 2000, p99_us: 4000, max_us: 4000, over_50ms: 0 });
  assert.deepEqual(b[1], { start_s: 1, width_s: 1, offered: 0, sent: 0, ok: 0, failed: 0, dropped: 0, samples: 0, p50_us: null, p99_us: null, max_us: null, over_50ms: 0 });
  assert.deepEqual(b[2], { start_s: 2, width_s: 1, offered: 3, sent: 2, ok: 1, failed: 1, dropped: 1, samples: 2, p50_us: 10000, p99_us: 60000, max_us: 60000, over_50ms: 1 });
});

test('a run shorter than 10 s is a single (partial) 10-s bucket', () => {
  const b = buckets(groupBySecond(fixture(), INGEST, 3), 10);
  // latencies {1,2,3,4,10,60}: p50 = 3rd = 3 ms, p99 = 6th = 60 ms
  assert.deepEqual(b, [{ start_s: 0, width_s: 3, offered: 7, sent: 6, ok: 5, failed: 1, dropped: 1, samples: 6, p50_us: 3000, p99_us: 60000, max_us: 60000, over_50ms: 1 }]);
});

test('10-s buckets of a 25-s run: 0, 10, 20 (the last partial)', () => {
  const rows = [req(0.5, 1), req(9.9, 2), req(10, 3), req(24.5, 4)];
  const b = buckets(groupBySecond(cols(rows), INGEST, 25), 10);
  assert.deepEqual(b.map((x) => [x.start_s, x.samples, x.p99_us]), [[0, 2, 2000], [10, 1, 3000], [20, 1, 4000]]);
  assert.deepEqual(b.map((x) => x.width_s), [10, 10, 5], 'the last bucket says it covers 5 s');
});

test('the coordinated-omission corrected latency is done - intended', () => {
  const g = groupBySecond(fixture(), INGEST, 3, 'corrected');
  assert.deepEqual([...g.values.subarray(g.offsets[0], g.offsets[1])], [1000, 2000, 3000, 6000]);
});

test('an all-dropped run has buckets with offers and no latency', () => {
  const b = buckets(groupBySecond(cols([dropped(0.1), dropped(0.2), dropped(1.5)]), INGEST, 2), 1);
  assert.deepEqual(b.map((x) => [x.offered, x.dropped, x.samples, x.p99_us]), [[2, 2, 0, null], [1, 1, 0, null]]);
});

test('other scenarios are not pooled into ingest buckets', () => {
  const b = buckets(groupBySecond(cols([req(0.1, 1), req(0.2, 900, { scenario: 'probe:aggregate' })]), INGEST, 1), 1);
  assert.equal(b[0].samples, 1);
  assert.equal(b[0].max_us, 1000);
});

test('bucket width must be whole seconds; upperBound counts values <= x', () => {
  assert.throws(() => buckets(groupBySecond(fixture(), INGEST, 3), 0.5), RangeError);
  assert.equal(upperBound([1, 2, 2, 3], 2), 3);
  assert.equal(upperBound([], 2), 0);
});

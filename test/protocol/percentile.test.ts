// test-mode: unit
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { median, percentile, percentileOfSorted, percentiles, select } from '../../lib/protocol/percentile';

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

test('nearest rank: p99 of 1..100 is 99, of 1..1000 is 990, p50 of 4 values is the 2nd', () => {
  assert.equal(percentileOfSorted(range(1, 100), 99), 99);
  assert.equal(percentileOfSorted(range(1, 1000), 99), 990);
  assert.equal(percentileOfSorted([1, 2, 3, 4], 50), 2);
  assert.equal(percentileOfSorted([1, 2, 3, 4, 5], 50), 3);
  assert.equal(percentileOfSorted(range(1, 1000), 99.9), 999);
});

test('p0 is the smallest, p100 the largest, one value is every percentile, none is NaN', () => {
  assert.equal(percentileOfSorted([3, 7, 9], 0), 3);
  assert.equal(percentileOfSorted([3, 7, 9], 100), 9);
  assert.equal(percentileOfSorted([42], 1), 42);
  assert.equal(percentileOfSorted([42], 99), 42);
  assert.ok(Number.isNaN(percentileOfSorted([], 50)));
  assert.ok(Number.isNaN(percentile([], 99)));
  assert.throws(() => percentileOfSorted([1], 101), RangeError);
  assert.throws(() => percentile([1], -1), RangeError);
});

test('a percentile is a value some request really had (no interpolation)', () => {
  assert.equal(percentile([10, 20], 50), 10);
  assert.equal(percentile([10, 20], 99), 20);
});

test('quickselect percentiles agree with the sorted definition, duplicates included', () => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let trial = 0; trial < 50; trial++) {
    const n = 1 + Math.floor(rnd() * 3000);
    const vals = Array.from({ length: n }, () => Math.floor(rnd() * (trial % 2 ? 20 : 100000)));
    const sorted = [...vals].sort((a, b) => a - b);
    const ps = [0, 1, 50, 90, 99, 99.9, 100];
    assert.deepEqual(percentiles(vals, ps), ps.map((p) => percentileOfSorted(sorted, p)));
  }
  const a = Float64Array.from([5, 1, 4, 1, 5, 9, 2, 6]);
  assert.equal(select(a, 0), 1);
  assert.equal(select(a, 7), 9);
});

test('percentile() does not reorder its input', () => {
  const v = [3, 1, 2];
  percentile(v, 50);
  assert.deepEqual(v, [3, 1, 2]);
});

test('median: middle of an odd count, mean of the two middles of an even count', () => {
  assert.equal(median([5, 1, 3]), 3);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([7]), 7);
  assert.ok(Number.isNaN(median([])));
});

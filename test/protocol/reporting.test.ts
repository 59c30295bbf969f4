// test-mode: unit
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatFigure, summarizeRepeats } from '../../lib/protocol/reporting';

const r = (passed: boolean, p99: number | null, extra: Record<string, number | null> = {}, interrupted = false) => ({ passed, interrupted, figures: { p99_ms: p99, ...extra } });

test('4 of 5: the median and range are over the passing repeats only', () => {
  const s = summarizeRepeats([r(true, 22.6), r(true, 21.9), r(false, 900), r(true, 23.4), r(true, 22.0)]);
  assert.equal(s.label, '4/5');
  assert.equal(s.held, false, 'held only when every repeat passed');
  // passing p99s 21.9, 22.0, 22.6, 23.4: median (22.0 + 22.6) / 2, range 21.9-23.4; the 900 is in neither
  assert.deepEqual(s.figures.p99_ms, { median: 22.3, min: 21.9, max: 23.4, n: 4 });
  assert.equal(formatFigure(s.figures.p99_ms, 'ms'), '22.3 ms');
  assert.equal(formatFigure(s.figures.p99_ms, 'ms', { range: true }), '21.9–23.4 ms');
});

test('5 of 5 is held; an odd count has a middle value', () => {
  const s = summarizeRepeats([r(true, 40.2), r(true, 42.8), r(true, 41.0), r(true, 41.5), r(true, 40.9)]);
  assert.deepEqual([s.label, s.held], ['5/5', true]);
  assert.equal(s.figures.p99_ms?.median, 41.0);
  assert.equal(formatFigure(s.figures.p99_ms, 'ms', { range: true }), '40.2–42.8 ms');
});

test('interrupted repeats are recorded but not counted', () => {
  const s = summarizeRepeats([r(true, 10), r(false, 5, {}, true), r(true, 12)]);
  assert.deepEqual([s.passed, s.total, s.interrupted, s.label, s.held], [2, 2, 1, '2/2', true]);
  assert.deepEqual(s.figures.p99_ms, { median: 11, min: 10, max: 12, n: 2 });
});

test('no passing repeat: no figure; a figure missing from a passing repeat is skipped for it alone', () => {
  const none = summarizeRepeats([r(false, 10), r(false, 20)]);
  assert.deepEqual([none.label, none.held, none.figures.p99_ms], ['0/2', false, null]);
  assert.equal(formatFigure(none.figures.p99_ms, 'ms'), '—');
  const some = summarizeRepeats([r(true, 10, { worst_10s_p99_ms: null }), r(true, 20, { worst_10s_p99_ms: 52 })]);
  assert.deepEqual(some.figures.worst_10s_p99_ms, { median: 52, min: 52, max: 52, n: 1 });
  assert.equal(formatFigure(some.figures.worst_10s_p99_ms, 'ms', { range: true }), '52.0 ms');
  assert.deepEqual(summarizeRepeats([]).held, false);
});

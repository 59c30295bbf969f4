// A load node's clock against the control host's (issue 37), over real HTTP: the exchange reads the
// offset within its own uncertainty, a node whose clock is off past the instrument's bound refuses
// naming itself, and the bound is the instrument's schedule-lag bound. Behaviour only, never timing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measureClockOffset, startClockServer } from '../../lib/loadgen/clock-offset';
import { checkClock, clockBoundMs, clockReading, ClockRefusal } from '../../lib/protocol/clock-offset';
import { instrumentLagLimitMs } from '../../lib/protocol/gates';

test('the same clock reads as no offset, within the exchange\'s uncertainty', async () => {
  const control = await startClockServer();
  try {
    const r = await measureClockOffset(control.url, 5);
    assert.equal(r.exchanges, 5);
    // the control's answer was taken between the request's departure and its answer, on the same clock
    assert.ok(Math.abs(r.offset_ms) <= r.uncertainty_ms + 1e-6, `offset ${r.offset_ms} within +/- ${r.uncertainty_ms}`);
  } finally {
    await control.close();
  }
});

test('a node whose clock is off past the instrument\'s bound refuses, naming the node', async () => {
  // The control host's clock 200 ms ahead of this node's: this node is 200 ms behind.
  const control = await startClockServer({ skewMs: 200 });
  try {
    const r = await measureClockOffset(control.url, 3);
    assert.ok(r.offset_ms < -150, `offset ${r.offset_ms}`);
    const bound = clockBoundMs(50);
    assert.equal(bound, instrumentLagLimitMs(50), "the instrument's own bound: 10 % of the p99 limit");
    assert.throws(() => checkClock(2, r, bound), (e: unknown) => e instanceof ClockRefusal && e.node === 2 && /^load node 2's clock is -\d+\.\d+ ms .* past the instrument's bound of 5 ms/.test(e.message));
  } finally {
    await control.close();
  }
});

test('the reading keeps the exchange with the shortest round trip; its uncertainty counts against the node', () => {
  const r = clockReading([
    { sentMs: 1000, receivedMs: 1040, controlMs: 1000 },
    { sentMs: 2000, receivedMs: 2002, controlMs: 1998 },
  ]);
  assert.deepEqual(r, { offset_ms: 3, uncertainty_ms: 1, exchanges: 2 });
  assert.doesNotThrow(() => checkClock(0, r, 4));
  assert.throws(() => checkClock(0, r, 3.5), ClockRefusal);
  assert.throws(() => clockReading([]), /no clock exchange/);
});

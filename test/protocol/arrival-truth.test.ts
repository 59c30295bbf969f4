// test-mode: unit
// The calibration's checks of arrivals as the server saw them (issue 35), on synthetic server records
// whose truth is known: the server's clock 1,234 s ahead of the generator's, each arrival up to a
// tick late. A spike whose requests arrive on time has both edges within 1 ms; one whose peak starts
// 3 ms late on every request fails at that edge; a Poisson schedule's gaps pass the KS test, a
// constant schedule's fail it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serverEdges, serverGapTest, serverPhaseCounts, type ArrivalTruth } from '../../lib/protocol/arrival-truth';
import { arrivalSchedule, type ArrivalSchedule } from '../../lib/protocol/arrivals';

const CLOCK_MS = 1_234_000;
/** Arrivals (server ms) of every request: its intended time, the clock's offset, a lateness of up to a tick. */
function truthOf(s: ArrivalSchedule, lateUs: (k: number, t: number) => number = (k) => (k * 7919) % 900): ArrivalTruth[] {
  return Array.from({ length: s.count }, (_, k) => ({ request: k, arrival: CLOCK_MS + (s.at(k) + lateUs(k, s.at(k))) / 1000 }));
}

const spike = arrivalSchedule({ rate: 500, batch: 5, seconds: 6, arrivals: { shape: 'spike', peak: 2500, at: 2, for: 2 } });

test('a spike the server saw on time: both edges within 1 ms, each phase holding the schedule\'s requests', () => {
  const edges = serverEdges(truthOf(spike), spike, [2e6, 4e6]);
  assert.ok(edges.every((e) => e.ok), JSON.stringify(edges));
  const phases = serverPhaseCounts(truthOf(spike), spike, [
    [0, 2e6],
    [2e6, 4e6],
    [4e6, 6e6],
  ]);
  for (const p of phases) assert.ok(Math.abs(p.seen - p.scheduled) <= 1, JSON.stringify(p));
  assert.deepEqual(phases.map((p) => p.scheduled), [200, 1000, 200]);
});

test('a spike whose first 50 ms reached the server 3 ms late fails at that edge, not at the other', () => {
  const late = truthOf(spike, (k, t) => (t >= 2e6 && t < 2.05e6 ? 3000 : (k * 7919) % 900));
  const [start, end] = serverEdges(late, spike, [2e6, 4e6]);
  assert.equal(start.ok, false);
  assert.ok(start.after_us > 2000, `after ${start.after_us}`);
  assert.equal(end.ok, true);
});

test('the gaps the server saw: a Poisson schedule passes the KS test, a constant one fails it', () => {
  const poisson = arrivalSchedule({ rate: 500, batch: 5, seconds: 6, arrivals: { shape: 'poisson', seed: 3 } });
  assert.equal(serverGapTest(truthOf(poisson), poisson, 100).passed, true);
  const constant = arrivalSchedule({ rate: 500, batch: 5, seconds: 6, arrivals: null });
  const c = serverGapTest(truthOf(constant), constant, 100);
  assert.equal(c.passed, false);
  assert.ok(c.d > 0.5, `D ${c.d}`);
});

// test-mode: unit
// Calibration against measured truth, the pure part (lib/protocol/calibration-truth.ts): the stream's
// rows joined to the server's per-request times by request number, the floor judged against the
// smallest p99 limit, and case 1 judged by the server's own p50 and the client's excess over the floor.
// No servers: synthetic rows whose truth is known exactly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CALIBRATION_TOLERANCES,
  joinTruth,
  judgeAgainstFloor,
  judgeFloor,
  requestOfIntended,
  type FloorFigures,
  type ServerTruthRow,
  type TruthFigures,
} from '../../lib/protocol/calibration-truth';
import { SampleColumns, type SampleRow } from '../../lib/protocol/sample-row';

const intended = (n: number, rate: number) => Math.floor((n * 1e6) / rate);

test('the intended time names the request: the inverse of the generator schedule, for rates that do not divide a second', () => {
  for (const rate of [200, 300, 333.3333, 7, 9999]) {
    for (let n = 0; n < 5000; n++) assert.equal(requestOfIntended(intended(n, rate), rate), n, `rate ${rate}, request ${n}`);
  }
  assert.equal(requestOfIntended(1, 200), -1, 'no request is intended at 1 µs at 200/s');
});

/** n requests: client latency = server time + excess(n); the server's rows in another order. */
function synthetic(count: number, rate: number, serverMs: (n: number) => number, excessUs: (n: number) => number) {
  const rows: SampleRow[] = [];
  const truth: ServerTruthRow[] = [];
  for (let n = 0; n < count; n++) {
    const i = intended(n, rate);
    const sent = i + 50;
    const server = serverMs(n);
    const done = sent + Math.round(server * 1000) + excessUs(n);
    rows.push({ scenario: 'ingest', intended_us: i, sent_us: sent, done_us: done, status: 201, events: 5, quantity: 10 });
    const arrival = 1_000_000 + n * 3.25; // the server's own clock: another origin entirely
    truth.push({ request: n, arrival, written: arrival + server, status: 201 });
  }
  truth.reverse();
  return { rows, truth };
}

test('joinTruth: server time, client time and their difference per request, by request number', () => {
  // excess 100 µs for most, 3 ms for every 50th (2 %): p50 0.1 ms, p99 3 ms
  const { rows, truth } = synthetic(2000, 300, () => 5, (n) => (n % 50 === 0 ? 3000 : 100));
  // a dropped row and a probe row are not joined
  rows.push({ scenario: 'ingest', intended_us: intended(2000, 300), sent_us: null, done_us: null, status: -1, events: 5, quantity: 0 });
  rows.push({ scenario: 'probe:customers', intended_us: 7, sent_us: 8, done_us: 900, status: 200, events: 0, quantity: 0 });
  const t = joinTruth(SampleColumns.fromRows(rows), 300, truth);
  assert.equal(t.joined, 2000);
  assert.equal(t.client_only, 0);
  assert.equal(t.server_only, 0);
  assert.equal(t.server_p50_ms, 5);
  assert.equal(t.excess_p50_ms, 0.1);
  assert.equal(t.excess_p99_ms, 3);
  assert.equal(t.client_p50_ms, 5.1);
});

test('joinTruth: a sent request the server never saw, and a server record no row matches, are counted', () => {
  const { rows, truth } = synthetic(100, 200, () => 0, () => 80);
  const lost = truth.findIndex((r) => r.request === 7);
  truth.splice(lost, 1);
  truth.push({ request: 5000, arrival: 1, written: 2, status: 201 });
  const t = joinTruth(SampleColumns.fromRows(rows), 200, truth);
  assert.deepEqual([t.joined, t.client_only, t.server_only], [99, 1, 1]);
  assert.ok(judgeFloor(t, 50).problems.some((p) => p.includes('1 sent requests have no server record')));
});

const figures = (o: Partial<TruthFigures>): TruthFigures => ({
  joined: 2400,
  client_only: 0,
  server_only: 0,
  server_p50_ms: 0.05,
  server_p99_ms: 0.2,
  client_p50_ms: 0.15,
  client_p99_ms: 0.6,
  excess_p50_ms: 0.1,
  excess_p99_ms: 0.4,
  schedule_lag_p99_ms: 0.3,
  ...o,
});

test('the floor: kept as evidence, refused when its p99 is over 20 % of the smallest p99 limit, naming the figure', () => {
  const ok = judgeFloor(figures({}), 50);
  assert.deepEqual(ok.problems, []);
  assert.deepEqual(ok.floor, { samples: 2400, p50_ms: 0.1, p99_ms: 0.4, p99_limit_ms: 50, share_of_limit: 0.008 });

  const coarse = judgeFloor(figures({ excess_p99_ms: 12.4 }), 50);
  assert.equal(coarse.floor?.p99_ms, 12.4, 'a refused floor is still recorded');
  assert.equal(coarse.problems.length, 1);
  assert.match(coarse.problems[0], /^floor p99 12\.40 ms is 24\.8 % of the smallest p99 limit 50 ms, over 20 % \(10\.00 ms\)/);
  // the same floor is fine for a 100-ms limit: fine enough is relative to what will be judged
  assert.deepEqual(judgeFloor(figures({ excess_p99_ms: 12.4 }), 100).problems, []);
  assert.equal(CALIBRATION_TOLERANCES.floorShareOfLimit, 0.2);

  assert.ok(judgeFloor(figures({ joined: 1999 }), 50).problems.some((p) => p.startsWith('1999 samples, expected >= 2000')));
});

const floor: FloorFigures = { samples: 2400, p50_ms: 0.1, p99_ms: 0.4, p99_limit_ms: 50, share_of_limit: 0.008 };

test('case 1: the server proves its own accuracy; the client is judged by its excess over the server, against the floor', () => {
  // a host whose loopback costs 1 ms: the client sees ~6 ms against "5 ms", yet the instrument is right
  const slowLoopback: FloorFigures = { ...floor, p50_ms: 1.06, p99_ms: 1.9 };
  assert.deepEqual(judgeAgainstFloor(figures({ server_p50_ms: 5.04, client_p50_ms: 5.85, excess_p50_ms: 1.12, excess_p99_ms: 2.5 }), 5, slowLoopback), []);

  const serverOff = judgeAgainstFloor(figures({ server_p50_ms: 5.31, excess_p50_ms: 0.1 }), 5, floor);
  assert.deepEqual(serverOff, ['server-side p50 5.31 ms, expected 5 ms ± 0.2: the calibration server is off, not the instrument']);

  const slowClient = judgeAgainstFloor(figures({ server_p50_ms: 5.02, excess_p50_ms: 1.1 }), 5, floor);
  assert.deepEqual(slowClient, ['client excess p50 1.10 ms over the server, expected <= floor p50 0.10 ms + 0.75 ms = 0.85 ms']);
  assert.deepEqual(judgeAgainstFloor(figures({ server_p50_ms: 5.02, excess_p50_ms: 0.85 }), 5, floor), [], 'the floor + 0.75 ms itself holds');

  const lateTail = judgeAgainstFloor(figures({ server_p50_ms: 5.02, excess_p99_ms: 18.7 }), 5, floor);
  assert.deepEqual(lateTail, ['client excess p99 18.70 ms over the server, expected <= 20 % of the smallest p99 limit 50 ms (10.00 ms)']);

  assert.ok(judgeAgainstFloor(figures({ server_p50_ms: 5 }), 5, null).some((p) => p.startsWith('no floor measured')));
});

test('a generator that sends late is refused in the floor and in case 1: schedule lag p99 over 20 % of the smallest p99 limit', () => {
  const late = 'schedule lag p99 12.40 ms (sent - intended), over 20 % of the smallest p99 limit 50 ms (10.00 ms): the generator sends late';
  assert.deepEqual(judgeFloor(figures({ schedule_lag_p99_ms: 12.4 }), 50).problems, [late]);
  assert.deepEqual(judgeAgainstFloor(figures({ server_p50_ms: 5.02, schedule_lag_p99_ms: 12.4 }), 5, floor), [late]);
  assert.deepEqual(judgeFloor(figures({ schedule_lag_p99_ms: 10 }), 50).problems, [], '20 % of the limit itself holds');
  assert.deepEqual(judgeFloor(figures({ schedule_lag_p99_ms: 12.4 }), 100).problems, [], 'and is relative to the limit');
});

// test-mode: unit
// Arrival schedules (issue 35): each shape's times are whole, strictly increasing, found again by
// time, and follow the shape second by second; a plan without arrivals is today's to the byte; a plan
// with them travels in a version-2 record and holds every ingest row to its own schedule.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { traceGapsUs, traceTimesUs } from '../../lib/protocol/arrival-trace';
import { analyzeSamples } from '../../lib/protocol/analysis';
import { arrivalSchedule, arrivalsProblem, rateAt, schedulePerSecond, type ArrivalSchedule, type Arrivals, type ScheduleInput } from '../../lib/protocol/arrivals';
import { ksExponential } from '../../lib/protocol/ks-exponential';
import { SampleColumns, SampleFormatError, type SampleRow } from '../../lib/protocol/sample-row';
import { countBefore, formatPlanRecord, parsePlanRecord, scheduledPerSecond, scheduledUs, type StreamPlan } from '../../lib/protocol/stream-plan';

/** Every k is strictly after k - 1, whole, inside the window, and indexOf finds it (and nothing 1 µs later). */
function assertWellFormed(s: ArrivalSchedule, windowUs: number): void {
  let prev = -1;
  for (let k = 0; k < s.count; k++) {
    const t = s.at(k);
    assert.ok(Number.isInteger(t) && t > prev && t < windowUs, `request ${k} at ${t} (previous ${prev}, window ${windowUs})`);
    assert.equal(s.indexOf(t), k, `indexOf(at(${k}))`);
    if (k + 1 < s.count && s.at(k + 1) > t + 1) assert.equal(s.indexOf(t + 1), -1, `indexOf(at(${k}) + 1)`);
    prev = t;
  }
  assert.ok(s.at(s.count) >= windowUs || s.count === 0 || Number.isNaN(s.at(s.count)) || s.at(s.count) === undefined, 'the next request would be at or after the end');
}

const input = (rate: number, batch: number, seconds: number, arrivals: Arrivals | null): ScheduleInput => ({ rate, batch, seconds, arrivals });

test('without arrivals the schedule is the protocol constant one, and the #plan record is byte-identical to today\'s', () => {
  for (const [rate, batch, seconds] of [
    [1000, 10, 600],
    [1200, 5, 3],
    [7, 1, 2.5],
    [24_000, 10, 30],
  ] as const) {
    const s = arrivalSchedule(input(rate, batch, seconds, null));
    const rr = rate / batch;
    assert.equal(s.count, countBefore(rr, Math.round(seconds * 1e6)));
    for (const k of [0, 1, 2, 3, 17, s.count - 1]) assert.equal(s.at(k), scheduledUs(rr, k));
  }
  // The record as every stream since issue 25 has carried it: no `arrivals` key, version 1.
  const plan = { mode: 'open' as const, rate: 1000, batch: 10, seconds: 600, probe_rate: 5, run_tag: 'rig-x' };
  assert.equal(formatPlanRecord(plan), '#plan {"v":1,"mode":"open","rate":1000,"batch":10,"seconds":600,"probe_rate":5,"run_tag":"rig-x"}\n');
  const back = parsePlanRecord(formatPlanRecord(plan).slice(6, -1));
  assert.equal('arrivals' in back, false, 'a constant plan read back has no arrivals key (its report is unchanged)');
});

test('a spike: the base rate, the peak from `at` for `for` seconds to the request, then the base again', () => {
  // 100 requests/s, 500 from 2 s to 5 s, over 8 s.
  const p = input(1000, 10, 8, { shape: 'spike', peak: 5000, at: 2, for: 3 });
  const s = arrivalSchedule(p);
  assertWellFormed(s, 8e6);
  assert.deepEqual([...schedulePerSecond(s, 8)], [100, 100, 500, 500, 500, 100, 100, 100]);
  // The edges are exact: the first request of the spike is at 2 s to the µs, the first after it at 5 s.
  assert.equal(s.at(200), 2_000_000);
  assert.equal(s.at(199), 1_990_000);
  assert.equal(s.at(201), 2_002_000);
  assert.equal(s.at(1700), 5_000_000);
  assert.equal(s.at(1701), 5_010_000);
  assert.equal(rateAt(p, 1.9), 100);
  assert.equal(rateAt(p, 2), 500);
  assert.equal(rateAt(p, 5), 100);
});

test('a ramp: the rate climbs linearly to `to` over `over` seconds, then holds', () => {
  // 100 -> 300 requests/s over 4 s, then 300 for 2 s: 800 + 600 requests.
  const s = arrivalSchedule(input(100, 1, 6, { shape: 'ramp', to: 300, over: 4 }));
  assertWellFormed(s, 6e6);
  assert.equal(s.count, 1400);
  const per = [...schedulePerSecond(s, 6)];
  // Second s of the ramp holds the integral of the rate over it: 125, 175, 225, 275 (each ±1 for the floor).
  [125, 175, 225, 275, 300, 300].forEach((want, i) => assert.ok(Math.abs(per[i] - want) <= 1, `second ${i}: ${per[i]}, expected ~${want}`));
  // Down a ramp works the same way.
  const down = arrivalSchedule(input(300, 1, 4, { shape: 'ramp', to: 100, over: 4 }));
  assertWellFormed(down, 4e6);
  assert.equal(down.count, 800);
  // From 0 (k6's ramping-arrival-rate usually starts there): only the first request is at 0.
  const fromZero = arrivalSchedule(input(1, 1, 2, { shape: 'ramp', to: 200, over: 2 }));
  assertWellFormed(fromZero, 2e6);
});

test('diurnal: a raised cosine from the configuration rate to max; a whole period holds its mean', () => {
  const s = arrivalSchedule(input(100, 1, 20, { shape: 'diurnal', max: 500, period: 10 }));
  assertWellFormed(s, 20e6);
  assert.ok(Math.abs(s.count - 6000) <= 1, `two periods at a mean of 300/s: ${s.count}`);
  const per = schedulePerSecond(s, 20);
  assert.ok(per[0] < 130 && per[4] > 470 && per[5] > 470 && per[9] < 130, `trough, peak, trough: ${[...per].join(',')}`);
});

test('poisson: reproducible from its seed, exponential gaps of the plan\'s mean, each k found again', () => {
  const p = input(2000, 10, 30, { shape: 'poisson', seed: 42 });
  const a = arrivalSchedule(p);
  const b = arrivalSchedule(p);
  assertWellFormed(a, 30e6);
  const times = Array.from({ length: a.count }, (_, k) => a.at(k));
  assert.deepEqual(Array.from({ length: b.count }, (_, k) => b.at(k)), times, 'the same seed gives the same schedule');
  const other = arrivalSchedule(input(2000, 10, 30, { shape: 'poisson', seed: 43 }));
  assert.notEqual(other.at(10), a.at(10), 'another seed gives another schedule');
  // 200 requests/s for 30 s: 6,000 expected, sd ~77.
  assert.ok(Math.abs(a.count - 6000) < 400, `count ${a.count}`);
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  const ks = ksExponential(gaps, 200);
  assert.ok(ks.passed, `KS D ${ks.d.toFixed(4)} p ${ks.p_value}`);
  // Random access after the fact gives the same times as the pass in order.
  assert.equal(a.at(17), times[17]);
  assert.equal(a.at(5000), times[5000]);
});

test('a trace replayed at speed 2: every intended time is the trace\'s offset halved, within 1 ms (here to the µs)', () => {
  const offsetsMs = [0, 1.5, 1.5, 3, 10, 10.25, 400, 401, 1999.999, 2500];
  const text = `# offsets in ms\n${offsetsMs.join('\n')}\n`;
  const times = traceTimesUs(text, 'offsets');
  const gaps = traceGapsUs(times, 2);
  const s = arrivalSchedule(input(1000, 10, 1.2, { shape: 'trace', speed: 2, gaps_us: gaps }));
  assertWellFormed(s, 1.2e6);
  assert.equal(s.count, offsetsMs.filter((o) => o / 2 < 1200).length, 'requests after the window are cut');
  for (let k = 0; k < s.count; k++) assert.ok(Math.abs(s.at(k) - (offsetsMs[k] * 1000) / 2) <= 1000, `request ${k}: ${s.at(k)} µs vs ${offsetsMs[k] / 2} ms`);
  // Two requests on one instant are 1 µs apart.
  assert.equal(s.at(2) - s.at(1), 1);
});

test('a k6 JSON export: its http_reqs points in time order, other metrics skipped', () => {
  const line = (metric: string, time: string) => JSON.stringify({ type: 'Point', data: { time, value: 1, tags: null }, metric });
  const text = [
    JSON.stringify({ type: 'Metric', data: { type: 'counter' }, metric: 'http_reqs' }),
    line('http_reqs', '2017-05-09T14:34:45.625742514+02:00'),
    line('vus', '2017-05-09T14:34:45.000000000+02:00'),
    line('http_reqs', '2017-05-09T12:34:45.125Z'),
    line('http_reqs', '2017-05-09T14:34:46.625742999+02:00'),
  ].join('\n');
  assert.deepEqual(traceTimesUs(text, 'k6'), [0, 500_742, 1_500_742]);
  assert.throws(() => traceTimesUs('{"type":"Point","metric":"http_reqs","data":{"time":"yesterday"}}', 'k6'), /line 1: 'yesterday' is not an RFC 3339 time/);
  assert.throws(() => traceTimesUs('1\n0.5\n', 'offsets'), /line 2: 0.5 ms is before the line above it/);
});

test('bad arrivals are refused naming the field and the fix', () => {
  const cases: Array<[Arrivals, RegExp]> = [
    [{ shape: 'spike', peak: 5000, at: 0, for: 3 }, /arrivals.at must be a time within the repeat \(0 < at < 10 s\)/],
    [{ shape: 'spike', peak: 5000, at: 8, for: 3 }, /arrivals.for must be > 0 seconds and end within the repeat \(at \+ for <= 10 s\)/],
    [{ shape: 'spike', peak: 5_000_000, at: 2, for: 3 }, /arrivals.peak must be > 0 events per second \(at most 100,000 requests\/s at batch 10\)/],
    [{ shape: 'ramp', to: 300, over: 11 }, /arrivals.over must be > 0 seconds and at most the repeat's 10 s/],
    [{ shape: 'diurnal', max: 500, period: 10 }, /arrivals.max must be at least the configuration's rate 1000 ev\/s/],
    [{ shape: 'poisson', seed: -1 }, /arrivals.seed must be a whole number/],
    [{ shape: 'trace', speed: 0, gaps_us: [0] }, /arrivals.speed must be within \(0, 1000\]/],
    [{ shape: 'trace', speed: 1, gaps_us: [0, 0] }, /arrivals.gaps_us\[1\] must be a whole number of µs >= 1/],
    [{ shape: 'square' } as unknown as Arrivals, /arrivals.shape must be one of poisson, ramp, spike, diurnal, trace/],
  ];
  for (const [a, re] of cases) assert.match(arrivalsProblem(a, 1000, 10, 10) ?? 'accepted', re);
});

// ---- the plan record and the analysis ----

function shapedPlan(arrivals: Arrivals, rate = 1000, batch = 10, seconds = 8): StreamPlan {
  return { mode: 'open', rate, batch, seconds, probe_rate: 0, run_tag: 't', cut_short: false, cut_reason: null, source: 'stream', arrivals };
}

function rowsOn(s: ArrivalSchedule): SampleRow[] {
  const rows: SampleRow[] = [];
  for (let k = 0; k < s.count; k++) {
    const t = s.at(k);
    rows.push({ scenario: 'ingest', intended_us: t, sent_us: t + 100, done_us: t + 2100, status: 201, events: 10, quantity: 30 });
  }
  return rows;
}

test('a plan with arrivals travels as a version-2 record and is read back whole', () => {
  const plan = shapedPlan({ shape: 'spike', peak: 5000, at: 2, for: 3 });
  const rec = formatPlanRecord(plan);
  assert.match(rec, /^#plan \{"v":2,.*"arrivals":\{"shape":"spike","peak":5000,"at":2,"for":3\}\}\n$/);
  const back = parsePlanRecord(rec.slice(6, -1));
  assert.deepEqual(back.arrivals, plan.arrivals);
  // A version-1 record never carries arrivals, a version-2 one always does; bad arrivals name the field.
  assert.throws(() => parsePlanRecord(rec.slice(6, -1).replace('"v":2', '"v":1')), /version 1 carries no arrivals/);
  assert.throws(() => parsePlanRecord(rec.slice(6, -1).replace('"at":2', '"at":9')), /the #plan record's arrivals.at must be a time within the repeat/);
});

test('the analysis holds every ingest row to the shaped schedule, and counts delivery against it second by second', () => {
  const plan = shapedPlan({ shape: 'spike', peak: 5000, at: 2, for: 3 });
  const s = arrivalSchedule({ rate: 1000, batch: 10, seconds: 8, arrivals: plan.arrivals ?? null });
  const rows = rowsOn(s);
  const a = analyzeSamples(SampleColumns.fromRows(rows), { plan });
  assert.deepEqual([...scheduledPerSecond(plan)], [100, 100, 500, 500, 500, 100, 100, 100]);
  assert.equal(a.ingest.delivery?.scheduled, 2000);
  assert.deepEqual(a.ingest.delivery?.short_seconds, []);
  // A row of the constant schedule at the same base rate that the spike does not hold (2.001 s) is refused.
  const stray = [...rows, { ...rows[0], intended_us: 2_001_000, sent_us: 2_001_100, done_us: 2_003_100 }];
  assert.throws(() => analyzeSamples(SampleColumns.fromRows(stray), { plan }), (e: unknown) => e instanceof SampleFormatError && /not on the plan's spike schedule/.test(e.message));
  // Half the spike's second 3 missing: that second is short.
  const thin = rows.filter((r) => !(r.intended_us >= 3e6 && r.intended_us < 3.5e6));
  const t = analyzeSamples(SampleColumns.fromRows(thin), { plan });
  assert.deepEqual(t.ingest.delivery?.short_seconds, [3]);
});

test('the KS test: a constant-gap stream fails it, a Poisson stream passes, a wrong mean fails, the band absorbs a tick of jitter', () => {
  const n = 2000;
  const constant = new Array<number>(n).fill(5000); // 200/s, every gap 5 ms
  const c = ksExponential(constant, 200);
  assert.equal(c.passed, false);
  assert.ok(c.d > 0.6, `D ${c.d}`);
  const s = arrivalSchedule(input(200, 1, 12, { shape: 'poisson', seed: 7 }));
  const gaps: number[] = [];
  for (let k = 1; k < s.count; k++) gaps.push(s.at(k) - s.at(k - 1));
  assert.equal(ksExponential(gaps, 200).passed, true);
  assert.equal(ksExponential(gaps, 400).passed, false, 'the same gaps against twice the rate');
  // Each arrival moved by up to ±0.5 ms (a send tick): within a 1-ms band the test still passes, and a
  // constant stream still fails it.
  const jittered = gaps.map((g, i) => Math.max(0, g + ((i * 7919) % 1000) - 500));
  assert.equal(ksExponential(jittered, 200, 1000).passed, true);
  assert.equal(ksExponential(constant, 200, 1000).passed, false);
});

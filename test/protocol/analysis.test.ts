// test-mode: unit
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSamples } from '../../lib/protocol/analysis';
import { cols, dropped, req, second } from './fixtures';

test('every statistic of a small stream, computed by hand', () => {
  const a = analyzeSamples(
    cols([
      req(0.0, 1, { events: 10, quantity: 100 }),
      req(0.25, 2, { events: 10, quantity: 100 }),
      req(0.5, 3, { events: 10, quantity: 100 }),
      req(0.75, 4, { events: 10, quantity: 100, lagMs: 2 }),
      req(2.1, 10, { events: 10, quantity: 50 }),
      req(2.2, 60, { events: 10, quantity: 70, status: 500 }),
      dropped(2.3, { events: 10 }),
      req(0.5, 300, { scenario: 'probe:aggregate', events: 0, quantity: 0 }),
      req(1.5, 700, { scenario: 'probe:aggregate', events: 0, quantity: 0 }),
      req(1.6, 5, { scenario: 'probe:invoices', status: 500, events: 0, quantity: 0 }),
    ]),
  );
  const i = a.ingest;
  assert.equal(a.duration_s, 3);
  assert.deepEqual(
    { offered: i.offered, sent: i.sent, ok: i.ok, failed: i.failed, dropped: i.dropped, samples: i.samples },
    { offered: 7, sent: 6, ok: 5, failed: 1, dropped: 1, samples: 6 },
  );
  // latencies {1,2,3,4,10,60} ms: p50 = 3rd, p99 = 6th
  assert.deepEqual([i.p50_us, i.p99_us, i.max_us], [3000, 60000, 60000]);
  // claimed = what got a 2xx: 5 requests x 10 events, quantity 4 x 100 + 50
  assert.deepEqual([i.events_offered, i.events_claimed, i.quantity_claimed], [70, 50, 450]);
  assert.deepEqual([i.offered_rate_rps, i.delivered_rate_rps, i.offered_rate_evps, i.delivered_rate_evps], [7 / 3, 5 / 3, 70 / 3, 50 / 3]);
  // corrected {1,2,3,6,10,60}; lag {0,0,0,2,0,0}
  assert.deepEqual([i.co_p50_us, i.co_p99_us], [3000, 60000]);
  assert.deepEqual([i.schedule_lag_p50_us, i.schedule_lag_p99_us, i.schedule_lag_max_us], [0, 2000, 2000]);
  assert.equal(i.per_second.length, 3);
  assert.equal(i.ten_second.length, 1);
  assert.deepEqual([i.median_bucket_p99_us, i.worst_10s_p99_us], [60000, 60000]);
  assert.deepEqual(i.windows, []);
  assert.deepEqual(i.freeze_seconds, []);
  // 3 s: thirds of 1 s; first p99 4 ms, last 60 ms
  // thirds of 4 and 2 samples have no p99 of their own: no drift figure (not judgeable)
  assert.deepEqual(i.drift, { third_s: 1, first_samples: 4, last_samples: 2, first_p99_us: null, last_p99_us: null, ratio: null, first_p99_low_us: null, first_p99_high_us: null, last_p99_low_us: null, last_p99_high_us: null, ratio_low: null, ratio_high: null });
  // the probe is analysed apart, per endpoint, and never pooled into ingest
  assert.deepEqual(
    a.probe.map((p) => [p.scenario, p.samples, p.failed, p.p50_us, p.p99_us]),
    [
      ['probe:aggregate', 2, 0, 300000, 700000],
      ['probe:invoices', 1, 1, 5000, 5000],
    ],
  );
});

test('a freeze straddling a 10-s bucket edge: two freeze-seconds, one episode, no window', () => {
  // 20 s at 100 requests/s, 5 ms each, except a stall from 9.5 s to 10.5 s: a request intended at t
  // in that span is answered at 10.5 s.
  const rows = [];
  for (let s = 0; s < 20; s++) {
    rows.push(...second(s, 100, (k) => {
      const t = s + k / 100;
      return t >= 9.5 && t < 10.5 ? Math.round((10.5 - t) * 1000) : 5;
    }));
  }
  const i = analyzeSamples(cols(rows)).ingest;
  // second 9: 50 of 100 over 50 ms (510..1000 ms); second 10: 45 of 100 (60..500 ms)
  assert.deepEqual([i.per_second[9].over_50ms, i.per_second[9].max_us], [50, 1_000_000]);
  assert.deepEqual([i.per_second[10].over_50ms, i.per_second[10].max_us], [45, 500_000]);
  assert.deepEqual(i.freeze_seconds, [9, 10]);
  assert.equal(i.freeze_cadence_s, null);
  // bucket 0-9: 950 x 5 ms then 510..1000 ms: the 990th is the 40th of those = 900 ms;
  // bucket 10-19: 950 x 5 ms then 10..500 ms: the 990th = 400 ms
  assert.deepEqual(i.ten_second.map((b) => b.p99_us), [900_000, 400_000]);
  assert.equal(i.median_bucket_p99_us, 650_000);
  assert.equal(i.worst_10s_p99_us, 900_000);
  // the bucket rule sees no window here (two buckets, neither above 3 x 650 ms): the per-second
  // detector is what catches it, the protocol's "What this leaves" caveat
  assert.deepEqual(i.windows, []);
});

test('an all-dropped run: everything offered, nothing sent, no latency figures', () => {
  const a = analyzeSamples(cols([dropped(0.1), dropped(0.5), dropped(1.2), dropped(2.9)]));
  const i = a.ingest;
  assert.deepEqual([i.offered, i.sent, i.dropped, i.samples, i.ok, i.failed], [4, 0, 4, 0, 0, 0]);
  assert.deepEqual([i.p50_us, i.p99_us, i.max_us, i.co_p99_us, i.schedule_lag_p99_us, i.median_bucket_p99_us, i.worst_10s_p99_us], [null, null, null, null, null, null, null]);
  assert.equal(i.delivered_rate_evps, 0);
  assert.deepEqual(i.freeze_seconds, []);
  assert.deepEqual(i.windows, []);
  assert.equal(i.drift.ratio, null);
  assert.deepEqual(a.probe, []);
});

test('an empty stream analyses to zeros, not an error', () => {
  const a = analyzeSamples(cols([]));
  assert.equal(a.duration_s, 0);
  assert.equal(a.ingest.samples, 0);
  assert.equal(a.ingest.per_second.length, 0);
});

test('a configured duration longer than the stream counts its empty tail in the rates', () => {
  const a = analyzeSamples(cols([req(0.5, 1), req(1.5, 1)]), { durationS: 4 });
  assert.equal(a.duration_s, 4);
  assert.equal(a.ingest.per_second.length, 4);
  assert.equal(a.ingest.delivered_rate_rps, 0.5);
});

test('drift: thirds of whole seconds, by intended time', () => {
  // 9 s at 100/s: seconds 0-2 at 10 ms (one 40 ms outlier), 3-5 at 20 ms, 6-8 at 30 ms
  const rows = [];
  for (let s = 0; s < 9; s++) rows.push(...second(s, 100, (k) => (s < 3 ? (s === 1 && k === 0 ? 40 : 10) : s < 6 ? 20 : 30)));
  // thirds of 300 bound their p99 from below (rank 291 of 300) but not from above (that needs 435
  // samples at 97.5 %, quantile-interval.ts): the interval runs from 0 (30 ms over an unbounded first
  // p99) to unbounded, so 300 samples a third do not decide drift even at x3
  assert.deepEqual(analyzeSamples(cols(rows)).ingest.drift, {
    third_s: 3, first_samples: 300, last_samples: 300, first_p99_us: 10000, last_p99_us: 30000, ratio: 3,
    first_p99_low_us: 10000, first_p99_high_us: null, last_p99_low_us: 30000, last_p99_high_us: null, ratio_low: 0, ratio_high: null,
  });
  // 15 s at 100/s: thirds of 500 bound it both ways; the first third's one 40-ms outlier is its maximum
  // (rank 500, the upper bound), so the interval is x0.75 (30 / 40) to x3 (30 / 10)
  const wide = [];
  for (let s = 0; s < 15; s++) wide.push(...second(s, 100, (k) => (s < 5 ? (s === 1 && k === 0 ? 40 : 10) : s < 10 ? 20 : 30)));
  const w = analyzeSamples(cols(wide)).ingest.drift;
  assert.deepEqual([w.ratio, w.first_p99_low_us, w.first_p99_high_us, w.last_p99_low_us, w.last_p99_high_us, w.ratio_low, w.ratio_high], [3, 10000, 40000, 30000, 30000, 0.75, 3]);
  // 10 s: thirds of 3 s: [0,3) and [7,10); second 3 and 6 are in neither
  const ten = [];
  for (let s = 0; s < 10; s++) ten.push(...second(s, 40, () => (s === 3 || s === 6 ? 999 : s < 3 ? 10 : 15)));
  assert.deepEqual(analyzeSamples(cols(ten)).ingest.drift, {
    third_s: 3, first_samples: 120, last_samples: 120, first_p99_us: 10000, last_p99_us: 15000, ratio: 1.5,
    first_p99_low_us: 10000, first_p99_high_us: null, last_p99_low_us: 15000, last_p99_high_us: null, ratio_low: 0, ratio_high: null,
  });
  // a third of 99 samples has no p99 but its slowest request: no figure
  const thin = [];
  for (let s = 0; s < 9; s++) thin.push(...second(s, 33, () => 10));
  assert.deepEqual(analyzeSamples(cols(thin)).ingest.drift, { third_s: 3, first_samples: 99, last_samples: 99, first_p99_us: null, last_p99_us: null, ratio: null, first_p99_low_us: null, first_p99_high_us: null, last_p99_low_us: null, last_p99_high_us: null, ratio_low: null, ratio_high: null });
  // 2 s is too short for thirds
  assert.deepEqual(analyzeSamples(cols(second(0, 10, () => 1).concat(second(1, 10, () => 1)))).ingest.drift, { third_s: 0, first_samples: 0, last_samples: 0, first_p99_us: null, last_p99_us: null, ratio: null, first_p99_low_us: null, first_p99_high_us: null, last_p99_low_us: null, last_p99_high_us: null, ratio_low: null, ratio_high: null });
});

test('a single second of a single request', () => {
  const i = analyzeSamples(cols([req(0, 7)])).ingest;
  assert.deepEqual([i.duration_s, i.samples, i.p50_us, i.p99_us, i.per_second.length, i.ten_second.length, i.median_bucket_p99_us], [1, 1, 7000, 7000, 1, 1, 7000]);
  assert.equal(i.drift.ratio, null);
});

test('a partial last 10-s bucket is in the series but is not a 10-s p99: not the worst, not in the median or windows', () => {
  const rows = [];
  for (let s = 0; s < 20; s++) rows.push(...second(s, 100, () => 5));
  rows.push(...second(20, 100, () => 500)); // a 21-s run: its last bucket is second 20 alone
  const i = analyzeSamples(cols(rows)).ingest;
  assert.deepEqual(i.ten_second.map((b) => [b.start_s, b.width_s, b.p99_us]), [[0, 10, 5000], [10, 10, 5000], [20, 1, 500000]]);
  assert.equal(i.worst_10s_p99_us, 5000);
  assert.equal(i.median_bucket_p99_us, 5000);
  assert.deepEqual(i.windows, []);
  // a run shorter than one bucket: its one partial bucket is the whole run, and stands
  const short = analyzeSamples(cols([...second(0, 100, () => 5), ...second(1, 100, () => 9)])).ingest;
  assert.equal(short.worst_10s_p99_us, 9000);
});

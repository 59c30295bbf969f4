// test-mode: unit
// A repeat's p50 over the seconds of low host steal (lib/protocol/host-quiet.ts), and the comparison
// that reads it (lib/evidence/report/comparison.ts): a stream whose seconds under steal were made slow
// gives back the quiet seconds' known p50; a second only partly inside a quiet sample, or covered by
// none, is not quiet; a repeat mostly under steal has no quiet p50; and a comparison reads p50 over the
// quiet seconds only when every passing repeat of both sides can give it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIN_QUIET_SHARE, QUIET_STEAL_PCT, quietLatency, quietP50Applies, quietSeconds, type StealSample } from '../../lib/protocol/host-quiet';
import { SampleColumns } from '../../lib/protocol/sample-row';
import { quietP50Comparable } from '../../lib/evidence/report/comparison';
import type { RepeatFigures } from '../../lib/protocol/reporting';

const T0 = Date.parse('2026-12-07T21:04:50.000Z');
/** 5-s host samples over a 30-s repeat, each ending 5 s after the one before, with these steals. */
const samples = (steal: number[], offsetMs = 0): StealSample[] => steal.map((st, i) => ({ endMs: T0 + offsetMs + (i + 1) * 5000, intervalMs: 5000, stealPct: st }));

/** 10 requests a second for `seconds` s; a request in a second of `slow` takes 9 ms, others 3 ms (+ a µs per request, so the values differ). */
function stream(seconds: number, slow: (s: number) => boolean): SampleColumns {
  const c = new SampleColumns();
  for (let s = 0; s < seconds; s++) {
    for (let k = 0; k < 10; k++) {
      const t = s * 1e6 + k * 1e5;
      const lat = (slow(s) ? 9000 : 3000) + k;
      c.push({ scenario: 'ingest', intended_us: t, sent_us: t + 50, done_us: t + 50 + lat, status: 201, events: 1, quantity: 1 });
    }
  }
  return c;
}

test('a second is quiet when the samples over it cover it and all stayed under the bound; one touching a stolen sample, or uncovered, is not', () => {
  const q = quietSeconds(samples([0.5, 9, 1.9, QUIET_STEAL_PCT, 0.1]), T0, 30);
  // Five 5-s samples from t = 0: the second at 25-30 s is covered by none.
  assert.deepEqual(q.map((x) => (x ? 1 : 0)).join(''), '11111' + '00000' + '11111' + '00000' + '11111' + '00000');
  // Samples 400 ms late: second 0 is not wholly covered; a second straddling two quiet samples is quiet.
  const late = quietSeconds(samples([0, 0, 0, 0, 0, 0], 400), T0, 30);
  assert.deepEqual(late.map((x) => (x ? 1 : 0)).join(''), '0' + '1'.repeat(29));
  // ... and one straddling a quiet sample and a stolen one is not: the stolen sample covers 5.4-10.4 s,
  // so seconds 5 (5.0-6.0) to 10 (10.0-11.0) each touch it.
  const straddle = quietSeconds(samples([0, 9, 0, 0, 0, 0], 400), T0, 30);
  assert.deepEqual(straddle.map((x) => (x ? 1 : 0)).join(''), '01111' + '000000' + '1'.repeat(19));
  // A gap of a second between samples: the seconds in it are not quiet.
  const gap: StealSample[] = [{ endMs: T0 + 5000, intervalMs: 5000, stealPct: 0 }, { endMs: T0 + 11_000, intervalMs: 5000, stealPct: 0 }];
  assert.deepEqual(quietSeconds(gap, T0, 12).map((x) => (x ? 1 : 0)).join(''), '11111' + '0' + '11111' + '0');
});

test('the quiet p50 is the known p50 of the undisturbed seconds, though the disturbed ones move the whole repeat\'s', () => {
  // Seconds 5-14 were under steal and slow: a third of the repeat at 9 ms.
  const host = samples([0.4, 8.5, 7.2, 1.1, 0.9, 0.6]);
  const cols = stream(30, (s) => s >= 5 && s < 15);
  const q = quietLatency(cols, host, T0, 30);
  assert.deepEqual([q.quiet_seconds, q.seconds, q.samples, q.steal_bound_pct], [20, 30, 200, QUIET_STEAL_PCT]);
  // 200 quiet requests of 3.000-3.009 ms: the 100th (nearest rank) is 3.004 ms.
  assert.equal(q.p50_ms, 3.004);
  // Over every second the p50 is still 3 ms here; push the disturbed seconds past half and it is not.
  const mostly = stream(30, (s) => s >= 5 && s < 20);
  const hostMostly = samples([0.4, 8.5, 7.2, 6.1, 0.9, 0.6]);
  const q2 = quietLatency(mostly, hostMostly, T0, 30);
  assert.deepEqual([q2.quiet_seconds, q2.p50_ms], [15, 3.004]);
});

test('a repeat with fewer quiet seconds than the minimum share has no quiet p50', () => {
  const host = samples([9, 9, 9, 0.2, 9, 9]);
  const q = quietLatency(stream(30, () => false), host, T0, 30);
  assert.ok(5 / 30 < MIN_QUIET_SHARE);
  assert.deepEqual([q.quiet_seconds, q.p50_ms, q.samples], [5, null, 50]);
});

test('dropped requests and probe requests are in no quiet p50', () => {
  const c = stream(10, () => false);
  c.push({ scenario: 'ingest', intended_us: 2_500_000, status: -1, events: 1, quantity: 1 } as never);
  c.push({ scenario: 'probe:customers', intended_us: 2_600_000, sent_us: 2_600_010, done_us: 2_700_010, status: 200, events: 0, quantity: 0 } as never);
  const q = quietLatency(c, samples([0, 0]), T0, 10);
  assert.deepEqual([q.samples, q.p50_ms], [100, 3.004]);
});

test('a comparison reads the quiet p50 only when every passing repeat of both sides has host samples to give it', () => {
  const r = (passed: boolean, quiet: number | null | undefined): RepeatFigures => ({ passed, figures: { p50_ms: 3, ...(quiet !== undefined ? { p50_quiet_ms: quiet } : {}) } });
  assert.equal(quietP50Comparable([r(true, 3.1), r(true, null)], [r(true, 3.2)]), true);
  // A baseline from before host samples: filtered beside unfiltered would not compare like with like.
  assert.equal(quietP50Comparable([r(true, 3.1)], [r(true, undefined)]), false);
  // A failed repeat is in no figure, so it does not decide.
  assert.equal(quietP50Comparable([r(true, 3.1), r(false, undefined)], [r(true, 3.2)]), true);
  assert.equal(quietP50Comparable([], []), false);
  // A side whose every repeat the host disturbed would have no p50: both sides read every second then.
  assert.equal(quietP50Comparable([r(true, null), r(true, null)], [r(true, 3.2)]), false);
});

test('the weekly history reads the same rule: a run keeps its quiet p50s, or every second\'s when none of its repeats had enough quiet seconds or one had no host samples', () => {
  assert.equal(quietP50Applies([[3.1, null, 3.3]]), true);
  assert.equal(quietP50Applies([[null, null]]), false);
  assert.equal(quietP50Applies([[3.1, undefined]]), false);
  assert.equal(quietP50Applies([[]]), false);
  // An empty side (no passing repeat) decides nothing of its own.
  assert.equal(quietP50Applies([[3.1], []]), true);
});

// test-mode: unit
// Gates for a spike (issue 35, item 3), on a synthetic stream whose truth is known: 100 requests/s,
// 500 from 20 s to 30 s, 60 s in all; the service answers in 2 ms before the spike, 50 ms during it,
// 30 ms for `slowS` seconds after it, then 2 ms again. Each phase's p99 is its own, the recovery time
// is `slowS` (the first 10-s window after the spike whose p99 is within x1.2 of before), the recovery
// gate fails when that exceeds the limit, and drift is taken over the steady phase before the spike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSamples } from '../../lib/protocol/analysis';
import { arrivalSchedule, type Arrivals } from '../../lib/protocol/arrivals';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { planPhases } from '../../lib/protocol/phases';
import { SampleColumns, type SampleRow } from '../../lib/protocol/sample-row';
import type { StreamPlan } from '../../lib/protocol/stream-plan';

const spike: Arrivals = { shape: 'spike', peak: 500, at: 20, for: 10 };
const plan: StreamPlan = { mode: 'open', rate: 100, batch: 1, seconds: 60, probe_rate: 0, run_tag: 't', cut_short: false, cut_reason: null, source: 'stream', arrivals: spike };

function stream(slowS: number): SampleColumns {
  const s = arrivalSchedule({ rate: 100, batch: 1, seconds: 60, arrivals: spike });
  const rows: SampleRow[] = [];
  for (let k = 0; k < s.count; k++) {
    const t = s.at(k);
    const sec = t / 1e6;
    const lat = sec < 20 ? 2000 : sec < 30 ? 50_000 : sec < 30 + slowS ? 30_000 : 2000;
    rows.push({ scenario: 'ingest', intended_us: t, sent_us: t + 50, done_us: t + 50 + lat, status: 201, events: 1, quantity: 5 });
  }
  return SampleColumns.fromRows(rows);
}

const reconciliation = (a: ReturnType<typeof analyzeSamples>) => ({ rows_written: a.ingest.events_claimed, quantity_gained: a.ingest.quantity_claimed });

test('a spike\'s phases: before, during and after, each with its own p99; drift over the steady phase before it', () => {
  assert.deepEqual(planPhases(spike, 60)?.spans, [
    { name: 'before', from_s: 0, to_s: 20 },
    { name: 'during', from_s: 20, to_s: 30 },
    { name: 'after', from_s: 30, to_s: 60 },
  ]);
  const a = analyzeSamples(stream(5), { plan });
  const p = a.ingest.phases!;
  assert.deepEqual(
    p.phases.map((x) => [x.name, x.samples, x.p99_us]),
    [
      ['before', 2000, 2000],
      ['during', 5000, 50_000],
      ['after', 3000, 30_000],
    ],
  );
  assert.equal(p.drift_phase, 'before');
  assert.equal(a.ingest.drift.ratio, 1, 'drift of the steady phase, not of the spike');
  assert.deepEqual(p.recovery, { before_p99_us: 2000, recovered_after_s: 5, window_s: 10, factor: 1.2 });
});

test('per-phase limits: the spike may have its own; a phase over its limit fails the threshold naming it', () => {
  const a = analyzeSamples(stream(5), { plan });
  const ok = evaluateRun(a, { p99LimitMs: 40, phaseP99LimitMs: { during: 60 }, reconciliation: reconciliation(a) });
  const th = ok.verdict.ingest.checks.find((c) => c.name === 'threshold')!;
  assert.equal(th.passed, true, th.detail);
  assert.equal(th.detail, 'per phase: before (0-20 s) p99 2 ms <= 40 ms; during (20-30 s) p99 50 ms <= 60 ms; after (30-60 s) p99 30 ms <= 40 ms');
  const bad = evaluateRun(a, { p99LimitMs: 40, reconciliation: reconciliation(a) });
  assert.ok(bad.verdict.ingest.reasons.some((r) => r.startsWith('threshold: during over the limit')), bad.verdict.ingest.reasons.join('; '));
});

test('recovery: gated by the configuration\'s limit; a service that recovers slowly fails it, one that recovers fast passes', () => {
  const fast = analyzeSamples(stream(3), { plan });
  const slow = analyzeSamples(stream(15), { plan });
  const never = analyzeSamples(stream(30), { plan });
  const judge = (a: typeof fast, limit: number | null) => evaluateRun(a, { p99LimitMs: 100, recoveryLimitS: limit, reconciliation: reconciliation(a) }).verdict.ingest;
  const f = judge(fast, 10);
  assert.equal(f.checks.find((c) => c.name === 'recovery')?.passed, true);
  assert.equal(f.passed, true, f.reasons.join('; '));
  const s = judge(slow, 10);
  assert.equal(s.passed, false);
  assert.ok(s.reasons.includes('recovery: the 10-s p99 back within x1.2 of 2 ms (before the spike) after 15 s > limit 10 s'), s.reasons.join('; '));
  assert.ok(judge(never, 10).reasons.some((r) => r.includes('not recovered within the repeat')));
  // Without a limit, recovery is reported beside the verdict, not gated.
  const n = judge(slow, null);
  assert.equal(n.checks.some((c) => c.name === 'recovery'), false);
  assert.deepEqual(n.notes, ['recovery: the 10-s p99 back within x1.2 of 2 ms (before the spike) after 15 s']);
});

test('a steady plan has no phases: its analysis and gate are today\'s', () => {
  const { arrivals: _a, ...constant } = plan;
  const s = arrivalSchedule({ rate: 100, batch: 1, seconds: 60, arrivals: null });
  const rows: SampleRow[] = [];
  for (let k = 0; k < s.count; k++) rows.push({ scenario: 'ingest', intended_us: s.at(k), sent_us: s.at(k), done_us: s.at(k) + 2000, status: 201, events: 1, quantity: 5 });
  const a = analyzeSamples(SampleColumns.fromRows(rows), { plan: constant });
  assert.equal('phases' in a.ingest, false);
  const v = evaluateRun(a, { p99LimitMs: 50, recoveryLimitS: 10, reconciliation: reconciliation(a) }).verdict.ingest;
  assert.equal(v.checks.find((c) => c.name === 'threshold')?.detail, 'p99 2 ms <= limit 50 ms');
  assert.equal(v.checks.some((c) => c.name === 'recovery'), false);
});

// test-mode: unit
// The runs of a history as series (lib/protocol/history-series.ts): one series per hardware and
// configuration, a run without a figure skipped for that figure only (the change point still names
// its row), the ceiling apart, --since's cut, and the build label of a run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildLabel, historySeries, runsOfBuild, type HistoryRun } from '../../lib/protocol/history-series';
import { stepSeries } from './change-point-series';

function run(i: number, p99: number | null, hardware = 'm5', rate = 200): HistoryRun {
  return {
    campaignId: `w${String(i + 1).padStart(2, '0')}`,
    started: new Date(Date.UTC(2026, 0, 5 + 7 * i)).toISOString(),
    status: 'held',
    target: 'local',
    build: `b${i + 1}`,
    rigBuild: null,
    serviceBuild: `image x:b${i + 1}`,
    host: 'h',
    hardware,
    ceiling_evps: 1000,
    ceiling_share: 0.5,
    configurations: [{ name: 'c', eventsPerSecond: rate, batch: 1, passed: 3, total: 3, p50_ms: 2, p99_ms: p99, worst_10s_p99_ms: null, wal_bytes_per_event: null }],
  };
}

test('per hardware and configuration; a missing figure is skipped, the change point names its row', () => {
  const values = stepSeries(1);
  const runs = values.map((v, i) => run(i, i === 5 ? null : v));
  // Another machine, and the same configuration at another rate: series of their own.
  runs.push(run(40, 500, 'other'), run(41, 90, 'm5', 400));
  const series = historySeries([...runs].reverse());
  assert.deepEqual(series.map((s) => [s.hardware, s.series, s.rows.length]).sort(), [
    ['m5', 'c (200 ev/s, batch 1)', 30],
    ['m5', 'c (400 ev/s, batch 1)', 1],
    ['m5', 'ceiling', 31],
    ['other', 'c (200 ev/s, batch 1)', 1],
    ['other', 'ceiling', 1],
  ]);
  const main = series.find((s) => s.series === 'c (200 ev/s, batch 1)' && s.hardware === 'm5')!;
  assert.deepEqual(main.rows.map((r) => r.campaignId), runs.slice(0, 30).map((r) => r.campaignId), 'oldest first');
  const p99 = main.changePoints.filter((c) => c.figure === 'p99_ms');
  assert.deepEqual(p99.map((c) => [c.row, c.index, c.build, c.previousBuild, c.verdict]), [[19, 18, 'b20', 'b19', 'worse']]);
  // A constant figure (p50) and an absent one (worst 10-s p99): no change point.
  assert.deepEqual(main.changePoints.map((c) => c.figure), ['p99_ms']);
});

test('--since: from the build on, the change points after it', () => {
  const runs = stepSeries(2).map((v, i) => run(i, v));
  const s = historySeries(runs, { since: 'b17' }).find((x) => x.series.startsWith('c'))!;
  assert.equal(s.rows[0].build, 'b17');
  assert.deepEqual(s.changePoints.filter((c) => c.figure === 'p99_ms').map((c) => c.row), [3]);
  assert.deepEqual(historySeries(runs, { since: 'b20' }).find((x) => x.series.startsWith('c'))!.changePoints, [], 'the build that moved it is not "since" it');
  assert.equal(runsOfBuild(runs, 'b3').length, 1 + 1, 'b3 and b30');
  assert.deepEqual(historySeries(runs, { since: 'nope' }), []);
});

test('a run’s build: the worker build for the reference service, the service’s own otherwise', () => {
  assert.equal(buildLabel('the reference service (reference/main.ts)', '0.1.0+abc'), '0.1.0+abc');
  assert.equal(buildLabel('the reference service (reference/main.ts)', null), 'the reference service (reference/main.ts)');
  assert.equal(buildLabel('image x:1', '0.1.0+abc'), 'image x:1 (rig 0.1.0+abc)');
  assert.equal(buildLabel(null, null), null);
  // The build the service named itself (its /healthz `build`) comes first: a deployment the rig did not build.
  assert.equal(buildLabel('the reference service (reference/main.ts)', '0.1.0+abc', 'svc-b2'), 'svc-b2');
  assert.equal(buildLabel('image x:1', '0.1.0+abc', 'deadbeef'), 'image x:1, build deadbeef (rig 0.1.0+abc)');
  assert.equal(buildLabel('image x:1', null, 'deadbeef'), 'image x:1, build deadbeef');
});

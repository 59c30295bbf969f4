// test-mode: unit
// The generator's memory over a soak (issue 35, item 4: "its RSS over a 1-hour soak ... the figure and
// its slope"). On series whose truth is known: a flat RSS after a start-up step reads a slope of 0
// (the first tenth, where the start-up allocations land, is left out); a leak of 12 MB/h reads
// +12 MB/h; a climb that stops (a plateau) reads ~0 over the second half, where a leak reads its whole
// rate; the sampler stays bounded on a run of any length by thinning to every other sample and
// doubling its spacing, so sample i is still at second i x every_s; the page says the figure beside
// a soak's windows and nowhere else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemorySamples, residentSplit } from '../../lib/loadgen/memory-samples';
import { memoryTrend, type MemorySeries } from '../../lib/protocol/memory-trend';
import { memoryText, workloadModel } from '../../lib/evidence/report/workload';
import type { RunReport } from '../../lib/protocol/run-report';

const series = (every: number, f: (s: number) => number, n: number): MemorySeries => ({
  every_s: every,
  rss_mb: Array.from({ length: n }, (_, i) => f(i * every)),
  heap_used_mb: Array.from({ length: n }, () => 10),
});

test('a flat RSS after a start-up step has slope 0; the step is the start level, not growth', () => {
  // 1 hour at 10 s: 40 MB for the first 60 s, then 55 MB.
  const t = memoryTrend(series(10, (s) => (s < 60 ? 40 : 55), 361));
  assert.ok(t);
  assert.equal(t.samples, 361);
  assert.equal(t.span_s, 3600);
  assert.equal(t.slope_mb_per_h, 0);
  assert.equal(t.last_mb, 55);
  assert.equal(t.max_mb, 55);
});

test('a leak of 12 MB an hour reads +12 MB/h', () => {
  const t = memoryTrend(series(10, (s) => 50 + (12 * s) / 3600, 361));
  assert.ok(t?.slope_mb_per_h !== null && t?.slope_mb_per_h !== undefined);
  assert.ok(Math.abs(t.slope_mb_per_h - 12) < 1e-9, `slope ${t.slope_mb_per_h}`);
  assert.ok(t.last_mb > t.first_mb + 10);
});

test('a plateau is told from a leak: a climb that stops reads ~0 over the second half, a leak its whole rate', () => {
  // 2 hours at 10 s: +4 MB over the first 40 min (the allocator reaching its working set), then flat.
  const plateau = memoryTrend(series(10, (s) => 75 + 4 * Math.min(s, 2400) / 2400, 721));
  assert.ok(plateau?.slope_mb_per_h !== null && plateau?.second_half_slope_mb_per_h !== null && plateau);
  assert.ok(plateau.slope_mb_per_h! > 1, `whole-run slope ${plateau.slope_mb_per_h}: the climb shows there`);
  assert.equal(plateau.second_half_slope_mb_per_h, 0);
  const leak = memoryTrend(series(10, (s) => 75 + (2 * s) / 3600, 721));
  assert.ok(Math.abs(leak!.second_half_slope_mb_per_h! - 2) < 1e-9, `second half ${leak!.second_half_slope_mb_per_h}`);
  assert.ok(Math.abs(leak!.slope_mb_per_h! - 2) < 1e-9);
  // External memory's levels, where the series has them: is the growth the process's buffers?
  const ext = memoryTrend({ ...series(10, () => 80, 100), external_mb: Array.from({ length: 100 }, (_, i) => (i < 50 ? 3 : 4)) });
  assert.deepEqual([ext?.external_first_mb, ext?.external_last_mb], [3, 4]);
  const committed = memoryTrend({ ...series(10, () => 80, 100), heap_total_mb: Array.from({ length: 100 }, (_, i) => (i < 50 ? 12 : 20)) });
  assert.deepEqual([committed?.heap_total_first_mb, committed?.heap_total_last_mb], [12, 20]);
  assert.match(memoryText(committed!), /, V8 heap committed 12\.0 -> 20\.0 MB, over/);
  assert.equal(leak?.external_first_mb, undefined);
});

test("RSS split as /proc/self/status has it: anonymous (where a leak grows) and file-backed pages, their sum the RSS", () => {
  const status = 'Name:\tnode\nVmHWM:\t   81964 kB\nVmRSS:\t   73036 kB\nRssAnon:\t   24540 kB\nRssFile:\t   48496 kB\nRssShmem:\t       0 kB\n';
  assert.deepEqual(residentSplit(status), { anon: 24540 * 1024, file: 48496 * 1024 });
  assert.equal(residentSplit('Name:\tnode\nVmRSS:\t 1 kB\n'), null, 'no split where the kernel gives none');
  if (process.platform !== 'linux') return;
  // This process, read both ways: the kernel's split adds up to the RSS node reports (read a moment
  // apart, and RssShmem is 0 for node: within 1 MB).
  const m = new MemorySamples(1);
  m.tick(0);
  const out = m.series();
  assert.equal(out.rss_anon_mb?.length, 1);
  const sum = out.rss_anon_mb![0] + out.rss_file_mb![0];
  assert.ok(Math.abs(sum - out.rss_mb[0]) <= 1, `anon ${out.rss_anon_mb![0]} + file ${out.rss_file_mb![0]} MB against RSS ${out.rss_mb[0]} MB`);
  // A leak of anonymous memory with file-backed pages flat: the anonymous slope reads it.
  const leak = memoryTrend({ ...series(10, (s) => 70 + (3 * s) / 3600, 361), rss_anon_mb: Array.from({ length: 361 }, (_, i) => 20 + (3 * i * 10) / 3600), rss_file_mb: Array.from({ length: 361 }, () => 50) });
  assert.ok(Math.abs(leak!.anon_slope_mb_per_h! - 3) < 1e-9, `anonymous ${leak!.anon_slope_mb_per_h}`);
  assert.deepEqual([leak!.file_first_mb, leak!.file_last_mb], [50, 50]);
  assert.match(memoryText(leak!), /, anonymous 20\.\d -> 22\.\d MB \(\+3\.00 MB\/h\), file-backed 50\.0 -> 50\.0 MB, over 3600 s/);
});

test('too few samples: no slope, the levels still read', () => {
  const t = memoryTrend(series(10, () => 50, 3));
  assert.equal(t?.slope_mb_per_h, null);
  assert.equal(t?.second_half_slope_mb_per_h, null);
  assert.equal(memoryTrend({ every_s: 10, rss_mb: [], heap_used_mb: [] }), null);
});

test('the sampler reads every every_s seconds, and thins itself on a long run: bounded, still evenly spaced', () => {
  const m = new MemorySamples(10);
  for (let s = 0; s <= 100; s++) m.tick(s);
  assert.equal(m.series().rss_mb.length, 11); // seconds 0, 10, ..., 100
  assert.ok(m.series().rss_mb.every((x) => x > 0));
  const long = new MemorySamples(10);
  for (let s = 0; s <= 36_000; s++) long.tick(s); // 10 hours
  const out = long.series();
  assert.ok(out.rss_mb.length <= 720, `${out.rss_mb.length} samples`);
  assert.equal(out.every_s, 80);
  // sample i at second i x every_s: the last one is at or just under the run's last second
  assert.equal((out.rss_mb.length - 1) * out.every_s, 36_000);
  assert.equal(out.heap_used_mb.length, out.rss_mb.length);
  assert.equal(out.external_mb?.length, out.rss_mb.length);
  assert.equal(out.heap_total_mb?.length, out.rss_mb.length);
  if (process.platform === 'linux') assert.equal(out.rss_anon_mb?.length, out.rss_mb.length, 'the split thinned with the rest');
});

test("the page says the generator's memory beside a soak's windows, and only there", () => {
  const report = { windows_p99: [{ from_s: 0, to_s: 600, samples: 100, p99_us: 5000, partial: false }] } as unknown as RunReport;
  const mem = series(10, () => 60, 61);
  const soak = workloadModel(report, 100, { windowSeconds: 600 }, mem);
  assert.ok(soak?.memory);
  assert.match(memoryText(soak.memory), /^The generator's memory: RSS 60\.0 MB over the first tenth of the run, 60\.0 MB over the last \(max 60\.0\), \+0\.00 MB\/h after the first tenth, \+0\.00 MB\/h over the second half, over 600 s \(61 samples\)$/);
  const steady = workloadModel({} as RunReport, 100, undefined, mem);
  assert.equal(steady, null);
});

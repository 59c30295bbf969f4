// test-mode: unit
// Tail attribution on synthetic evidence: each freeze-second and window classified by the markers it
// meets (vacuum before checkpoint before a sampled WAL-segment creation), with the matching lines and
// the disk's figures of that second; what meets nothing is unexplained.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DiskSecond } from '../../lib/protocol/disk-seconds';
import type { LogMarker } from '../../lib/protocol/postgres-log';
import { attributeTails, MARKER_TOLERANCE_MS, progressMarkers, walInitSightings } from '../../lib/protocol/tail-attribution';

const T0 = Date.parse('2026-05-01T12:00:00Z');
const at = (s: number) => T0 + s * 1000;
const marker = (kind: LogMarker['kind'], fromS: number, toS: number): LogMarker => ({ kind, line: `${kind} line`, from_ms: at(fromS), to_ms: at(toS), detail: kind });
const disk = (s: number, avg: number, q: number): DiskSecond => ({ from_ms: at(s), to_ms: at(s + 1), reads_ps: 10, writes_ps: 1000, write_kb_ps: avg * 1000, avg_io_kb: avg, queue_depth: q, source: 'disk sampler' });

test('each freeze-second gets the class of the markers it meets, in order vacuum, checkpoint, WAL segment pool, unexplained', () => {
  const r = attributeTails({
    startedAtMs: T0,
    freezeSeconds: [5, 30, 31, 60, 90, 120],
    windows: [],
    markers: [marker('vacuum', 3, 5.2), marker('checkpoint', 29, 30.5), marker('analyze', 119.5, 119.8), marker('checkpoint', 118, 121)],
    walInit: walInitSightings([
      { t: new Date(at(63)).toISOString(), waits: [{ wait_event: 'WALInitWrite', count: 1 }] },
      { t: new Date(at(100)).toISOString(), waits: [{ wait_event: 'WALWrite', count: 3 }] },
    ]),
    disk: [disk(5, 6, 300), disk(60, 256, 2)],
  });
  assert.deepEqual(r.items.map((i) => [i.from_s, i.class]), [[5, 'vacuum'], [30, 'checkpoint'], [31, 'checkpoint'], [60, 'wal-segment-pool'], [90, 'unexplained'], [120, 'vacuum']]);
  // Both markers of second 120 are listed, the pass first in time.
  assert.deepEqual(r.items[5].markers.map((m) => m.kind), ['analyze', 'checkpoint']);
  // The vacuum storm's signature sits beside its second: small IOs, a deep queue.
  assert.equal(r.items[0].disk?.avg_io_kb, 6);
  assert.equal(r.items[0].disk?.queue_depth, 300);
  assert.equal(r.items[4].disk, null);
  assert.equal(r.items[3].wal_init[0].source, 'DB sampler');
  assert.deepEqual(r.counts, { vacuum: { seconds: 2, windows: 0 }, checkpoint: { seconds: 2, windows: 0 }, 'wal-segment-pool': { seconds: 1, windows: 0 }, unexplained: { seconds: 1, windows: 0 } });
});

test('the tolerance: a marker ending just over a second before the freeze-second does not match', () => {
  const base = { startedAtMs: T0, freezeSeconds: [10], windows: [] as Array<[number, number]>, walInit: [], disk: [] };
  const ends = (ms: number) => attributeTails({ ...base, markers: [{ ...marker('vacuum', 5, 9), to_ms: at(10) - ms }] }).items[0].class;
  assert.equal(ends(MARKER_TOLERANCE_MS), 'vacuum');
  assert.equal(ends(MARKER_TOLERANCE_MS + 1), 'unexplained');
});

test('a window covers its 10-s buckets; its disk figure is its second with the deepest queue', () => {
  const r = attributeTails({
    startedAtMs: T0,
    freezeSeconds: [],
    windows: [[200, 210]],
    markers: [marker('vacuum', 150, 219.5)],
    walInit: [],
    disk: [disk(199, 100, 90), disk(205, 5, 400), disk(219, 6, 350), disk(220, 100, 999)],
  });
  assert.equal(r.items[0].what, 'window');
  assert.deepEqual([r.items[0].from_s, r.items[0].to_s, r.items[0].class], [200, 220, 'vacuum']);
  assert.equal(r.items[0].disk?.queue_depth, 400);
  assert.deepEqual(r.counts.vacuum, { seconds: 0, windows: 1 });
});

test('Performance Insights seconds with db.load on IO:WALInitWrite are sightings within a second', () => {
  const s = walInitSightings([], [
    { event: 'IO:WALInitWrite', timestamps: [new Date(at(40)).toISOString(), new Date(at(41)).toISOString()], values: [0, 0.4] },
    { event: 'LWLock:WALWrite', timestamps: [new Date(at(40)).toISOString()], values: [3] },
  ]);
  assert.deepEqual(s, [{ at_ms: at(41), span_ms: 1000, source: 'Performance Insights' }]);
  const r = attributeTails({ startedAtMs: T0, freezeSeconds: [41, 44], windows: [], markers: [], walInit: s, disk: [] });
  assert.deepEqual(r.items.map((i) => i.class), ['wal-segment-pool', 'unexplained']);
});

test("only a pass on a table the request path writes makes vacuum; another is listed beside; a running pass comes from progress snapshots", () => {
  const pass = (table: string, fromS: number, toS: number): LogMarker => ({ ...marker('vacuum', fromS, toS), table });
  const base = { startedAtMs: T0, freezeSeconds: [10], windows: [] as Array<[number, number]>, walInit: [], disk: [] };
  const side = pass('public.api_keys', 9.5, 10.2);
  const side2 = attributeTails({ ...base, markers: [side, marker('checkpoint', 9, 10.5)] }).items[0];
  assert.equal(side2.class, 'checkpoint');
  assert.equal(side2.markers.length, 2, 'the side pass is listed beside it');
  assert.equal(attributeTails({ ...base, markers: [side] }).items[0].class, 'unexplained');
  assert.equal(attributeTails({ ...base, markers: [side], requestTables: ['usage_events', 'api_keys'] }).items[0].class, 'vacuum', 'every-request mode writes api_keys');
  assert.equal(attributeTails({ ...base, markers: [pass('public.usage_events', 9.5, 10.2)] }).items[0].class, 'vacuum');
  // Progress snapshots: pid 7 on usage_events from 9.0 to 11.0 s (no line), pid 8 on api_keys whose line the log has.
  const snap = (s: number, vacuum: Array<{ pid: number; relname: string; phase: string }>) => ({ t: new Date(at(s)).toISOString(), vacuum });
  const rows = [
    snap(8.8, []),
    snap(9, [{ pid: 7, relname: 'usage_events', phase: 'scanning heap' }, { pid: 8, relname: 'api_keys', phase: 'scanning heap' }]),
    snap(10, [{ pid: 7, relname: 'usage_events', phase: 'vacuuming indexes' }]),
    snap(11, [{ pid: 7, relname: 'usage_events', phase: 'vacuuming indexes' }]),
  ];
  const progress = progressMarkers(rows, [pass('public.api_keys', 8.9, 9.1)]);
  assert.equal(progress.length, 1, 'the pass the log has a line for is the log\'s alone');
  assert.deepEqual([progress[0].table, progress[0].from_ms, progress[0].to_ms], ['usage_events', at(9), at(11)]);
  assert.match(progress[0].line, /pid 7 vacuuming usage_events, .*\(scanning heap → vacuuming indexes\)/);
  assert.equal(attributeTails({ ...base, markers: progress }).items[0].class, 'vacuum');
});

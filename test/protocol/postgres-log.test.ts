// test-mode: unit
// The Postgres log slice's markers: PostgreSQL 15's autovacuum/autoanalyze completion lines (start
// back-computed from `elapsed`) and checkpoints (the sync phase, or all of an immediate one), in the
// local cluster's prefix and RDS's; a zone that cannot be placed is counted, never guessed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logMarkers, parseLogEntries, stampOf, wallToEpoch } from '../../lib/protocol/postgres-log';

// As a PostgreSQL 15 cluster writes them with log_autovacuum_min_duration = 0 and log_checkpoints = on.
const LOCAL = `2026-05-01 12:00:00.100 UTC [4242] LOG:  checkpoint starting: time
2026-05-01 12:00:03.500 UTC [5151] LOG:  automatic vacuum of table "rig.public.usage_events": index scans: 1
	pages: 0 removed, 48211 remain, 48211 scanned (100.00% of total)
	tuples: 0 removed, 2000000 remain, 0 are dead but not yet removable
	removable cutoff: 740, which was 0 XIDs old when operation ended
	avg read rate: 0.000 MB/s, avg write rate: 120.512 MB/s
	buffer usage: 96500 hits, 0 misses, 48211 dirtied
	WAL usage: 48212 records, 1 full page images, 2893210 bytes
	system usage: CPU: user: 0.41 s, system: 0.30 s, elapsed: 3.20 s
2026-05-01 12:00:04.000 UTC [5151] LOG:  automatic analyze of table "rig.public.usage_events"
	avg read rate: 10.000 MB/s, avg write rate: 0.000 MB/s
	buffer usage: 3000 hits, 10 misses, 0 dirtied
	system usage: CPU: user: 0.10 s, system: 0.01 s, elapsed: 0.25 s
2026-05-01 12:00:30.100 UTC [4242] LOG:  checkpoint complete: wrote 2048 buffers (12.5%); 0 WAL file(s) added, 0 removed, 1 recycled; write=26.900 s, sync=2.100 s, total=30.000 s; sync files=12, longest=1.500 s, average=0.175 s; distance=16000 kB, estimate=16000 kB
2026-05-01 12:00:40.000 UTC [4242] LOG:  checkpoint starting: immediate force wait
2026-05-01 12:00:41.500 UTC [4242] LOG:  checkpoint complete: wrote 10 buffers (0.1%); 2 WAL file(s) added, 0 removed, 0 recycled; write=1.400 s, sync=0.050 s, total=1.500 s; sync files=3, longest=0.030 s, average=0.010 s; distance=100 kB, estimate=16000 kB
2026-05-01 12:00:50.000 UTC [4242] LOG:  checkpoint starting: wal
2026-05-01 12:00:51.000 UTC [6000] LOG:  connection received: host=127.0.0.1 port=5555
`;

const T = (hms: string) => Date.parse(`2026-05-01T${hms}Z`);

test('stamps: ms or whole seconds, UTC/GMT and numeric offsets; another abbreviation is unplaced, a continuation line is no stamp', () => {
  assert.deepEqual(stampOf('2026-05-01 12:00:03.500 UTC [1] LOG:  x'), { at_ms: T('12:00:03.500') });
  assert.deepEqual(stampOf('2026-05-01 12:00:03 UTC:10.0.1.5(40000):u@d:[4100]:LOG:  x'), { at_ms: T('12:00:03') });
  assert.deepEqual(stampOf('2026-05-01 14:00:03.5 +02 [1] LOG:  x'), { at_ms: T('12:00:03.500') });
  assert.deepEqual(stampOf('2026-05-01 12:00:03 GMT [1] LOG:  x'), { at_ms: T('12:00:03') });
  assert.deepEqual(stampOf('2026-05-01 14:00:03 CEST [1] LOG:  x'), { at_ms: null });
  assert.equal(stampOf('\tbuffer usage: 1 hits'), null);
  const { entries, unplaced } = parseLogEntries('2026-05-01 14:00:03 CEST [1] LOG:  a\n\tmore\n2026-05-01 12:00:03 UTC [1] LOG:  b\n');
  assert.equal(unplaced, 1);
  assert.deepEqual(entries.map((e) => e.message), ['a\nmore', 'b']);
});

test("a named zone is placed through the cluster's log_timezone: CET, CEST, EST, and the repeated hour only by its abbreviation", () => {
  assert.deepEqual(stampOf('2026-05-01 14:00:03.500 CEST [1] LOG:  x', 'CET'), { at_ms: T('12:00:03.500') });
  assert.deepEqual(stampOf('2026-05-01 14:00:03.500 CEST [1] LOG:  x', 'Europe/Berlin'), { at_ms: T('12:00:03.500') });
  assert.deepEqual(stampOf('2026-12-05 05:30:00 CET [1] LOG:  x', 'CET'), { at_ms: Date.parse('2026-12-05T04:30:00Z') });
  assert.deepEqual(stampOf('2026-12-05 05:30:00 EST [1] LOG:  x', 'America/New_York'), { at_ms: Date.parse('2026-12-05T10:30:00Z') });
  // An explicit zone in the stamp wins over the setting.
  assert.deepEqual(stampOf('2026-05-01 12:00:03 UTC [1] LOG:  x', 'CET'), { at_ms: T('12:00:03') });
  // A zone the time zone database does not know: unplaced, never guessed.
  assert.deepEqual(stampOf('2026-05-01 14:00:03 CEST [1] LOG:  x', 'localtime'), { at_ms: null });
  // New York's clocks go back at 02:00 EDT on 2026-11-01: 01:30 happens twice, EDT then EST.
  const wall = Date.parse('2026-11-01T01:30:00Z');
  assert.equal(wallToEpoch(wall, 'America/New_York', 'EDT'), Date.parse('2026-11-01T05:30:00Z'));
  assert.equal(wallToEpoch(wall, 'America/New_York', 'EST'), Date.parse('2026-11-01T06:30:00Z'));
  assert.equal(wallToEpoch(wall, 'America/New_York', ''), null);
  // A time the zone skips (02:30 on 2026-03-08 in New York) is no instant.
  assert.equal(wallToEpoch(Date.parse('2026-03-08T02:30:00Z'), 'America/New_York', 'EST'), null);
  const { markers, unplaced } = logMarkers(LOCAL.replace(/ UTC /g, ' CEST ').replace(/ (\d{2}):(\d{2}):/g, (_, h, m) => ` ${String(Number(h) + 2).padStart(2, '0')}:${m}:`), { timeZone: 'Europe/Berlin' });
  assert.equal(unplaced, 0);
  assert.deepEqual(markers.map((m) => [m.kind, m.to_ms - T('12:00:00'), m.table ?? null]), [
    ['vacuum', 3500, 'public.usage_events'],
    ['analyze', 4000, 'public.usage_events'],
    ['checkpoint', 30100, null],
    ['checkpoint', 41500, null],
  ]);
});

test('markers: a vacuum and an analyze pass from their completion back by elapsed; a checkpoint by its sync phase, an immediate one whole; an open checkpoint is none', () => {
  const { markers, unplaced } = logMarkers(LOCAL);
  assert.equal(unplaced, 0);
  assert.deepEqual(
    markers.map((m) => [m.kind, m.from_ms - T('12:00:00'), m.to_ms - T('12:00:00'), m.detail]),
    [
      ['vacuum', 300, 3500, 'vacuum public.usage_events 3.20 s, 48,211 pages dirtied'],
      ['analyze', 3750, 4000, 'analyze public.usage_events 0.25 s, 0 pages dirtied'],
      ['checkpoint', 28000, 30100, 'checkpoint (time) sync 2.10 s of 30.00 s, 2,048 buffers'],
      ['checkpoint', 40000, 41500, 'checkpoint (immediate force wait) immediate, total 1.50 s, 10 buffers, 2 WAL file(s) added'],
    ],
  );
  assert.match(markers[0].line, /^2026-05-01 12:00:03.500 UTC \[5151\] LOG: {2}automatic vacuum of table "rig.public.usage_events"/);
});

test('RDS\'s prefix and an aggressive pass read the same way', () => {
  const rds = `2026-05-01 12:00:05 UTC::@:[812]:LOG:  automatic aggressive vacuum to prevent wraparound of table "hardcount.public.tenants": index scans: 0
	buffer usage: 10 hits, 0 misses, 2 dirtied
	system usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: 1.00 s
`;
  const { markers } = logMarkers(rds);
  assert.equal(markers.length, 1);
  assert.equal(markers[0].from_ms, T('12:00:04'));
  assert.equal(markers[0].detail, 'aggressive vacuum public.tenants 1.00 s, 2 pages dirtied');
});

// WAL per event without segment padding (issue 47, item 5), on a real cluster: a WAL switch inside the
// rig's bracket (pg_switch_wal here; archive_timeout does the same on RDS, with 64-MB segments) skips
// the rest of the segment. The insert-LSN difference, the measure before issue 47, counts that skipped
// rest as WAL the repeat wrote; pg_stat_wal's wal_bytes, the measure now, counts the records only, and
// agrees with PostgreSQL's own count of the records in the range (pg_walinspect). A bracket without a
// switch is the control: there the two measures differ only by page headers and record alignment.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import pg from 'pg';
import { walFromBracket } from '../../lib/evidence/report/wal-figure';
import { WalBracket, type WalBracketFile } from '../../lib/evidence/wal-bracket';
import { withClient } from '../../lib/targets/db';
import type { PgCluster } from '../../lib/targets/local/pg-cluster';
import { throwAwayCluster } from '../harness/pg';

const made = throwAwayCluster();
let cluster: PgCluster;
let segment: number;
before(async () => {
  cluster = await made;
  await withClient(cluster.url(), async (c) => {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    await c.query('CREATE TABLE ev (id bigserial PRIMARY KEY, tag text NOT NULL, quantity int NOT NULL, properties jsonb NOT NULL)');
    await c.query('CREATE INDEX ev_tag ON ev (tag)');
    segment = Number((await c.query<{ b: string }>("SELECT pg_size_bytes(current_setting('wal_segment_size'))::text AS b")).rows[0].b);
  });
});

const ROWS = 4000;
const BATCH = 100;

interface Bracketed {
  file: WalBracketFile;
  /** Bytes the switch skipped: from the end of its record to the next segment (0 without a switch). */
  padding: number;
  /** pg_walinspect's count of the records' bytes over the bracket's LSN range. */
  truthBytes: number;
}

/** ROWS rows inserted inside the rig's WAL bracket, with a pg_switch_wal() half way when `withSwitch`. */
async function bracketed(tag: string, withSwitch: boolean): Promise<Bracketed> {
  // A fresh segment first, so that the switch inside skips most of one.
  await withClient(cluster.url(), (c) => c.query("INSERT INTO ev (tag, quantity, properties) VALUES ('pre', 1, '{}'); SELECT pg_switch_wal()"));
  const bracket = await WalBracket.open(cluster.url());
  await bracket.atStart();
  const c = new pg.Client({ connectionString: cluster.url() });
  await c.connect();
  let padding = 0;
  try {
    for (let from = 0; from < ROWS; from += BATCH) {
      if (withSwitch && from === ROWS / 2) {
        // pg_switch_wal returns the end of its switch record; the insert position moves on to the next segment.
        const end = Number((await c.query<{ b: string }>("SELECT pg_wal_lsn_diff(pg_switch_wal(), '0/0')::text AS b")).rows[0].b);
        padding = Math.ceil(end / segment) * segment - end;
      }
      await c.query(
        "INSERT INTO ev (tag, quantity, properties) SELECT $1, g % 100 + 1, jsonb_build_object('n', g, 'region', 'eu-west-1') FROM generate_series($2::int, $3::int) g",
        [tag, from, from + BATCH - 1],
      );
    }
  } finally {
    await c.end(); // its backend publishes its pg_stat_wal counters as it exits
  }
  await bracket.atEnd();
  const file = await bracket.finish(1500);
  assert.deepEqual(file.problems, []);
  const truthBytes = await withClient(cluster.url(), async (i) =>
    Number((await i.query<{ b: string }>('SELECT sum(combined_size)::text AS b FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, false)', [file.start!.lsn, file.end!.lsn])).rows[0].b),
  );
  return { file, padding, truthBytes };
}

const within = (x: number, truth: number, tol: number) => Math.abs(x - truth) <= tol * truth;

test('MUST SHOW (issue 47): a WAL switch inside the bracket adds the skipped segment to the insert-LSN figure, never to wal_bytes', async (t) => {
  const control = await bracketed('control', false);
  const switched = await bracketed('switched', true);
  assert.ok(switched.padding > segment / 2, `the switch skipped ${switched.padding} B of a ${segment}-B segment`);

  // The figure as the page takes it now, and as it took it before issue 47 (a file without bytes_measure).
  const now = (b: Bracketed) => walFromBracket(b.file, ROWS).wal!;
  const before47 = (b: Bracketed) => walFromBracket({ ...b.file, bytes_measure: undefined }, ROWS).wal!;

  // The page's figure is the records' own bytes, as PostgreSQL counts them over the same range, with a
  // switch inside the bracket or without.
  for (const b of [switched, control]) {
    assert.ok(within(now(b).bytes, b.truthBytes, 0.02), `the page's WAL bytes ${now(b).bytes} B vs pg_walinspect's ${b.truthBytes} B (${b === switched ? 'a switch inside' : 'no switch'})`);
  }
  // Control: without a switch the two measures differ by page headers and record alignment only.
  const gap = before47(control).bytes - now(control).bytes;
  assert.ok(gap >= 0 && gap < 0.1 * now(control).bytes, `control: insert-LSN ${before47(control).bytes} B vs wal_bytes ${now(control).bytes} B`);

  // With the switch: the insert-LSN figure gains the skipped segment's rest (and the same small gap).
  const gained = before47(switched).bytes - now(switched).bytes;
  assert.ok(gained >= switched.padding && gained <= switched.padding + 2 * gap + 8192, `insert-LSN gained ${gained} B over wal_bytes; the switch skipped ${switched.padding} B`);
  assert.ok(before47(switched).bytes_per_event! > now(switched).bytes_per_event! + switched.padding / ROWS - 1);
  assert.ok(!within(before47(switched).bytes, switched.truthBytes, 0.5), 'the insert-LSN figure with a switch is not the records\' bytes');
  // The new files say which measure their bytes are, and the figure carries it to the page.
  assert.equal(switched.file.bytes_measure, 'wal_bytes (pg_stat_wal)');
  assert.equal(now(switched).bytes_measure, 'wal_bytes (pg_stat_wal)');
  assert.equal(before47(switched).bytes_measure, 'insert LSN difference');
  t.diagnostic(
    `per event: wal_bytes ${now(control).bytes_per_event} B (control) and ${now(switched).bytes_per_event} B (switch); insert-LSN ${before47(control).bytes_per_event} B and ${before47(switched).bytes_per_event} B; ` +
      `pg_walinspect ${(control.truthBytes / ROWS).toFixed(1)} B and ${(switched.truthBytes / ROWS).toFixed(1)} B; FPI ${now(control).fpi} and ${now(switched).fpi}; skipped ${switched.padding} B`,
  );
});

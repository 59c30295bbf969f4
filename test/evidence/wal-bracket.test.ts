// WAL per event from readings that bracket the load (issue 31, defect 2), against PostgreSQL's own
// count, on a real local rig: a known number of rows of the ingest shape go in inside the bracket; WAL
// per event is pg_stat_wal's wal_bytes over the rows (issue 47: the insert-LSN difference also counts a
// switched segment's padding, test/evidence/wal-switch.test.ts), read after WAL_STATS_LAG_MS with the
// inserting session still open as the service's pool is, within ±2 % of pg_waldump --stats over that
// LSN range, and its records are the records pg_waldump counts. The old window, first to last sampler row,
// cut short of the load's end, is shown to fail the same check. And the generator's child waits for
// the rig's reading before its first request and reports its last reply before it flushes its stream.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import pg from 'pg';
import { readWal } from '../../lib/evidence/db-sampler';
import { walFromBracket } from '../../lib/evidence/report/wal-figure';
import { WalBracket } from '../../lib/evidence/wal-bracket';
import { walBreakdown } from '../../lib/evidence/wal-breakdown';
import { WAL_STATS_LAG_MS, walPerEvent } from '../../lib/evidence/wal-per-event';
import { runLoad } from '../../lib/loadgen/run-load';
import { createFixtures } from '../../lib/targets/bringup/fixtures';
import { detectFixtures } from '../../lib/targets/fixtures-scope';
import { rigDbUrls, type RigDbUrls } from '../../lib/targets/local/connection';
import { provisionLocal } from '../../lib/targets/local/provision';
import { legScript } from '../../lib/targets/pgbench-script';
import { reconcile } from '../../lib/targets/reconcile';
import { isolatedStateDir, testCampaign } from '../harness/local-rig';

isolatedStateDir();
const campaign = testCampaign('walb');
let urls: RigDbUrls;

before(async () => {
  await provisionLocal(campaign, {});
  urls = rigDbUrls(campaign);
  await createFixtures(urls.ownerUrl, { livemode: false });
});

const within = (x: number, truth: number, tol: number) => Math.abs(x - truth) <= tol * truth;

test('WAL per event from the bracket is pg_stat_wal\'s wal_bytes over the rows, within ±2 % of pg_waldump; a window cut short is not', async (t) => {
  const owner = new pg.Client({ connectionString: urls.ownerUrl });
  await owner.connect();
  const sampler = new pg.Client({ connectionString: urls.superuserUrl });
  await sampler.connect();
  try {
    const scope = await detectFixtures(owner);
    await owner.query(`SELECT set_config('app.livemode', 'false', false)`);
    const tag = 'walb-1';
    const insert = legScript('owner-multirow', { scope, tag, batch: 100 });
    const ROWS = 2000;
    // The old window's first row: a sampler reading taken before the load (the child's start-up).
    const firstRow = await readWal(sampler);
    const wal = await WalBracket.open(urls.superuserUrl);
    await wal.atStart();
    let lastRow = firstRow;
    for (let i = 0; i < ROWS / 100; i++) {
      await owner.query(insert);
      if (i === 14) lastRow = await readWal(sampler); // the old window's last row: 5 s before the end
    }
    await wal.atEnd();
    const file = await wal.finish(WAL_STATS_LAG_MS); // the production wait; `owner` stays open meanwhile
    assert.deepEqual(file.problems, []);
    assert.ok(file.stats_waited_ms! >= WAL_STATS_LAG_MS);

    const rec = await reconcile(owner, { runTag: tag, livemode: false, tenantId: scope.tenantId });
    assert.equal(rec.rows, ROWS);
    const { wal: figure } = walFromBracket(file, rec.rows);
    const statBytes = file.end_stats!.wal_bytes - file.start!.wal_bytes;
    assert.equal(figure!.bytes_measure, 'wal_bytes (pg_stat_wal)');
    assert.equal(figure!.bytes_per_event, Math.round((statBytes / ROWS) * 10) / 10, 'WAL per event = pg_stat_wal wal_bytes difference / rows');

    // PostgreSQL's own count over the same LSN range.
    const dump = await walBreakdown(urls.clusterDir, file.start!.lsn, file.end!.lsn);
    const truthBytes = dump.total.bytes / ROWS;
    assert.ok(within(figure!.bytes_per_event!, truthBytes, 0.02), `bracket ${figure!.bytes_per_event} B/event vs pg_waldump ${truthBytes.toFixed(1)}`);
    assert.ok(within(figure!.records_per_event!, dump.total.count / ROWS, 0.02), `pg_stat_wal ${figure!.records_per_event} records/event vs pg_waldump ${(dump.total.count / ROWS).toFixed(3)}`);
    assert.ok(figure!.records_per_event! >= 6, 'a heap insert plus its index entries is at least 6 records');

    // The old derivation over the same rows: a window that ends before the load does runs low and fails.
    const old = walPerEvent(firstRow, lastRow, rec.rows);
    assert.ok(!within(old.lsnBytesPerEvent!, truthBytes, 0.02), `the cut-short window (${old.lsnBytesPerEvent} B/event) passed the ±2 % check`);
    assert.ok(old.lsnBytesPerEvent! < 0.85 * truthBytes);
    t.diagnostic(
      `bracket ${figure!.bytes_per_event} B and ${figure!.records_per_event} records per event; pg_waldump ${truthBytes.toFixed(1)} B and ${(dump.total.count / ROWS).toFixed(3)}; ` +
        `the cut-short window ${old.lsnBytesPerEvent!.toFixed(1)} B`,
    );
  } finally {
    await owner.end();
    await sampler.end();
  }
});

test('the generator waits for the rig\'s reading before its first request, and reports its last reply before its result', async () => {
  let posts = 0;
  let replies = 0;
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') posts++;
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST') replies++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const seen: string[] = [];
  try {
    const res = await runLoad(
      { url, apiKey: 'k', rate: 200, batch: 1, seconds: 1, runTag: 'edges', customers: ['cus_1'], out: path.join(os.tmpdir(), `rig-edges-${process.pid}.csv.gz`), warmupSeconds: 0 },
      undefined,
      {
        preflight: false,
        beforeFirstRequest: async () => {
          seen.push(`before: ${posts} posts`);
          await new Promise((r) => setTimeout(r, 300)); // the child waits for the reading
          seen.push(`read: ${posts} posts`);
        },
        afterLastReply: async () => {
          seen.push(`after: ${replies === posts ? 'all replied' : `${posts - replies} unanswered`}`);
        },
      },
    );
    assert.ok(res.summary.sent > 0 && !res.interrupted);
    assert.deepEqual(seen, ['before: 0 posts', 'read: 0 posts', 'after: all replied']);
    assert.equal(posts, res.summary.sent);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

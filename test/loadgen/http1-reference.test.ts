// The generator's own HTTP/1.1 client against the reference service (reference/, node:http on a real
// PostgreSQL cluster): ingest batches and the probe's three reads are answered 2xx and the rows the
// service stored are exactly the events the stream claims; a refused key is a 401 on every row,
// counted as failed, nothing stored. Behaviour and counts only.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { runLoad } from '../../lib/loadgen/run-load';
import { readSampleFile } from '../../lib/loadgen/sample-reader';
import type { Fixtures } from '../../lib/targets/bringup/fixtures';
import { reconcile } from '../../lib/targets/reconcile';
import { STATUS_DROPPED } from '../../lib/protocol/sample-row';
import type { RunningService } from '../../reference/service';
import { hardcountDb, referenceServiceOn, type HardcountDb } from '../harness/hardcount';

// One cluster for the file, made at the top level (see test/harness/hardcount.ts).
const dbReady = hardcountDb();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-http1-ref-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

let db: HardcountDb;
let fx: Fixtures;
let svc: RunningService;

before(async () => {
  ({ db, fx, svc } = await referenceServiceOn(dbReady));
});

test('ingest and probe against the reference service: all 2xx, and the service stored exactly what the stream claims', async () => {
  const out = path.join(dir, 'ok.csv.gz');
  // 100 requests/s of 5 events for 3 s, a probe at 3/s; slots wide enough that the host's load is not what is tested
  const res = await runLoad({ url: svc.url, apiKey: fx.apiKey.reveal(), rate: 500, batch: 5, seconds: 3, probeRate: 3, maxInFlight: 300, out, runTag: 'http1-ref-1', warmupSeconds: 0 });
  const c = await readSampleFile(out);
  let ingest = 0;
  const probes = new Set<number>();
  for (let i = 0; i < c.length; i++) {
    assert.notEqual(c.status[i], STATUS_DROPPED, `row ${i} dropped`);
    assert.ok(c.status[i] >= 200 && c.status[i] < 300, `row ${i}: status ${c.status[i]}`);
    if (c.scenario[i] === 0) ingest++;
    else probes.add(c.scenario[i]);
  }
  assert.equal(ingest, 300);
  assert.deepEqual([...probes].sort(), [1, 2, 3], 'aggregate, invoices and customers were each read');
  assert.equal(res.summary.probe.failed, 0);
  const { analysis } = await analyzeFile(out, { durationS: 3 });
  const counted = await reconcile(db.ownerUrl, { runTag: 'http1-ref-1', livemode: true });
  assert.equal(counted.rows, analysis.ingest.events_claimed);
  assert.equal(counted.rows, 1500);
  assert.equal(counted.quantity, analysis.ingest.quantity_claimed);
  assert.equal(counted.quantity, res.summary.quantity_sent);
});

test('a key the service refuses: every request is a 401 row, counted as failed, and nothing is stored', async () => {
  const out = path.join(dir, 'refused.csv.gz');
  const res = await runLoad(
    { url: svc.url, apiKey: 'not-a-key', rate: 50, batch: 1, seconds: 1, out, runTag: 'http1-ref-401', customers: fx.customers, warmupSeconds: 0 },
    undefined,
    { preflight: false },
  );
  const c = await readSampleFile(out);
  assert.equal(c.length, 50);
  for (let i = 0; i < c.length; i++) assert.equal(c.status[i], 401, `row ${i}`);
  assert.deepEqual([res.summary.failed, res.summary.ok, res.summary.dropped], [50, 0, 0]);
  const counted = await reconcile(db.ownerUrl, { runTag: 'http1-ref-401', livemode: true });
  assert.equal(counted.rows, 0);
});

// The warm-up activity on a real local rig (a PostgreSQL cluster and the reference service): its
// requests reach the target, its rows are reconciled under its own run tag and are in no repeat's
// count, its evidence is kept under warmup/<config>/aA; against a target that answers 500 it refuses
// (WarmupRefusal) with the statuses it saw, after writing what it measured.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { bringUp } from '../../activities/bringup';
import { runRepeat } from '../../activities/repeat';
import { warmUp, warmupTagFor } from '../../activities/warmup';
import { campaignDir } from '../../lib/evidence/layout';
import type { RigHandle } from '../../lib/protocol/campaign-result';
import { CUSTOMERS_PATH, HEALTH_PATH } from '../../lib/protocol/hardcount-api';
import { rigDbUrls } from '../../lib/targets/local/connection';
import { provisionLocal } from '../../lib/targets/local/provision';
import { reconcile } from '../../lib/targets/reconcile';
import { isolatedStateDir, testCampaign } from '../harness/local-rig';

isolatedStateDir();
const campaign = testCampaign('warmup');
let rig: RigHandle;

before(async () => {
  const p = await provisionLocal(campaign, {});
  rig = { campaignId: campaign, target: 'local', dataQueue: 'unused', serviceUrl: p.serviceUrl, database: '', rigDir: '', hardware: 'test', parameters: {} };
  await bringUp({ campaignId: campaign, rig, customers: 20 });
});

const config = (name: string) => ({ name, eventsPerSecond: 400, batch: 2, p99LimitMs: 50 });

test('the warm-up reaches the target; its rows are reconciled under its own run tag and counted in no repeat', async () => {
  const out = await warmUp({ campaignId: campaign, rig, configuration: config('single'), seconds: 2, maxInFlight: 64 });
  assert.equal(out.runTag, warmupTagFor(campaign, 'single', 1));
  assert.equal(out.dir, 'warmup/single/a1');
  assert.ok(out.ok > 0, `${out.ok} requests answered 2xx`);
  assert.equal(out.failed, 0);
  assert.equal(out.rowsReconciled, out.ok * 2, 'every acknowledged event is in the database under the warm-up tag');
  const urls = rigDbUrls(campaign);
  const inDb = await reconcile(urls.ownerUrl, { runTag: out.runTag, livemode: true });
  assert.equal(inDb.rows, out.rowsReconciled);

  const dir = path.join(campaignDir(campaign), 'warmup', 'single', 'a1');
  for (const f of ['samples.csv.gz', 'load.json', 'reconcile.json', 'warmup.json']) assert.ok(fs.existsSync(path.join(dir, f)), `${f} kept`);
  const judged = JSON.parse(fs.readFileSync(path.join(dir, 'warmup.json'), 'utf8')) as { ok: boolean; measured: boolean };
  assert.deepEqual([judged.ok, judged.measured], [true, false]);

  // A repeat after it counts only its own rows: the warm-up's never inflate a repeat's reconciliation.
  const rep = await runRepeat({
    campaignId: campaign,
    rig,
    kind: 'sustained',
    configuration: config('single'),
    index: 1,
    seconds: 2,
    probe: { rate: 0, p99BudgetMs: 500 },
    driftLimit: 1.5,
    maxInFlight: 64,
  });
  const repeatRows = await reconcile(urls.ownerUrl, { runTag: rep.summary.runTag, livemode: true });
  assert.notEqual(rep.summary.runTag, out.runTag);
  assert.ok(repeatRows.rows > 0);
  assert.equal(rep.summary.reconciled, true, 'the repeat reconciles exactly: rows written == its own events claimed');
  assert.equal((await reconcile(urls.ownerUrl, { runTag: out.runTag, livemode: true })).rows, out.rowsReconciled, 'the warm-up gained nothing from the repeat');
});

test('a target that answers 500 during the warm-up is refused with the statuses seen, and what was measured is kept', async () => {
  // Healthy to the generator's pre-flight (health, customers), broken where it matters: ingest.
  const server = http.createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.pathname === HEALTH_PATH) return res.end(JSON.stringify({ ok: true }));
    if (url.pathname === CUSTOMERS_PATH) return res.end(JSON.stringify({ data: [] }));
    res.statusCode = 500;
    res.end(JSON.stringify({ error: 'broken build' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
  const broken: RigHandle = { ...rig, serviceUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };

  await assert.rejects(warmUp({ campaignId: campaign, rig: broken, configuration: config('broken'), seconds: 1, maxInFlight: 64 }), (err: unknown) => {
    assert.ok(err instanceof ApplicationFailure, String(err));
    assert.equal(err.type, 'WarmupRefusal');
    assert.equal(err.nonRetryable, true);
    assert.match(err.message, /warm-up of broken .*nothing answered 2xx: \d+ requests sent, \d+ failed \(\d+ x 500\)/);
    return true;
  });
  const dir = path.join(campaignDir(campaign), 'warmup', 'broken', 'a1');
  assert.ok(fs.existsSync(path.join(dir, 'samples.csv.gz')), 'the stream is kept');
  const judged = JSON.parse(fs.readFileSync(path.join(dir, 'warmup.json'), 'utf8')) as { ok: boolean; reasons: string[] };
  assert.equal(judged.ok, false);
  assert.match(judged.reasons[0], /x 500/);
});

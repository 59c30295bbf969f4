// examples/batches.json's configuration (geometric batch sizes of mean 10, client timestamps 10 % an
// hour late and 5 % out of order; issue 35, item 2) on a real local rig (a PostgreSQL cluster, the
// reference service, the real generator), short repeats through the repeat activity:
// - the reference service as it is: every row is its request's drawn size (the plan check passes), the
//   repeat reconciles exactly (rows == Σ events of the accepted requests, Σ quantity over them), the
//   database holds every stamp (the late rows an hour before they were written), and the page shows the
//   sizes and the shares late and out of order as sent;
// - the same service restarted with its HC_DROP_LATE_MS test switch (a lossy build that answers late
//   events and never writes them): reconciliation fails, its rows check naming the missing rows, which
//   are exactly the late events among the claims.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { bringUp } from '../../activities/bringup';
import { runRepeat } from '../../activities/repeat';
import { campaignDir, VERDICT } from '../../lib/evidence/layout';
import { buildReport, renderMarkdown } from '../../lib/evidence/report';
import { num } from '../../lib/evidence/report/cells';
import { EvidenceStore } from '../../lib/evidence/store';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { readSampleFile } from '../../lib/loadgen/sample-reader';
import { BatchSizes } from '../../lib/protocol/batch-sizes';
import type { RigHandle } from '../../lib/protocol/campaign-result';
import { ClientTimestamps, LATE } from '../../lib/protocol/client-timestamps';
import type { RunReport } from '../../lib/protocol/run-report';
import { INGEST, isOk, type SampleColumns } from '../../lib/protocol/sample-row';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { requestRate, scheduleIndex } from '../../lib/protocol/stream-plan';
import { withClient } from '../../lib/targets/db';
import { rigDbUrls } from '../../lib/targets/local/connection';
import { provisionLocal, restartServiceLocal } from '../../lib/targets/local/provision';
import { isolatedStateDir, testCampaign } from '../harness/local-rig';

isolatedStateDir();
const campaign = testCampaign('batches');
let rig: RigHandle;
const example = parseCampaignSpec(JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'examples', 'batches.json'), 'utf8')));
const configuration = example.sustained!.configurations[0];
// The example's configuration as it is, for short repeats; a limit no machine's timing crosses (this is about counting).
const cfg = { ...configuration, p99LimitMs: 60_000 };
const SECONDS = 6;
const HOUR_MS = 3_600_000;

before(async () => {
  const p = await provisionLocal(campaign, {});
  rig = { campaignId: campaign, target: 'local', dataQueue: 'unused', serviceUrl: p.serviceUrl, database: '', rigDir: '', hardware: 'test', parameters: {} };
  await bringUp({ campaignId: campaign, rig, customers: 20 });
});

async function repeat(index: number, serviceUrl: string): Promise<{ report: RunReport; reconciled: boolean; runTag: string; cols: SampleColumns; dir: string }> {
  const rep = await runRepeat({ campaignId: campaign, rig: { ...rig, serviceUrl }, kind: 'sustained', configuration: cfg, index, seconds: SECONDS, probe: { rate: 0, p99BudgetMs: 500 }, driftLimit: 1000, maxInFlight: 256 });
  const dir = path.join(campaignDir(campaign), rep.summary.dir);
  const report = JSON.parse(fs.readFileSync(path.join(dir, VERDICT), 'utf8')) as RunReport;
  return { report, reconciled: rep.summary.reconciled, runTag: rep.summary.runTag, cols: await readSampleFile(path.join(dir, 'samples.csv.gz')), dir };
}

/** The idempotency keys of the claims (each accepted original once, its drawn size), and which of them the plan stamps late. */
function claimedKeys(cols: SampleColumns, runTag: string): { all: Set<string>; late: Set<string> } {
  const plan = cols.plan!;
  const stamps = new ClientTimestamps(plan.timestamps!);
  const all = new Set<string>();
  const late = new Set<string>();
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== INGEST || !isOk(cols.status[i])) continue;
    const k = scheduleIndex(requestRate(plan), cols.intended[i]);
    for (let j = 0; j < cols.events[i]; j++) {
      const key = `${runTag}-${k}-${j}`;
      all.add(key);
      if (stamps.kindOf(k, j) === LATE) late.add(key);
    }
  }
  return { all, late };
}

async function storedKeys(runTag: string): Promise<Array<{ key: string; late: boolean }>> {
  return withClient(rigDbUrls(campaign).ownerUrl, async (c) => {
    const r = await c.query<{ k: string; late: boolean }>(
      `SELECT idempotency_key AS k, created_at - occurred_at > interval '30 minutes' AS late FROM usage_events WHERE properties @> $1::jsonb`,
      [JSON.stringify({ rig_run: runTag })],
    );
    return r.rows.map((x) => ({ key: x.k, late: x.late }));
  });
}

test('geometric batch sizes with 10 % late and 5 % out-of-order client timestamps: every row its drawn size, the repeat reconciles exactly, the stamps are stored and shown as sent', async () => {
  assert.deepEqual(configuration.workload, { batchSizes: { distribution: 'geometric', max: 100 }, timestamps: { lateShare: 0.1, lagMs: HOUR_MS, outOfOrderShare: 0.05 } });
  const { report, reconciled, runTag, cols, dir } = await repeat(1, rig.serviceUrl);
  assert.equal(report.failed, 0, `${report.failed} requests failed`);
  assert.equal(report.dropped, 0, `${report.dropped} requests dropped`);
  const checks = (name: string) => report.gate.checks.find((c) => c.name === name);
  assert.equal(checks('rows')?.passed, true, checks('rows')?.detail);
  assert.equal(checks('quantity')?.passed, true, checks('quantity')?.detail);
  assert.equal(reconciled, true, 'rows == Σ events of the accepted requests, Σ quantity over them');

  // The plan carries the draw with its seed, and each row is its request's size: the plan check (rig analyze's) passes.
  const plan = cols.plan!;
  assert.equal(plan.batch_sizes?.distribution, 'geometric');
  assert.deepEqual([plan.timestamps?.late_share, plan.timestamps?.lag_ms, plan.timestamps?.out_of_order_share], [0.1, HOUR_MS, 0.05]);
  await analyzeFile(path.join(dir, 'samples.csv.gz'));
  const sizes = new BatchSizes(plan.batch_sizes!, plan.batch);
  const seen = new Set<number>();
  let events = 0;
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== INGEST) continue;
    assert.equal(cols.events[i], sizes.of(scheduleIndex(requestRate(plan), cols.intended[i])));
    seen.add(cols.events[i]);
    if (isOk(cols.status[i])) events += cols.events[i];
  }
  assert.ok(seen.size > 10, `${seen.size} different sizes sent`);
  assert.equal(report.events_claimed, events, 'events claimed are the accepted requests\' own sizes');
  assert.ok(report.batch_sizes && Math.abs((report.batch_sizes.mean ?? 0) - 10) < 1.5, `mean batch ${report.batch_sizes?.mean}`);

  // The shares as sent, and the database holds every stamp: the late rows an hour before they were written.
  const t = report.timestamps!;
  assert.ok(Math.abs((t.late_share ?? 0) - 0.1) < 0.03 && Math.abs((t.out_of_order_share ?? 0) - 0.05) < 0.03, `late ${t.late_share}, out of order ${t.out_of_order_share}`);
  // Said where a reader of the test output sees it: the figures of this repeat.
  console.log(`as sent: ${report.batch_sizes?.requests_sent} requests of mean ${report.batch_sizes?.mean?.toFixed(2)} events (${report.batch_sizes?.min}-${report.batch_sizes?.max}); ${t.events_sent} events, ${t.late} late (${((t.late_share ?? 0) * 100).toFixed(1)} %), ${t.out_of_order} out of order (${((t.out_of_order_share ?? 0) * 100).toFixed(1)} %); ${checks('rows')?.detail}`);
  const want = claimedKeys(cols, runTag);
  assert.equal(t.late_claimed, want.late.size);
  const stored = await storedKeys(runTag);
  assert.deepEqual(new Set(stored.map((r) => r.key)), want.all, 'the database holds exactly the claimed events');
  assert.deepEqual(new Set(stored.filter((r) => r.late).map((r) => r.key)), want.late, 'the late ones stored with their own time, an hour back');

  // The page: the sizes and the shares late and out of order as sent.
  const store = EvidenceStore.forCampaign(campaign);
  store.writeJson('spec.json', { ...example, sustained: { ...example.sustained, repeats: 1, repeatSeconds: SECONDS, configurations: [cfg] } });
  await store.buildManifest();
  const md = renderMarkdown(await buildReport(campaignDir(campaign)));
  const at = md.indexOf(`#### ${configuration.name}: batch sizes and client timestamps, as sent`);
  assert.ok(at >= 0, 'the page has the table of sizes and stamps as sent');
  const row = md
    .slice(at)
    .split('\n')
    .find((l) => l.startsWith('| ') && l.includes(`| ${num(t.late, 0)} (`));
  assert.ok(row, `a row with the ${t.late} late events as sent`);
  assert.match(row, new RegExp(`\\| ${num(t.out_of_order, 0)} \\(\\d+\\.\\d %\\) \\|`), row);
});

test('a service that drops late events (its HC_DROP_LATE_MS test switch) fails reconciliation: the rows check names the missing rows, exactly the late ones claimed', async () => {
  // The lossy build: late events (an hour back) answered 201, never written; out-of-order ones (1 s at most) kept.
  const lossy = await restartServiceLocal(campaign, { env: { HC_DROP_LATE_MS: '600000' } });
  const { report, reconciled, runTag, cols } = await repeat(2, lossy.serviceUrl);
  assert.equal(report.failed, 0, 'the lossy build answers every request 201');
  const t = report.timestamps!;
  assert.ok(t.late_claimed > 0, 'late events were claimed');
  const rows = report.gate.checks.find((c) => c.name === 'rows');
  assert.equal(rows?.passed, false);
  assert.equal(
    rows?.detail,
    `rows written ${report.events_claimed - t.late_claimed} != events claimed ${report.events_claimed} (missing ${t.late_claimed}); of the events claimed, ${t.late_claimed} were stamped late and ${t.out_of_order_claimed} out of order`,
  );
  assert.equal(report.gate.checks.find((c) => c.name === 'quantity')?.passed, false);
  assert.equal(reconciled, false);
  assert.equal(report.verdict.passed, false);
  console.log(`the lossy build: ${rows?.detail}`);
  // The rows missing are the late ones, key for key.
  const want = claimedKeys(cols, runTag);
  const stored = new Set((await storedKeys(runTag)).map((r) => r.key));
  assert.deepEqual(new Set([...want.all].filter((k) => !stored.has(k))), want.late);
});

// Control vs treatment on one local rig (issue 13): the variants' settings reach the database and the
// service (read back from pg_settings and /healthz into variants/NN-<variant>.json), a parameter that
// needs a restart restarts the cluster and the evidence says so, interleaved order is what the
// repeats' own start times show, and the page sets each treatment beside the control. Then a ladder
// under variants in blocks with fresh, one campaign for both: each variant climbs every rung, the
// rollup variant finds the rollup rebuilt after the control's rungs, the page sets the knees side by
// side, and the second variant writes its own history into an emptied table.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { campaignEnv, saveHistory, tinySpec } from '../harness/campaign';

interface VariantFile {
  variant: string;
  applied: { database: Record<string, string>; service: Record<string, string>; restarted: { database: string[]; service: boolean } };
}

const sustained = { ...tinySpec().sustained!, repeats: 2, repeatSeconds: 3, cooldownSeconds: 1, warmupSeconds: 1 };

// One Temporal dev server and one in-process worker for the file's two campaigns (made at the top
// level, so they end with the file, not with the first test): each campaign has its own id, rig and
// evidence folder, and each test ends with the machine clean, so the next starts from nothing.
const envReady = campaignEnv().then(async (env) => {
  await env.inProcessWorker();
  return env;
});
envReady.catch(() => undefined);

test('interleaved variants: settings read back from the database and the service, a restart recorded, A B A B as run, the comparison on the page', async () => {
  const env = await envReady;
  const spec = tinySpec({
    sustained,
    variants: {
      order: 'interleaved',
      control: { name: 'ctl', database: { autovacuum_vacuum_insert_scale_factor: 0.2 }, service: { insert: 'per-event' } },
      treatments: [{ name: 'trt', database: { autovacuum_vacuum_insert_scale_factor: 0.02, shared_buffers: '64MB' }, service: { insert: 'multi-row' } }],
    },
  });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'variants-interleaved', args: [spec] });
  const result = (await handle.result()) as CampaignResult;
  assert.deepEqual(result.configurations.map((c) => `${c.name} ${c.passed + (c.total - c.passed)}/${c.total}`), ['single.ctl 2/2', 'single.trt 2/2']);
  // The variants path recorded and replayed against the code that made it (test/harness/recorded-replay.ts).
  await saveHistory(env.address, 'variants-interleaved');

  const dir = result.resultsDir;
  const changes = fs.readdirSync(path.join(dir, 'variants')).sort();
  assert.deepEqual(changes, ['01-ctl.json', '02-trt.json', '03-ctl.json', '04-trt.json'], 'a change of variant before every repeat');
  const read = (f: string) => JSON.parse(fs.readFileSync(path.join(dir, 'variants', f), 'utf8')) as VariantFile;
  const ctl = read('01-ctl.json');
  const trt = read('02-trt.json');
  assert.equal(Number(ctl.applied.database.autovacuum_vacuum_insert_scale_factor), 0.2);
  assert.equal(ctl.applied.service.insert, 'per-event');
  assert.equal(Number(trt.applied.database.autovacuum_vacuum_insert_scale_factor), 0.02);
  assert.equal(trt.applied.database.shared_buffers, '64MB', 'shared_buffers read back from pg_settings (8192 x 8kB), in MB');
  assert.equal(trt.applied.service.insert, 'multi-row');
  assert.deepEqual(trt.applied.restarted, { database: ['shared_buffers'], service: true }, 'shared_buffers needs a restart: the cluster restarted, and the service with it');
  assert.deepEqual(read('03-ctl.json').applied.restarted.database, ['shared_buffers'], 'and back');

  // The order as run, from each repeat's own load.json.
  const started = result.repeats
    .map((r) => ({ v: r.configuration.split('.')[1], at: (JSON.parse(fs.readFileSync(path.join(dir, r.dir, 'load.json'), 'utf8')) as { started_at: string }).started_at }))
    .sort((a, b) => a.at.localeCompare(b.at))
    .map((x) => x.v);
  assert.deepEqual(started, ['ctl', 'trt', 'ctl', 'trt']);

  const page = fs.readFileSync(path.join(dir, 'report.md'), 'utf8');
  assert.match(page, /## Variants: each treatment beside the control/);
  assert.match(page, /Control ctl and trt on one rig, interleaved\. Repeats in the order they ran: ctl trt ctl trt\./);
  assert.match(page, /\| single: trt \| p99 \|/);
  assert.match(page, /\| single: trt \| what requests waited on \|/);
  assert.match(page, /\| 2 \| trt \| .* \| .*shared_buffers=64MB.* \| .*insert=multi-row.* \| database \(shared_buffers\), service \|/);
  const log = fs.readFileSync(path.join(dir, 'campaign.log'), 'utf8');
  assert.match(log, /variant trt: .*autovacuum_vacuum_insert_scale_factor=0\.02.*; service .*insert=multi-row.*; database restarted \(shared_buffers\), service restarted/);
  await env.assertClean();
});

test('a ladder under variants, blocks with fresh: each variant climbs every rung on a history of its own, a rollup variant finds the rollup whole, the page sets the knees side by side', async () => {
  const env = await envReady;
  const spec = tinySpec({
    seed: { customers: 20, historyRows: 500, settleTimeoutSeconds: 60 },
    sustained: undefined,
    // No warm-up: the interleaved test runs (and records for replay) warm-ups after a change of
    // variant; what is asserted here is the rungs, the rollup, the knees and the fresh history.
    ladder: { rates: [100, 200], batch: 10, rungs: 1, rungSeconds: 3, cooldownSeconds: 1, warmupSeconds: 0 },
    variants: { order: 'blocks', fresh: true, control: { name: 'scan' }, treatments: [{ name: 'rollup', service: { aggregate: 'rollup', lastUsed: 'every-request' } }] },
  });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'variants-ladder', args: [spec] });
  const result = (await handle.result()) as CampaignResult;
  assert.deepEqual(
    result.configurations.map((c) => `${c.name} ${c.total}`),
    ['rung-100.scan 1', 'rung-100.rollup 1', 'rung-200.scan 1', 'rung-200.rollup 1'],
  );
  // Each variant's rungs measured and reconciled (what the separate fresh-history campaign asserted of its repeats).
  assert.equal(result.repeats.filter((r) => r.kind === 'rung' && r.samples > 0 && r.reconciled).length, 4, 'four rungs measured and reconciled');
  // Blocks: the control's whole ladder, then the treatment's, as run.
  const started = result.repeats
    .map((r) => ({ c: r.configuration, at: (JSON.parse(fs.readFileSync(path.join(result.resultsDir, r.dir, 'load.json'), 'utf8')) as { started_at: string }).started_at }))
    .sort((a, b) => a.at.localeCompare(b.at))
    .map((x) => x.c);
  assert.deepEqual(started, ['rung-100.scan', 'rung-200.scan', 'rung-100.rollup', 'rung-200.rollup']);
  // The rollup variant's rollup was recomputed after the scan variant's rungs wrote rows it never saw.
  const rollup = JSON.parse(fs.readFileSync(path.join(result.resultsDir, 'variants', '02-rollup.json'), 'utf8')) as VariantFile & { rollupRows?: number; checkpoint?: { why: string; error?: string; requested_before: number; requested_after: number } };
  assert.equal(rollup.applied.service.aggregate, 'rollup');
  assert.ok((rollup.rollupRows ?? 0) > 0, `rollup rows ${rollup.rollupRows}`);
  // The change of variant (and its rollup rebuild) ended with a CHECKPOINT the statistics count.
  assert.equal(rollup.checkpoint?.why, 'after variant rollup and the rollup rebuild');
  assert.equal(rollup.checkpoint?.error, undefined, rollup.checkpoint?.error);
  assert.ok(rollup.checkpoint!.requested_after > rollup.checkpoint!.requested_before);
  // Fresh: the second variant's block seeds its own history into an emptied table.
  const seeds = result.steps.filter((s) => s.step === 'seed');
  assert.equal(seeds.length, 2, 'the campaign\'s seed, then variant rollup\'s fresh one');
  assert.match(seeds[1].summary, /^500 rows \(tag seed-[0-9a-f]{10}\)/);
  const log = fs.readFileSync(path.join(result.resultsDir, 'campaign.log'), 'utf8');
  assert.match(log, /seed: a fresh history for variant rollup: usage_events emptied \(\d+ rows\)/);
  assert.equal(rollup.applied.service.lastUsed, 'every-request');
  assert.deepEqual(rollup.applied.restarted, { database: [], service: true });
  const page = fs.readFileSync(path.join(result.resultsDir, 'report.md'), 'utf8');
  assert.match(page, /### The ladder of scan: where it stops holding/);
  assert.match(page, /### The ladder of rollup: where it stops holding/);
  assert.match(page, /The knee \(first rung that did not hold\): scan [^;]+; rollup [^.]+\./);
  await env.assertClean();
});

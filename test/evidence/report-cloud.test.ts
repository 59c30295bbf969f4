// test-mode: unit
// The page's "Cloud (RDS)" block: a repeat folder with the three cloud files (aws) renders the block
// beside the DB sampler's figures, each figure with its source and period, and a collector's error as
// such; the same campaign without them renders exactly as before (no block, no `cloud` in report.json).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { buildManifest } from '../../lib/evidence';
import { CLOUD_DB_LOAD, CLOUD_OS_METRICS, CLOUD_RDS_METRICS, MANIFEST_FILE } from '../../lib/evidence/layout';
import { buildReport, renderHtml, renderJson, renderMarkdown } from '../../lib/evidence/report';
import type { CloudErrorFile, DbLoadFile, OsMetricsFile, RdsMetricsFile } from '../../lib/protocol/cloud-evidence';
import { ONE_CONFIG, makeFixtureCampaign } from './fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-report-cloud-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const W = { start: '2026-08-16T10:00:00.000Z', end: '2026-08-16T10:00:20.000Z' };
const head = (source: string) => ({ source, window: W, collected_at: '2026-08-16T10:01:00.000Z' });
const t3 = ['2026-08-16T10:00:00.000Z', '2026-08-16T10:01:00.000Z', '2026-08-16T10:02:00.000Z'];
const series = (metric: string, unit: string, values: number[]) => ({ metric, unit, timestamps: t3.slice(0, values.length), values, status: 'Complete' });

const rds: RdsMetricsFile = {
  ...head('CloudWatch AWS/RDS (GetMetricData)'),
  db_instance: 'rig-x',
  namespace: 'AWS/RDS',
  stat: 'Average',
  period_s: 60,
  query: { start: '2026-08-16T10:00:00.000Z', end: '2026-08-16T10:01:00.000Z' },
  complete: true,
  waited_s: 0,
  series: [
    series('CPUUtilization', 'Percent', [40, 80]),
    series('ReadIOPS', 'Count/Second', [100, 300]),
    series('WriteIOPS', 'Count/Second', [2000, 4000]),
    series('DiskQueueDepth', 'Count', [1.5, 6.25]),
    series('ReadThroughput', 'Bytes/Second', [1e6, 1e6]),
    series('WriteThroughput', 'Bytes/Second', [5e7, 5e7]),
    series('FreeableMemory', 'Bytes', [3.2e9, 2.1e9]),
    series('ReadLatency', 'Seconds', [0.0004, 0.0006]),
    series('WriteLatency', 'Seconds', [0.002, 0.004]),
  ],
};
const osFile: OsMetricsFile = {
  ...head('Enhanced Monitoring (CloudWatch Logs RDSOSMetrics)'),
  log_group: 'RDSOSMetrics',
  log_stream: 'db-ABC',
  granularity_s: 1,
  events: 3,
  unreadable: 0,
  complete: true,
  t: ['2026-08-16T10:00:01.000Z', '2026-08-16T10:00:02.000Z', '2026-08-16T10:00:03.000Z'],
  cpu_total_pct: [50, 60, 70],
  cpu_wait_pct: [1, 12.5, 3],
  cpu_steal_pct: [0, 4.2, 1],
  load_1m: [2, 2, 2],
  memory_total_kb: [1, 1, 1],
  memory_free_kb: [1, 1, 1],
  memory_cached_kb: [1, 1, 1],
  disks: [],
};
const denied: CloudErrorFile = { ...head('Performance Insights db.load.avg by db.wait_event (GetResourceMetrics)'), error: 'AccessDeniedException: not authorized to perform: pi:GetResourceMetrics' };
const load: DbLoadFile = {
  ...head('Performance Insights db.load.avg by db.wait_event (GetResourceMetrics)'),
  identifier: 'db-ABC',
  metric: 'db.load.avg',
  group: 'db.wait_event',
  period_s: 1,
  aligned: W,
  total: { event: 'total', dimensions: {}, timestamps: ['2026-08-16T10:00:01.000Z'], values: [4] },
  by_wait_event: [
    { event: 'CPU', dimensions: {}, timestamps: ['2026-08-16T10:00:01.000Z'], values: [2.5] },
    { event: 'IO:DataFileRead', dimensions: {}, timestamps: ['2026-08-16T10:00:01.000Z'], values: [0.5] },
    { event: 'LWLock:WALWrite', dimensions: {}, timestamps: ['2026-08-16T10:00:01.000Z'], values: [1] },
    { event: 'Lock:transactionid', dimensions: {}, timestamps: ['2026-08-16T10:00:01.000Z'], values: [0.1] },
  ],
};

async function campaign(id: string, cloud: Record<string, Record<string, unknown>> | null, under = root) {
  fs.mkdirSync(under, { recursive: true });
  const fx = await makeFixtureCampaign({
    seed: 7,
    root: under,
    campaignId: id,
    repeats: 2,
    repeatSeconds: 20,
    ...ONE_CONFIG,
    unsealed: true,
  });
  for (const [dir, files] of Object.entries(cloud ?? {})) {
    for (const [name, json] of Object.entries(files)) fs.writeFileSync(path.join(fx.dir, dir, name), JSON.stringify(json, null, 2) + '\n');
  }
  fs.writeFileSync(path.join(fx.dir, MANIFEST_FILE), JSON.stringify(await buildManifest(fx.dir), null, 2) + '\n');
  return fx.dir;
}

test('a repeat with the three cloud files: the Cloud (RDS) block beside its DB figures, each figure with source and period; a collector error shown as such', async () => {
  const dir = await campaign('cloud', {
    'repeats/only/r1-a1': { [CLOUD_RDS_METRICS]: rds, [CLOUD_OS_METRICS]: osFile, [CLOUD_DB_LOAD]: load },
    'repeats/only/r2-a1': { [CLOUD_RDS_METRICS]: rds, [CLOUD_OS_METRICS]: osFile, [CLOUD_DB_LOAD]: denied },
  });
  const model = await buildReport(dir);
  assert.deepEqual(model.warnings.filter((w) => /cloud-/.test(w)), [], 'the cloud files read without a problem');
  const [r1, r2] = model.configurations[0].repeats;
  assert.ok(r1.cloud?.rds && 'ok' in r1.cloud.rds);
  assert.equal(r1.cloud.rds.ok.cpu_max_pct, 80);

  const md = renderMarkdown(model);
  assert.match(md, /#### only r1-a1: Cloud \(RDS\)/);
  assert.match(md, /\| RDS CPU \| mean 60\.0 %, max 80\.0 % \| CloudWatch AWS\/RDS \(GetMetricData\) \| 60 s averages \|/);
  assert.match(md, /\| read \/ write IOPS \(mean\) \| 200 \/ 3,000 \|/);
  assert.match(md, /\| disk queue depth \(max\) \| 6\.25 \|/);
  assert.match(md, /\| read \/ write latency \(mean\) \| 0\.5 ms \/ 3\.0 ms \|/);
  assert.match(md, /\| freeable memory \(min\) \| 2\.10 GB \|/);
  assert.match(md, /\| OS CPU steal \/ I\/O wait \(max\) \| 4\.2 % \/ 12\.5 % \| Enhanced Monitoring \(CloudWatch Logs RDSOSMetrics\) \| every 1 s, 3 samples \|/);
  assert.match(md, /\| db\.load by wait event \(top 3, mean active sessions\) \| CPU 2\.50, LWLock:WALWrite 1\.00, IO:DataFileRead 0\.50; all events 4\.00 \| Performance Insights .* \| 1 s \|/);
  assert.match(md, /#### only r2-a1: Cloud \(RDS\)\n\n[^#]*\| Performance Insights \| could not be read: AccessDeniedException: not authorized to perform: pi:GetResourceMetrics \|/);

  const html = renderHtml(model);
  assert.match(html, /<div class="cloud"><h5>Cloud \(RDS\)<\/h5><table id="cloud-only-r1-a1">/);
  // Beside the DB sampler's figures: inside the same repeat block, after its charts.
  const block = html.slice(html.indexOf('id="repeat-only-r1-a1"'), html.indexOf('id="repeat-only-r2-a1"'));
  assert.match(block, /data-kind="waits"[\s\S]*Cloud \(RDS\)/);
  assert.match(html, /<tr class="failed"><td>Performance Insights<\/td><td>could not be read: AccessDeniedException/);
  assert.ok(r2.cloud?.load && 'error' in r2.cloud.load);
});

test('without cloud files (a local campaign) the page is unchanged: no block, no `cloud` in report.json, and the same evidence renders the same bytes', async () => {
  const plain = await buildReport(await campaign('plain', null));
  const again = await buildReport(await campaign('plain', null, path.join(root, 'again')));
  assert.ok(plain.configurations[0].repeats.every((r) => !('cloud' in r)));
  assert.doesNotMatch(renderMarkdown(plain), /Cloud \(RDS\)/);
  assert.doesNotMatch(renderHtml(plain), /class="cloud"/);
  assert.doesNotMatch(renderJson(plain), /"cloud"/);
  // Same seed, same bytes: the renderers are deterministic with the cloud code in place.
  assert.equal(renderMarkdown(again), renderMarkdown(plain));
  assert.equal(renderHtml(again), renderHtml(plain));
});

// test-mode: unit
// The page's "tails attributed": a repeat's freeze-seconds set beside its postgres.log markers and
// its disk's per-second figures, from the local disk sampler or, without it, Enhanced Monitoring
// (aws); a repeat without freeze-seconds or windows has no block.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { buildManifest } from '../../lib/evidence';
import { CLOUD_OS_METRICS, DISK_SAMPLES, LOAD, MANIFEST_FILE, POSTGRES_LOG } from '../../lib/evidence/layout';
import { buildReport, renderHtml, renderJson, renderMarkdown } from '../../lib/evidence/report';
import type { OsMetricsFile } from '../../lib/protocol/cloud-evidence';
import { ONE_CONFIG, makeFixtureCampaign } from './fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-report-tails-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** The Postgres log's own stamp (%m, UTC). */
const stamp = (ms: number) => `${new Date(ms).toISOString().slice(0, 23).replace('T', ' ')} UTC`;

test('freeze-seconds beside the vacuum pass that covers them and the disk that second; one with no marker is unexplained; aws reads Enhanced Monitoring', async () => {
  const fx = await makeFixtureCampaign({
    seed: 11,
    root,
    campaignId: 'tails',
    repeats: 3,
    repeatSeconds: 20,
    ...ONE_CONFIG,
    plans: [
      { config: 'only', repeat: 1, stallsAt: [5, 14] },
      { config: 'only', repeat: 2, stallsAt: [7] },
    ],
    unsealed: true,
  });
  const dir = (k: number) => path.join(fx.dir, 'repeats', 'only', `r${k}-a1`);
  const t0 = (k: number) => Date.parse((JSON.parse(fs.readFileSync(path.join(dir(k), LOAD), 'utf8')) as { started_at: string }).started_at);

  // r1 (local): an autovacuum pass of 1.5 s ending 5.6 s in, and one disk row a second: second 5 is the storm.
  const s1 = t0(1);
  fs.writeFileSync(
    path.join(dir(1), POSTGRES_LOG),
    [
      `${stamp(s1 + 5600)} [5151] LOG:  automatic vacuum of table "rig.public.usage_events": index scans: 0`,
      '\tbuffer usage: 9000 hits, 0 misses, 48211 dirtied',
      '\tsystem usage: CPU: user: 0.41 s, system: 0.30 s, elapsed: 1.50 s',
      '',
    ].join('\n'),
  );
  const row = (s: number, writeKb: number, writes: number, q: number) => JSON.stringify({ t: new Date(s1 + (s + 1) * 1000).toISOString(), seq: s + 1, intervalMs: 1000, devices: [{ device: 'vda', reads_ps: 0, writes_ps: writes, read_kb_ps: 0, write_kb_ps: writeKb, avg_io_kb: writes ? writeKb / writes : null, avg_write_kb: null, queue_depth: q, util_pct: 50, await_ms: null }] });
  fs.writeFileSync(path.join(dir(1), DISK_SAMPLES), Array.from({ length: 20 }, (_, s) => (s === 5 ? row(s, 24000, 4000, 310) : row(s, 10700, 100, 2))).join('\n') + '\n');

  // r2 (aws-shaped): no disk sampler, Enhanced Monitoring's per-second disk with its KB rates.
  const s2 = t0(2);
  const ts = Array.from({ length: 20 }, (_, s) => new Date(s2 + (s + 1) * 1000).toISOString());
  const em: OsMetricsFile = {
    source: 'Enhanced Monitoring (CloudWatch Logs RDSOSMetrics)',
    window: { start: new Date(s2).toISOString(), end: new Date(s2 + 20_000).toISOString() },
    collected_at: new Date(s2 + 60_000).toISOString(),
    log_group: 'RDSOSMetrics',
    log_stream: 'db-ABC',
    granularity_s: 1,
    events: 20,
    unreadable: 0,
    complete: true,
    t: ts,
    cpu_total_pct: ts.map(() => 50),
    cpu_wait_pct: ts.map(() => 1),
    cpu_steal_pct: ts.map(() => 0),
    load_1m: ts.map(() => 2),
    memory_total_kb: ts.map(() => 1),
    memory_free_kb: ts.map(() => 1),
    memory_cached_kb: ts.map(() => 1),
    disks: [{ device: 'rdsdbdata', read_iops: ts.map(() => 0), write_iops: ts.map((_, s) => (s === 7 ? 50 : 100)), await_ms: ts.map(() => 1), avg_queue_len: ts.map((_, s) => (s === 7 ? 64 : 2)), read_kb_ps: ts.map(() => 0), write_kb_ps: ts.map(() => 5350) }],
  };
  fs.writeFileSync(path.join(dir(2), CLOUD_OS_METRICS), JSON.stringify(em, null, 2) + '\n');
  fs.writeFileSync(path.join(fx.dir, MANIFEST_FILE), JSON.stringify(await buildManifest(fx.dir), null, 2) + '\n');

  const model = await buildReport(fx.dir);
  assert.deepEqual(model.warnings.filter((w) => /disk-samples|postgres\.log|cloud-os/.test(w)), []);
  const [r1, r2, r3] = model.configurations[0].repeats;
  assert.deepEqual(r1.report?.freeze_seconds, [5, 14]);
  assert.deepEqual(r1.tails?.rows.map((r) => [r.from_s, r.class]), [[5, 'vacuum'], [14, 'unexplained']]);
  assert.deepEqual(r1.tails?.rows[0].disk, { avg_io_kb: 6, queue_depth: 310 });
  assert.equal(r1.tails?.disk_source, 'disk sampler');
  assert.match(r1.tails!.rows[0].lines[0], /automatic vacuum of table "rig\.public\.usage_events"/);
  assert.deepEqual(r2.tails?.rows.map((r) => [r.from_s, r.class, r.disk]), [[7, 'unexplained', { avg_io_kb: 107, queue_depth: 64 }]]);
  assert.equal(r2.tails?.disk_source, 'Enhanced Monitoring');
  assert.equal(r3.tails, undefined, 'no freeze-second, no window: no block');

  const md = renderMarkdown(model);
  assert.match(md, /#### only r1-a1: tails attributed\n\nvacuum 1 freeze-second; unexplained 1 freeze-second \(disk figures from the disk sampler \(disk-samples\.jsonl\)\)\./);
  assert.match(md, /\| second 5 \| vacuum \| \d\d:\d\d:\d\d\.\d{3} vacuum public\.usage_events 1\.50 s, 48,211 pages dirtied \| 6\.0 KB \| 310\.0 \|/);
  assert.match(md, /\| second 14 \| unexplained \| — \| 107\.0 KB \| 2\.0 \|/);
  assert.match(md, /\| second 7 \| unexplained \| — \| 107\.0 KB \| 64\.0 \|/);
  assert.match(md, /#### only r2-a1: tails attributed\n\nunexplained 1 freeze-second \(disk figures from Enhanced Monitoring \(cloud-os-metrics\.json\)\)\./);
  assert.doesNotMatch(md, /only r3-a1: tails attributed/);
  assert.match(md, /- Tails attributed: A freeze-second s is/);
  assert.match(renderHtml(model), /<div class="tails"><h5>Tails attributed<\/h5><p>vacuum 1 freeze-second;[^<]*<\/p><table id="tails-only-r1-a1">/);
  assert.match(renderJson(model), /"tails"/);
});

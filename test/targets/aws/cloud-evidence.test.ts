// The aws target's cloud evidence with the real SDK clients: CloudWatch GetMetricData and CloudWatch
// Logs against a real moto 5.2.5 on data this file puts there (PutMetricData, PutLogEvents), the DB
// instance's DbiResourceId from moto's RDS; Performance Insights and the Postgres log
// (DescribeDBLogFiles / DownloadDBLogFilePortion), which moto lacks, against a local replay server
// answering with the API reference's response shapes (fixtures/README.md). A collector that fails
// (Performance Insights answering 400 AccessDeniedException) writes its error into its own file and
// the other two are still written.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { CloudWatchClient, PutMetricDataCommand, type StandardUnit } from '@aws-sdk/client-cloudwatch';
import { CloudWatchLogsClient, CreateLogGroupCommand, CreateLogStreamCommand, PutLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { PIClient } from '@aws-sdk/client-pi';
import { CreateDBInstanceCommand, RDSClient } from '@aws-sdk/client-rds';
import { CLOUD_DB_LOAD, CLOUD_OS_METRICS, CLOUD_RDS_METRICS } from '../../../lib/evidence/layout';
import { isCloudError, summarizeCloud, summarizeDbLoad, summarizeOs, summarizeRds, type CloudWindow, type DbLoadFile, type OsMetricsFile, type RdsMetricsFile } from '../../../lib/protocol/cloud-evidence';
import { assembleCloudClients } from '../../../lib/targets/aws/evidence/clients';
import { collectRdsMetrics, RDS_METRICS } from '../../../lib/targets/aws/evidence/cloudwatch';
import { collectCloudEvidence } from '../../../lib/targets/aws/evidence/collect';
import { collectOsMetrics } from '../../../lib/targets/aws/evidence/enhanced-monitoring';
import { collectDbLoad } from '../../../lib/targets/aws/evidence/performance-insights';
import { openAwsPostgresLog } from '../../../lib/targets/aws/evidence/postgres-log';
import { dbiResourceId } from '../../../lib/targets/aws/evidence/resource-id';
import { fetchUntilComplete } from '../../../lib/targets/aws/evidence/wait-for-data';
import { useMoto } from '../../harness/aws-env';
import { fill, startReplayServer, type ReplayServer } from '../../harness/replay-server';

const REGION = 'eu-west-1';
const DB = 'rig-cloud-evidence-test';
const FIXTURES = path.join(__dirname, 'fixtures');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');

// The window: three whole minutes ten minutes ago, ending 20 s into the third (a load's end is never
// on a minute), so CloudWatch's query rounds it out to [start, start + 3 min).
const MIN = 60_000;
const startMs = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
const endMs = startMs + 2 * MIN + 40_000;
const WINDOW: CloudWindow = { start: new Date(startMs).toISOString(), end: new Date(endMs).toISOString() };

// moto, the state folder and the environment (AWS_REGION is REGION) for the file; the replay server and the data are set up after.
// The data the tests read goes into moto once it answers (afterStart: a file's own `before` is not ordered after useMoto's).
const env = useMoto({ prefix: 'rig-aws-evidence-', region: REGION, afterStart: () => putTestData() });
let replay: ReplayServer;
let resourceId: string;
let piMode: 'ok' | 'denied' = 'ok';
const cfg = () => ({ region: REGION, endpoint: env.endpoint, maxAttempts: 1 });
const replayCfg = () => ({ region: REGION, endpoint: replay.endpoint, maxAttempts: 1 });

/** "2026-05-01 12:00:03" (the Postgres log's stamp) of epoch ms. */
const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13).replace('T', '-');

function answer(req: { headers: Record<string, string | string[] | undefined>; body: string }) {
  const target = String(req.headers['x-amz-target'] ?? '');
  if (target === 'PerformanceInsightsv20180227.GetResourceMetrics') {
    if (piMode === 'denied') return { status: 400, contentType: 'application/x-amz-json-1.1', body: fixture('pi-access-denied.json') };
    const body = fill(fixture('pi-get-resource-metrics.json'), { START_S: startMs / 1000, END_S: endMs / 1000, RESOURCE_ID: resourceId, T0: startMs / 1000 + 1, T1: startMs / 1000 + 2 });
    return { status: 200, contentType: 'application/x-amz-json-1.1', body };
  }
  const form = new URLSearchParams(req.body);
  const values = { HOUR: hourOf(startMs), LAST_WRITTEN_MS: endMs, BEFORE: stamp(startMs - 30_000), IN1: stamp(startMs + 5_000), IN2: stamp(startMs + 65_000) };
  if (form.get('Action') === 'DescribeDBLogFiles') return { status: 200, contentType: 'text/xml', body: fill(fixture('rds-describe-db-log-files.xml'), values) };
  if (form.get('Action') === 'DownloadDBLogFilePortion') {
    const page = form.get('Marker') === '0' ? 1 : 2;
    return { status: 200, contentType: 'text/xml', body: fill(fixture(`rds-download-db-log-file-portion-${page}.xml`), values) };
  }
  return { status: 400, contentType: 'text/plain', body: `replay server: no answer for ${target || form.get('Action')}` };
}

/** One Enhanced Monitoring message, in the RDS User Guide's shape (the fields kept, and a few not). */
function osMessage(ms: number, steal: number, wait: number): string {
  return JSON.stringify({
    engine: 'POSTGRES',
    instanceID: DB,
    instanceResourceID: resourceId,
    timestamp: new Date(ms).toISOString().replace('.000Z', 'Z'),
    version: 1,
    uptime: '0:10:00',
    numVCPUs: 8,
    cpuUtilization: { guest: 0, irq: 0.1, system: 5, wait, idle: 50, user: 40, total: 50 - steal, steal, nice: 0 },
    loadAverageMinute: { fifteen: 1, five: 2, one: 3 },
    memory: { writeback: 0, hugePagesFree: 0, hugePagesRsvd: 0, hugePagesSurp: 0, cached: 4000000, hugePagesSize: 2048, free: 20000000, hugePagesTotal: 0, inactive: 1, pageTables: 1, dirty: 1, mapped: 1, active: 1, total: 32000000, slab: 1, buffers: 1 },
    diskIO: [{ device: 'rdsdbdata', readIOsPS: 10, writeIOsPS: 900, await: 0.7, avgQueueLen: 2.5, readKbPS: 80, writeKbPS: 9000, util: 40, rrqmPS: 0, wrqmPS: 0, tps: 910, readKb: 80, writeKb: 9000, avgReqSz: 10 }],
    processList: [{ vss: 1, name: 'postgres', tgid: 1, parentID: 1, memoryUsedPc: 1, cpuUsedPc: 1, id: 1, rss: 1 }],
  });
}

async function putTestData(): Promise<void> {
  replay = await startReplayServer(answer);

  const rds = new RDSClient(cfg());
  await rds.send(new CreateDBInstanceCommand({ DBInstanceIdentifier: DB, DBInstanceClass: 'db.m7g.2xlarge', Engine: 'postgres', AllocatedStorage: 100, MasterUsername: 'rig_admin', MasterUserPassword: 'not-a-secret-1' }));
  resourceId = await dbiResourceId(rds, DB);
  rds.destroy();

  // Three whole minutes of every AWS/RDS metric, in the units RDS publishes them in.
  const cw = new CloudWatchClient(cfg());
  const datum = (metric: string, unit: string, k: number) => ({
    MetricName: metric,
    Dimensions: [{ Name: 'DBInstanceIdentifier', Value: DB }],
    Timestamp: new Date(startMs + k * MIN + 10_000),
    Value: metric === 'CPUUtilization' ? [40, 60, 80][k] : metric === 'ReadLatency' ? 0.0005 : metric === 'FreeableMemory' ? [3e9, 2e9, 2.5e9][k] : metric === 'DiskQueueDepth' ? [1, 4, 2][k] : 100 * (k + 1),
    Unit: unit as StandardUnit,
  });
  await cw.send(new PutMetricDataCommand({ Namespace: 'AWS/RDS', MetricData: RDS_METRICS.flatMap((m) => [0, 1, 2].map((k) => datum(m.metric, m.unit, k))) }));
  cw.destroy();

  // Enhanced Monitoring: a few one-second messages, the last two seconds before the window's end, and one that is not JSON.
  const logs = new CloudWatchLogsClient(cfg());
  await logs.send(new CreateLogGroupCommand({ logGroupName: 'RDSOSMetrics' }));
  await logs.send(new CreateLogStreamCommand({ logGroupName: 'RDSOSMetrics', logStreamName: resourceId }));
  const at = [startMs + 1_000, startMs + 2_000, startMs + 3_000, endMs - 2_000];
  await logs.send(
    new PutLogEventsCommand({
      logGroupName: 'RDSOSMetrics',
      logStreamName: resourceId,
      logEvents: [
        ...at.map((ms, i) => ({ timestamp: ms, message: osMessage(ms, [0.5, 3.5, 1, 0][i], [2, 1, 9, 0][i]) })),
        { timestamp: endMs - 1_000, message: 'not json' },
      ],
    }),
  );
  logs.destroy();
}

after(async () => {
  await replay?.stop();
});

const noWait = () => ({ deadline: Date.now(), sleep: () => Promise.reject(new Error('must not wait: the data is complete')) });

test('CloudWatch AWS/RDS (moto): every metric over the window rounded out to minutes, 60 s averages with their units, complete without waiting', async () => {
  const cw = new CloudWatchClient(cfg());
  try {
    const f = await collectRdsMetrics(cw, DB, WINDOW, noWait());
    assert.equal(f.period_s, 60);
    assert.deepEqual(f.query, { start: new Date(startMs).toISOString(), end: new Date(startMs + 3 * MIN).toISOString() });
    assert.equal(f.complete, true);
    assert.equal(f.waited_s, 0);
    assert.deepEqual(f.series.map((s) => s.metric), RDS_METRICS.map((m) => m.metric));
    for (const s of f.series) assert.equal(s.timestamps.length, 3, `${s.metric}: ${JSON.stringify(s)}`);
    assert.equal(f.series.find((s) => s.metric === 'CPUUtilization')!.unit, 'Percent');
    assert.deepEqual(f.series.find((s) => s.metric === 'CPUUtilization')!.values, [40, 60, 80]);
    assert.equal(f.series[0].timestamps[0], new Date(startMs).toISOString());
    const sum = summarizeRds(f);
    assert.equal(sum.cpu_mean_pct, 60);
    assert.equal(sum.cpu_max_pct, 80);
    assert.equal(sum.queue_depth_max, 4);
    assert.equal(sum.read_latency_mean_ms, 0.5);
    assert.equal(sum.freeable_memory_min_bytes, 2e9);
  } finally {
    cw.destroy();
  }
});

test('Enhanced Monitoring (moto RDSOSMetrics, stream = DbiResourceId): per-event series of CPU, memory and each disk; a message that is not JSON is counted, not guessed', async () => {
  const logs = new CloudWatchLogsClient(cfg());
  try {
    const f = await collectOsMetrics(logs, resourceId, WINDOW, noWait());
    assert.equal(f.log_stream, resourceId);
    assert.equal(f.events, 5);
    assert.equal(f.unreadable, 1);
    assert.equal(f.t.length, 4);
    assert.equal(f.granularity_s, 1);
    assert.deepEqual(f.cpu_steal_pct, [0.5, 3.5, 1, 0]);
    assert.deepEqual(f.load_1m, [3, 3, 3, 3]);
    assert.equal(f.memory_total_kb[0], 32000000);
    assert.deepEqual(f.disks.map((d) => d.device), ['rdsdbdata']);
    assert.deepEqual(f.disks[0].avg_queue_len, [2.5, 2.5, 2.5, 2.5]);
    assert.equal(f.complete, true);
    const s = summarizeOs(f);
    assert.equal(s.steal_max_pct, 3.5);
    assert.equal(s.wait_max_pct, 9);
  } finally {
    logs.destroy();
  }
});

test('Performance Insights (replayed GetResourceMetrics): db.load.avg by db.wait_event at 1 s for the instance\'s DbiResourceId; the total line kept apart', async () => {
  piMode = 'ok';
  const pi = new PIClient(replayCfg());
  try {
    const before = replay.requests.length;
    const f = await collectDbLoad(pi, resourceId, WINDOW);
    const sent = replay.requests.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0].headers['x-amz-target'], 'PerformanceInsightsv20180227.GetResourceMetrics');
    const body = JSON.parse(sent[0].body) as Record<string, unknown>;
    assert.equal(body.ServiceType, 'RDS');
    assert.equal(body.Identifier, resourceId);
    assert.equal(body.PeriodInSeconds, 1);
    assert.deepEqual(body.MetricQueries, [{ Metric: 'db.load.avg', GroupBy: { Group: 'db.wait_event', Limit: 10 } }]);
    assert.deepEqual(f.total?.values, [3, 5]);
    assert.deepEqual(f.by_wait_event.map((s) => s.event), ['CPU', 'IO:DataFileRead', 'LWLock:WALWrite', 'Lock:transactionid']);
    assert.deepEqual(summarizeDbLoad(f).top, [
      { event: 'CPU', mean: 2.5 },
      { event: 'LWLock:WALWrite', mean: 1 },
      { event: 'IO:DataFileRead', mean: 0.5 },
    ]);
    assert.equal(summarizeDbLoad(f).mean_total, 4);
  } finally {
    pi.destroy();
  }
});

test('the Postgres log (replayed DescribeDBLogFiles + DownloadDBLogFilePortion): files written since the window opened, Marker paging until AdditionalDataPending is false, lines before the window dropped', async () => {
  const rds = new RDSClient(replayCfg());
  try {
    const before = replay.requests.length;
    const window = await openAwsPostgresLog({ rds }, DB, () => startMs);
    const text = await window.read();
    const forms = replay.requests.slice(before).map((r) => new URLSearchParams(r.body));
    assert.deepEqual(forms.map((f) => f.get('Action')), ['DescribeDBLogFiles', 'DownloadDBLogFilePortion', 'DownloadDBLogFilePortion']);
    assert.equal(forms[0].get('FileLastWritten'), String(startMs));
    assert.equal(forms[1].get('LogFileName'), `error/postgresql.log.${hourOf(startMs)}`);
    assert.equal(forms[1].get('Marker'), '0');
    assert.equal(forms[2].get('Marker'), `${hourOf(startMs)}:1024`);
    assert.doesNotMatch(text, /connection authorized/, 'the line from before the window is dropped');
    assert.match(text, /duration: 812\.004 ms {2}statement: INSERT INTO usage_events\n\tSELECT 1\n/, 'an entry in the window keeps its continuation line');
    assert.match(text, /checkpoint complete/, 'the second page is read');
  } finally {
    rds.destroy();
  }
});

test('collectCloudEvidence: Performance Insights refused (400 AccessDeniedException) -> its file holds the error; CloudWatch and Enhanced Monitoring are still written, and the summary shows the error as such', async () => {
  piMode = 'denied';
  const clients = assembleCloudClients({ cloudwatch: new CloudWatchClient(cfg()), logs: new CloudWatchLogsClient(cfg()), rds: new RDSClient(cfg()), pi: new PIClient(replayCfg()) });
  const written = new Map<string, unknown>();
  try {
    const outcomes = await collectCloudEvidence({ region: REGION, dbInstanceIdentifier: DB, ...WINDOW }, (file, json) => written.set(file, json), { clients, maxWaitMs: 0 });
    assert.deepEqual([...written.keys()].sort(), [CLOUD_DB_LOAD, CLOUD_OS_METRICS, CLOUD_RDS_METRICS].sort());
    const load = written.get(CLOUD_DB_LOAD);
    assert.ok(isCloudError(load), JSON.stringify(load));
    assert.match(load.error, /^AccessDeniedException: .*not authorized to perform: pi:GetResourceMetrics/);
    assert.deepEqual(load.window, WINDOW);
    assert.equal((written.get(CLOUD_RDS_METRICS) as RdsMetricsFile).series.length, RDS_METRICS.length);
    assert.equal((written.get(CLOUD_OS_METRICS) as OsMetricsFile).t.length, 4);
    assert.deepEqual(outcomes.map((o) => [o.file, o.error === null]), [[CLOUD_RDS_METRICS, true], [CLOUD_OS_METRICS, true], [CLOUD_DB_LOAD, false]]);
    const summary = summarizeCloud({ rds: written.get(CLOUD_RDS_METRICS) as RdsMetricsFile, os: written.get(CLOUD_OS_METRICS) as OsMetricsFile, load: load as unknown as DbLoadFile })!;
    assert.ok(summary.load && 'error' in summary.load && /AccessDenied/.test(summary.load.error));
    assert.ok(summary.rds && 'ok' in summary.rds && summary.rds.ok.cpu_max_pct === 80);
  } finally {
    clients.destroy();
    piMode = 'ok';
  }
});

test('collectCloudEvidence: no such DB instance -> Enhanced Monitoring and Performance Insights both say why (no DbiResourceId); nothing throws', async () => {
  const clients = assembleCloudClients({ cloudwatch: new CloudWatchClient(cfg()), logs: new CloudWatchLogsClient(cfg()), rds: new RDSClient(cfg()), pi: new PIClient(replayCfg()) });
  const written = new Map<string, unknown>();
  try {
    await collectCloudEvidence({ region: REGION, dbInstanceIdentifier: 'rig-no-such-db', ...WINDOW }, (file, json) => written.set(file, json), { clients, maxWaitMs: 0 });
    for (const f of [CLOUD_OS_METRICS, CLOUD_DB_LOAD]) {
      const v = written.get(f);
      assert.ok(isCloudError(v), `${f}: ${JSON.stringify(v)}`);
      assert.match(v.error, /DBInstanceNotFound/);
    }
    // CloudWatch answers for any dimension: an empty, incomplete series (the deadline was 0), not an error.
    const rdsFile = written.get(CLOUD_RDS_METRICS) as RdsMetricsFile;
    assert.equal(rdsFile.complete, false);
    assert.ok(rdsFile.series.every((s) => s.values.length === 0));
  } finally {
    clients.destroy();
  }
});

test('the wait for late data is bounded: it asks again until complete, heartbeating, and stops at the deadline marked incomplete', async () => {
  let calls = 0;
  const beats: string[] = [];
  const sleep = async () => undefined;
  const done = await fetchUntilComplete(async () => ++calls, (n) => n >= 3, 'test data', { deadline: Date.now() + 60_000, sleep, onWait: (m) => beats.push(m) });
  assert.deepEqual([done.value, done.complete, beats.length], [3, true, 2]);
  const late = await fetchUntilComplete(async () => 0, () => false, 'test data', { deadline: Date.now() - 1, sleep });
  assert.equal(late.complete, false);
});

// test-mode: unit
// The cloud evidence summaries (lib/protocol/cloud-evidence.ts), pure: no server, no SDK.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isCloudError, summarizeCloud, summarizeDbLoad, summarizeOs, summarizeRds, type DbLoadFile, type OsMetricsFile, type RdsMetricsFile } from '../../lib/protocol/cloud-evidence';

const W = { start: '2026-08-16T10:00:00.000Z', end: '2026-08-16T10:02:00.000Z' };
const head = { source: 's', window: W, collected_at: W.end };
const s = (metric: string, values: number[]) => ({ metric, unit: 'u', timestamps: values.map((_, i) => new Date(Date.parse(W.start) + i * 60_000).toISOString()), values, status: 'Complete' });

test('RDS: CPU mean and max of the per-minute averages, IOPS means, queue depth max, latency means in ms, freeable memory min; a missing metric is null', () => {
  const f: RdsMetricsFile = {
    ...head,
    db_instance: 'd',
    namespace: 'AWS/RDS',
    stat: 'Average',
    period_s: 60,
    query: W,
    complete: false,
    waited_s: 300,
    series: [s('CPUUtilization', [10, 30, 50]), s('ReadIOPS', [1, 2, 3]), s('WriteIOPS', [10, 20]), s('DiskQueueDepth', [0.5, 7, 2]), s('ReadLatency', [0.001, 0.003]), s('FreeableMemory', [5, 3, 4])],
  };
  assert.deepEqual(summarizeRds(f), {
    cpu_mean_pct: 30,
    cpu_max_pct: 50,
    read_iops_mean: 2,
    write_iops_mean: 15,
    queue_depth_max: 7,
    read_latency_mean_ms: 2,
    write_latency_mean_ms: null,
    freeable_memory_min_bytes: 3,
    points: 3,
    complete: false,
  });
});

test('OS: steal and wait maxima ignore missing values; DB load: top 3 wait events by mean, ties by name, the total apart', () => {
  const os = { ...head, log_group: 'g', log_stream: 'x', granularity_s: 1, events: 3, unreadable: 1, complete: true, t: ['a', 'b', 'c'], cpu_total_pct: [1, null, 3], cpu_wait_pct: [null, 4, 2], cpu_steal_pct: [0, null, 0.25], load_1m: [], memory_total_kb: [], memory_free_kb: [], memory_cached_kb: [], disks: [] } as OsMetricsFile;
  assert.deepEqual(summarizeOs(os), { steal_max_pct: 0.25, wait_max_pct: 4, cpu_max_pct: 3, samples: 3, unreadable: 1 });
  const ev = (event: string, values: Array<number | null>) => ({ event, dimensions: {}, timestamps: values.map(() => W.start), values });
  const load: DbLoadFile = { ...head, identifier: 'db-x', metric: 'db.load.avg', group: 'db.wait_event', period_s: 1, aligned: null, total: ev('total', [2, 4]), by_wait_event: [ev('b', [1, 1]), ev('a', [1, null]), ev('CPU', [3, 5]), ev('z', [0.1])] };
  assert.deepEqual(summarizeDbLoad(load), { top: [{ event: 'CPU', mean: 4 }, { event: 'a', mean: 1 }, { event: 'b', mean: 1 }], mean_total: 3 });
});

test('summarizeCloud: null without any file (local); an error file stays an error with its source; each part names its period', () => {
  assert.equal(summarizeCloud({ rds: null, os: null, load: null }), null);
  const err = { ...head, source: 'PI', error: 'AccessDeniedException: no' };
  assert.ok(isCloudError(err));
  const c = summarizeCloud({ rds: null, os: null, load: err })!;
  assert.deepEqual(c, { rds: null, os: null, load: { error: 'AccessDeniedException: no', source: 'PI' } });
});

// CloudWatch's AWS/RDS metrics of one DB instance over a repeat's window (GetMetricData), one series
// per metric with its timestamps and unit: what RDS itself says the instance's CPU, disks and memory
// did while the load ran, beside what the DB sampler saw from inside Postgres.
//
// - Period 60 s: RDS publishes its CloudWatch metrics at one-minute resolution ("standard
//   resolution"); a shorter period returns nothing more. Per-second OS figures come from Enhanced
//   Monitoring (enhanced-monitoring.ts) instead.
// - The window is rounded out to whole minutes, so the first and last partial minutes of the load
//   are in (their datapoints also cover a few seconds before and after it: the file says so in
//   `query`).
// - Statistic Average: the per-minute mean. A "max" on the page is the largest per-minute mean.
// - Units: GetMetricData's MetricDataResult has no unit field, so each series carries the unit the
//   RDS User Guide documents for its metric ("Amazon CloudWatch metrics for Amazon RDS"). The query
//   does not pass a Unit: a unit that does not match what RDS published returns an empty series with
//   no error, which would pass for "no data".
// - Paginated by NextToken (a page can also say PartialData); series of the same Id are joined.
import { GetMetricDataCommand, type CloudWatchClient, type MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import type { CloudWindow, RdsMetricsFile, RdsSeries } from '../../../protocol/cloud-evidence';
import { fetchUntilComplete, type WaitOptions } from './wait-for-data';

export const RDS_PERIOD_S = 60;

/** The metrics kept, with the unit the RDS User Guide documents for each. */
export const RDS_METRICS: ReadonlyArray<{ metric: string; unit: string }> = [
  { metric: 'CPUUtilization', unit: 'Percent' },
  { metric: 'ReadIOPS', unit: 'Count/Second' },
  { metric: 'WriteIOPS', unit: 'Count/Second' },
  { metric: 'DiskQueueDepth', unit: 'Count' },
  { metric: 'ReadThroughput', unit: 'Bytes/Second' },
  { metric: 'WriteThroughput', unit: 'Bytes/Second' },
  { metric: 'FreeableMemory', unit: 'Bytes' },
  { metric: 'ReadLatency', unit: 'Seconds' },
  { metric: 'WriteLatency', unit: 'Seconds' },
];

export const RDS_METRICS_SOURCE = 'CloudWatch AWS/RDS (GetMetricData)';

/** [start, end) rounded out to whole periods. */
export function periodWindow(w: CloudWindow, periodS = RDS_PERIOD_S): { start: Date; end: Date } {
  const p = periodS * 1000;
  const start = Math.floor(Date.parse(w.start) / p) * p;
  const end = Math.max(start + p, Math.ceil(Date.parse(w.end) / p) * p);
  return { start: new Date(start), end: new Date(end) };
}

/** One GetMetricData pass over the window, every page. */
export async function getRdsSeries(cw: CloudWatchClient, dbInstanceIdentifier: string, q: { start: Date; end: Date }): Promise<RdsSeries[]> {
  const queries: MetricDataQuery[] = RDS_METRICS.map((m, i) => ({
    Id: `m${i}`,
    Label: m.metric,
    MetricStat: {
      Metric: { Namespace: 'AWS/RDS', MetricName: m.metric, Dimensions: [{ Name: 'DBInstanceIdentifier', Value: dbInstanceIdentifier }] },
      Period: RDS_PERIOD_S,
      Stat: 'Average',
    },
    ReturnData: true,
  }));
  const points = RDS_METRICS.map(() => new Map<number, number>());
  const status = RDS_METRICS.map(() => 'Complete');
  let token: string | undefined;
  do {
    const out = await cw.send(new GetMetricDataCommand({ MetricDataQueries: queries, StartTime: q.start, EndTime: q.end, ScanBy: 'TimestampAscending', NextToken: token }));
    for (const r of out.MetricDataResults ?? []) {
      const i = Number((r.Id ?? '').slice(1));
      if (!Number.isInteger(i) || !points[i]) continue;
      const ts = r.Timestamps ?? [];
      const vs = r.Values ?? [];
      for (let k = 0; k < Math.min(ts.length, vs.length); k++) points[i].set(new Date(ts[k]).getTime(), vs[k]);
      if (r.StatusCode) status[i] = r.StatusCode;
    }
    token = out.NextToken;
  } while (token);
  return RDS_METRICS.map((m, i) => {
    const sorted = [...points[i].entries()].sort(([a], [b]) => a - b);
    return { metric: m.metric, unit: m.unit, timestamps: sorted.map(([t]) => new Date(t).toISOString()), values: sorted.map(([, v]) => v), status: status[i] };
  });
}

/** Every series has a datapoint for the window's last period. */
export function rdsComplete(series: readonly RdsSeries[], q: { end: Date }): boolean {
  const last = q.end.getTime() - RDS_PERIOD_S * 1000;
  return series.every((s) => s.timestamps.some((t) => Date.parse(t) >= last));
}

export async function collectRdsMetrics(cw: CloudWatchClient, dbInstanceIdentifier: string, window: CloudWindow, wait: WaitOptions): Promise<RdsMetricsFile> {
  const q = periodWindow(window);
  const got = await fetchUntilComplete(() => getRdsSeries(cw, dbInstanceIdentifier, q), (s) => rdsComplete(s, q), 'CloudWatch AWS/RDS', wait);
  return {
    source: RDS_METRICS_SOURCE,
    window,
    collected_at: new Date().toISOString(),
    db_instance: dbInstanceIdentifier,
    namespace: 'AWS/RDS',
    stat: 'Average',
    period_s: RDS_PERIOD_S,
    query: { start: q.start.toISOString(), end: q.end.toISOString() },
    complete: got.complete,
    waited_s: got.waitedS,
    series: got.value,
  };
}

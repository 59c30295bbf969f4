// Performance Insights' db.load (average active sessions) of one DB instance over a repeat's window,
// by wait event: the cloud's own account of what the database's sessions were waiting on, beside the
// DB sampler's pg_stat_activity counts (lib/evidence/report/db-summary.ts counts "working" the way
// PI does, so the two can be read side by side).
//
// GetResourceMetrics (API reference, Performance Insights, 2018-02-27): ServiceType RDS, Identifier =
// the instance's DbiResourceId, one query { Metric: 'db.load.avg', GroupBy: { Group: 'db.wait_event',
// Limit: 10 } } (10 wait events: the ceiling older published API models give for GroupBy.Limit;
// not confirmed against today's reference page). The response's MetricList holds one entry whose
// Key has no Dimensions (the instance's total load) and one per wait event, Key.Dimensions
// { 'db.wait_event.type', 'db.wait_event.name' }; DataPoints are { Timestamp, Value }.
//
// PeriodInSeconds 1: the smallest of the values the API reference allows (1, 60, 300, 3600, 86400),
// so a repeat's seconds line up with the sample stream's. EndTime is exclusive. The API does not
// document how many data points one response holds; NextToken paging covers either answer, and
// series of the same key are joined across pages.
import { GetResourceMetricsCommand, type PIClient } from '@aws-sdk/client-pi';
import type { CloudWindow, DbLoadFile, DbLoadSeries } from '../../../protocol/cloud-evidence';

export const PI_PERIOD_S = 1;
export const PI_WAIT_EVENT_LIMIT = 10;
export const DB_LOAD_SOURCE = 'Performance Insights db.load.avg by db.wait_event (GetResourceMetrics)';

function keyOf(dims: Record<string, string> | undefined): string {
  if (!dims || !Object.keys(dims).length) return 'total';
  const type = dims['db.wait_event.type'];
  const name = dims['db.wait_event.name'];
  // PI names CPU as a wait event of its own ("CPU" type and name).
  if (type && name) return type === name ? name : `${type}:${name}`;
  return Object.keys(dims)
    .sort()
    .map((k) => `${k}=${dims[k]}`)
    .join(',');
}

export async function collectDbLoad(pi: PIClient, resourceId: string, window: CloudWindow): Promise<DbLoadFile> {
  const series = new Map<string, { dims: Record<string, string>; points: Map<number, number | null> }>();
  let aligned: CloudWindow | null = null;
  let token: string | undefined;
  do {
    const out = await pi.send(
      new GetResourceMetricsCommand({
        ServiceType: 'RDS',
        Identifier: resourceId,
        MetricQueries: [{ Metric: 'db.load.avg', GroupBy: { Group: 'db.wait_event', Limit: PI_WAIT_EVENT_LIMIT } }],
        StartTime: new Date(window.start),
        EndTime: new Date(window.end),
        PeriodInSeconds: PI_PERIOD_S,
        NextToken: token,
      }),
    );
    if (out.AlignedStartTime && out.AlignedEndTime && !aligned) aligned = { start: out.AlignedStartTime.toISOString(), end: out.AlignedEndTime.toISOString() };
    for (const m of out.MetricList ?? []) {
      const dims = (m.Key?.Dimensions ?? {}) as Record<string, string>;
      const key = keyOf(dims);
      const s = series.get(key) ?? { dims, points: new Map<number, number | null>() };
      for (const p of m.DataPoints ?? []) if (p.Timestamp) s.points.set(new Date(p.Timestamp).getTime(), typeof p.Value === 'number' ? p.Value : null);
      series.set(key, s);
    }
    token = out.NextToken;
  } while (token);

  const toSeries = (event: string, s: { dims: Record<string, string>; points: Map<number, number | null> }): DbLoadSeries => {
    const sorted = [...s.points.entries()].sort(([a], [b]) => a - b);
    return { event, dimensions: s.dims, timestamps: sorted.map(([t]) => new Date(t).toISOString()), values: sorted.map(([, v]) => v) };
  };
  const total = series.get('total');
  return {
    source: DB_LOAD_SOURCE,
    window,
    collected_at: new Date().toISOString(),
    identifier: resourceId,
    metric: 'db.load.avg',
    group: 'db.wait_event',
    period_s: PI_PERIOD_S,
    aligned,
    total: total ? toSeries('total', total) : null,
    by_wait_event: [...series.entries()].filter(([k]) => k !== 'total').map(([k, s]) => toSeries(k, s)).sort((a, b) => (a.event < b.event ? -1 : a.event > b.event ? 1 : 0)),
  };
}

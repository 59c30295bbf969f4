// Enhanced Monitoring's OS metrics of one DB instance over a repeat's window: what the instance's
// own OS saw each second (CPU steal and I/O wait, load, memory, each disk's IOPS, await and queue),
// which CloudWatch's one-minute averages hide. RDS writes one JSON message per interval (1 s as the
// aws target provisions it) to CloudWatch Logs, log group RDSOSMetrics, log stream = the instance's
// DbiResourceId.
//
// The message shape is the RDS User Guide's "OS metrics in Enhanced Monitoring" (the PostgreSQL
// table), checked there for the fields kept here: `timestamp`; `cpuUtilization.{total,wait,steal}`
// (percent); `loadAverageMinute.one`; `memory.{total,free,cached}` (kilobytes); `diskIO[]` with
// `device`, `readIOsPS`, `writeIOsPS`, `readKbPS`, `writeKbPS`, `await` (ms) and `avgQueueLen` (the
// KB rates give the average IO size that tail attribution sets beside a freeze). Everything else (the process
// list is most of each message) is dropped: a 10-minute repeat is 600 messages of several kB, and the
// compact series is what the page uses. A message that is not JSON, or lacks `timestamp`, is counted
// in `unreadable`, never guessed at.
//
// Events are read with FilterLogEvents over [start, end] (ms), paginated by nextToken; each event's
// position in the series is its message's own `timestamp`, not the ingestion time.
import { FilterLogEventsCommand, type CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { median } from '../../../protocol/percentile';
import type { CloudWindow, OsDiskSeries, OsMetricsFile } from '../../../protocol/cloud-evidence';
import { fetchUntilComplete, type WaitOptions } from './wait-for-data';

export const OS_LOG_GROUP = 'RDSOSMetrics';
export const OS_METRICS_SOURCE = 'Enhanced Monitoring (CloudWatch Logs RDSOSMetrics)';

/** The part of one Enhanced Monitoring message this file reads. */
export interface OsMessage {
  timestamp: string;
  cpuUtilization?: { total?: number; wait?: number; steal?: number };
  loadAverageMinute?: { one?: number };
  memory?: { total?: number; free?: number; cached?: number };
  diskIO?: Array<{ device?: string; readIOsPS?: number; writeIOsPS?: number; readKbPS?: number; writeKbPS?: number; await?: number; avgQueueLen?: number }>;
}

export function parseOsMessage(text: string): OsMessage | null {
  try {
    const m = JSON.parse(text) as OsMessage;
    if (!m || typeof m !== 'object' || typeof m.timestamp !== 'string' || Number.isNaN(Date.parse(m.timestamp))) return null;
    return m;
  } catch {
    return null;
  }
}

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

/** Messages in time order -> the compact per-event series of the file (pure). */
export function osSeries(messages: OsMessage[]): Pick<OsMetricsFile, 't' | 'cpu_total_pct' | 'cpu_wait_pct' | 'cpu_steal_pct' | 'load_1m' | 'memory_total_kb' | 'memory_free_kb' | 'memory_cached_kb' | 'disks' | 'granularity_s'> {
  const ms = [...messages].sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
  const devices = [...new Set(ms.flatMap((m) => (m.diskIO ?? []).map((d) => d.device ?? '?')))].sort();
  const disks: OsDiskSeries[] = devices.map((device) => {
    const at = (m: OsMessage) => (m.diskIO ?? []).find((d) => (d.device ?? '?') === device);
    return {
      device,
      read_iops: ms.map((m) => num(at(m)?.readIOsPS)),
      write_iops: ms.map((m) => num(at(m)?.writeIOsPS)),
      await_ms: ms.map((m) => num(at(m)?.await)),
      avg_queue_len: ms.map((m) => num(at(m)?.avgQueueLen)),
      read_kb_ps: ms.map((m) => num(at(m)?.readKbPS)),
      write_kb_ps: ms.map((m) => num(at(m)?.writeKbPS)),
    };
  });
  const gaps = ms.slice(1).map((m, i) => (Date.parse(m.timestamp) - Date.parse(ms[i].timestamp)) / 1000);
  return {
    t: ms.map((m) => new Date(Date.parse(m.timestamp)).toISOString()),
    cpu_total_pct: ms.map((m) => num(m.cpuUtilization?.total)),
    cpu_wait_pct: ms.map((m) => num(m.cpuUtilization?.wait)),
    cpu_steal_pct: ms.map((m) => num(m.cpuUtilization?.steal)),
    load_1m: ms.map((m) => num(m.loadAverageMinute?.one)),
    memory_total_kb: ms.map((m) => num(m.memory?.total)),
    memory_free_kb: ms.map((m) => num(m.memory?.free)),
    memory_cached_kb: ms.map((m) => num(m.memory?.cached)),
    disks,
    granularity_s: gaps.length ? median(gaps) : null,
  };
}

async function readEvents(logs: CloudWatchLogsClient, stream: string, w: CloudWindow): Promise<{ messages: OsMessage[]; unreadable: number }> {
  const messages: OsMessage[] = [];
  let unreadable = 0;
  let token: string | undefined;
  do {
    const out = await logs.send(
      new FilterLogEventsCommand({ logGroupName: OS_LOG_GROUP, logStreamNames: [stream], startTime: Date.parse(w.start), endTime: Date.parse(w.end), nextToken: token }),
    );
    for (const e of out.events ?? []) {
      const m = parseOsMessage(e.message ?? '');
      if (m) messages.push(m);
      else unreadable++;
    }
    token = out.nextToken;
  } while (token);
  return { messages, unreadable };
}

/** Complete when an event from the window's last few seconds is there (RDS ships them in batches). */
function osComplete(r: { messages: OsMessage[] }, w: CloudWindow): boolean {
  const last = Date.parse(w.end) - 5_000;
  return r.messages.some((m) => Date.parse(m.timestamp) >= last);
}

export async function collectOsMetrics(logs: CloudWatchLogsClient, resourceId: string, window: CloudWindow, wait: WaitOptions): Promise<OsMetricsFile> {
  const got = await fetchUntilComplete(() => readEvents(logs, resourceId, window), (r) => osComplete(r, window), 'Enhanced Monitoring', wait);
  return {
    source: OS_METRICS_SOURCE,
    window,
    collected_at: new Date().toISOString(),
    log_group: OS_LOG_GROUP,
    log_stream: resourceId,
    events: got.value.messages.length + got.value.unreadable,
    unreadable: got.value.unreadable,
    complete: got.complete,
    ...osSeries(got.value.messages),
  };
}

// A repeat's cloud evidence on the aws target: CloudWatch AWS/RDS metrics, Enhanced Monitoring and
// Performance Insights over the repeat's window, each written to its own file in the repeat's folder
// (lib/evidence/layout.ts CLOUD_*) as soon as it is read. Nothing is summarised here: the report
// derives its figures from these files (lib/protocol/cloud-evidence.ts), evidence before summary.
//
// It never fails the repeat: a collector that fails (no permission, Performance Insights off, the
// endpoint unreachable) writes `{ error, source, window, collected_at }` into its own file, the page
// prints that error where the figures would be, and the other collectors go on. The three run side
// by side, so their waits for late data overlap and the whole stays under one deadline.
//
// Late data: CloudWatch publishes a minute's RDS metrics minutes after it, Enhanced Monitoring a few
// seconds to a minute after. Each collector asks again (every 15 s, heartbeating through onProgress)
// until its last period is there or the shared deadline passes (CLOUD_WAIT_MAX_S, 5 minutes), then
// keeps what it has with `complete: false`. When the data is already complete (the tests put it there
// first) nothing waits. Performance Insights is near real time and is read once.
import { CLOUD_DB_LOAD, CLOUD_OS_METRICS, CLOUD_RDS_METRICS, type CloudFileName } from '../../../evidence/layout';
import { CLOUD_WAIT_MAX_S, type CloudErrorFile, type CloudWindow } from '../../../protocol/cloud-evidence';
import { awsErrorText, cloudClients, type CloudClients } from './clients';
import { collectRdsMetrics, RDS_METRICS_SOURCE } from './cloudwatch';
import { collectOsMetrics, OS_METRICS_SOURCE } from './enhanced-monitoring';
import { collectDbLoad, DB_LOAD_SOURCE } from './performance-insights';
import { dbiResourceId } from './resource-id';

export interface CloudEvidenceInput extends CloudWindow {
  region: string;
  dbInstanceIdentifier: string;
}

export type WriteEvidence = (file: CloudFileName, json: unknown) => void;

export interface CollectOptions {
  /** Clients to use (a test's); otherwise made from the region and closed at the end. */
  clients?: CloudClients;
  /** The longest wait for late data, ms (default CLOUD_WAIT_MAX_S). */
  maxWaitMs?: number;
  pollMs?: number;
  onProgress?: (message: string) => void;
}

/** What became of each file: written with data, or with the collector's error. */
export interface CollectOutcome {
  file: CloudFileName;
  error: string | null;
}

export async function collectCloudEvidence(input: CloudEvidenceInput, write: WriteEvidence, opts: CollectOptions = {}): Promise<CollectOutcome[]> {
  const clients = opts.clients ?? cloudClients(input.region);
  const window: CloudWindow = { start: input.start, end: input.end };
  const wait = { deadline: Date.now() + (opts.maxWaitMs ?? CLOUD_WAIT_MAX_S * 1000), pollMs: opts.pollMs, onWait: opts.onProgress };
  // Enhanced Monitoring and Performance Insights both need the instance's DbiResourceId: asked once,
  // and when it cannot be had both files say why.
  const resourceId = dbiResourceId(clients.rds, input.dbInstanceIdentifier);
  resourceId.catch(() => undefined); // handled by each collector that awaits it

  const one = async (file: CloudFileName, source: string, collect: () => Promise<unknown>): Promise<CollectOutcome> => {
    let value: unknown;
    let error: string | null = null;
    try {
      value = await collect();
    } catch (err) {
      error = awsErrorText(err);
      value = { error, source, window, collected_at: new Date().toISOString() } satisfies CloudErrorFile;
    }
    write(file, value);
    return { file, error };
  };
  try {
    return await Promise.all([
      one(CLOUD_RDS_METRICS, RDS_METRICS_SOURCE, () => collectRdsMetrics(clients.cloudwatch, input.dbInstanceIdentifier, window, wait)),
      one(CLOUD_OS_METRICS, OS_METRICS_SOURCE, async () => collectOsMetrics(clients.logs, await resourceId, window, wait)),
      one(CLOUD_DB_LOAD, DB_LOAD_SOURCE, async () => collectDbLoad(clients.pi, await resourceId, window)),
    ]);
  } finally {
    if (!opts.clients) clients.destroy();
  }
}

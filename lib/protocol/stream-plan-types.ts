// The shape of the plan a sample stream was measured under (its `#plan` and `#end` records), alone in
// a file of types so that both the row format (sample-row.ts: SampleColumns carries the plan it was
// read with) and the plan's own code (stream-plan.ts: parsing, the schedule) can import it without
// importing each other: the import-circle test (test/foundation/import-circles.test.ts) holds
// lib/protocol to that.

import type { Arrivals } from './arrivals';
import type { BatchSizesPlan } from './batch-sizes';
import type { TimestampsPlan } from './client-timestamps';
import type { DuplicatesPlan, TenantsPlan } from './clients';
import type { NodeShare } from './node-share';

export interface StreamPlan {
  /** open: a fixed schedule; closed: workers that send as replies come (a ceiling: no ingest schedule). */
  mode: 'open' | 'closed';
  /** Offered events per second (open loop); null in a closed loop. */
  rate: number | null;
  /** Events per request. */
  batch: number;
  /** The configured length of the run, in seconds. */
  seconds: number;
  /** Probe requests per second (0: no probe; null: not known, its rows are held to the window only). */
  probe_rate: number | null;
  run_tag: string | null;
  /** The run was stopped before its end (a signal, its parent gone): never a pass. */
  cut_short: boolean;
  cut_reason: string | null;
  /**
   * stream: the generator's own record; evidence: a campaign's load.json, sealed with a stream older
   * than the record (both exact: every row must be one of the rig's schedule points); flags: given by
   * the caller for a foreign stream (its rate and window only).
   */
  source: 'stream' | 'evidence' | 'flags';
  /**
   * The ingest schedule's shape (arrivals.ts), absent for the protocol's constant schedule: a plan
   * without it is today's to the byte (its record, its report), so the key is left out, never null.
   */
  arrivals?: Arrivals;
  /**
   * One load node's stream (issue 37): it holds only the schedule's requests k with k mod nodes = node
   * (node-share.ts). Absent on a stream sent from one node, whose record is then byte for byte as before.
   */
  share?: NodeShare;
  /** The merged stream of this many load nodes (the whole schedule, judged as one node's). Absent: one node. */
  nodes?: number;
  /** Several tenants (issue 35, clients.ts): request k's tenant a seeded Zipf draw. Absent: one tenant. */
  tenants?: TenantsPlan;
  /** Requests that repeat an earlier one's idempotency keys (clients.ts). Absent: none. */
  duplicates?: DuplicatesPlan;
  /**
   * Batch sizes drawn from a distribution (issue 35, batch-sizes.ts): request k carries its own size, batch
   * being their mean. Absent: every request carries `batch` events, as before.
   */
  batch_sizes?: BatchSizesPlan;
  /** Client-side timestamps, a share late or out of order (client-timestamps.ts). Absent: the events carry none. */
  timestamps?: TimestampsPlan;
}

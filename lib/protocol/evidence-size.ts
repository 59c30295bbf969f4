// How much evidence a campaign's plan writes where it measures, at the most: the requests it sends
// (warm-ups, repeats or rungs, the ceiling at its bound) times what a request leaves on disk, measured.
// The AWS target sizes its nodes' root volumes from it (lib/targets/aws/node-volume.ts): a node keeps
// the streams until they ship. A repeat sent from N load nodes (issue 37) leaves N node streams on the
// data plane beside its merged stream: counted too. Pure.
import { dbSamplerBytes } from './db-sampling';
import { loadNodesOf } from './load-nodes';
import type { CampaignSpec } from './spec';
import { measuringOrder, measuringSeries, warmsUpBefore } from './variants';

/**
 * Evidence bytes a planned request leaves where the load runs, at the most: measured 21.6 B per request
 * (a rehearsal's repeats/ folder: 584,160 bytes for about 27,000 requests, the gzipped sample stream
 * with the samplers' files and the Postgres log slice), rounded up with room to spare.
 */
export const EVIDENCE_BYTES_PER_REQUEST = 32;
/** Evidence besides the requests' (calibration, the report, logs): measured 1.9 MB, rounded up. */
export const EVIDENCE_FIXED_BYTES = 256 * 1024 ** 2;
/** A closed-loop worker's requests per second at the most (the ceiling's rate is not planned, only bounded). */
const CLOSED_LOOP_REQUESTS_PER_WORKER_S = 2_000;

/** A node stream's files besides its rows (node.json, the gzip frame): a few KB measured, rounded up. */
export const NODE_STREAM_FIXED_BYTES = 64 * 1024;

type SizedSpec = Pick<CampaignSpec, 'sustained' | 'ladder' | 'variants' | 'ceiling' | 'load'>;

/** The requests the plan sends (warm-ups, repeats or rungs, the ceiling at its bound). Pure. */
export function plannedRequests(spec: SizedSpec): number {
  let requests = 0;
  const series = measuringSeries(spec);
  if (series) {
    const ladder = series.kind === 'rung';
    const seconds = ladder ? spec.ladder!.rungSeconds : spec.sustained!.repeatSeconds;
    const warmup = ladder ? spec.ladder!.warmupSeconds : spec.sustained!.warmupSeconds;
    const order = measuringOrder(spec);
    order.forEach((u, i) => {
      const perSecond = u.configuration.eventsPerSecond / u.configuration.batch;
      requests += perSecond * seconds;
      if (warmup > 0 && warmsUpBefore(order, i, series.kind)) requests += perSecond * warmup;
    });
  }
  if (spec.ceiling) requests += spec.ceiling.workers * spec.ceiling.seconds * CLOSED_LOOP_REQUESTS_PER_WORKER_S;
  return Math.ceil(requests);
}

/**
 * The DB sampler's rows of the plan's measured loads, at the most (lib/protocol/db-sampling.ts): its
 * snapshots are taken per second of load whatever the rate, so they are not in the per-request figure.
 */
export function plannedDbSamplerBytes(spec: SizedSpec): number {
  let bytes = 0;
  const series = measuringSeries(spec);
  if (series) {
    const ladder = series.kind === 'rung';
    const seconds = ladder ? spec.ladder!.rungSeconds : spec.sustained!.repeatSeconds;
    bytes += measuringOrder(spec).length * dbSamplerBytes(seconds);
  }
  if (spec.ceiling) bytes += dbSamplerBytes(spec.ceiling.seconds);
  return bytes;
}

/**
 * The node streams of the plan's repeats sent from several load nodes (load.nodes N > 1), at the most.
 * The data plane keeps each node's stream (repeats/<c>/rK-aA/nodes/n<i>/: node 0's own, the others
 * fetched from the bucket, activities/node-repeat.ts) beside the merged stream that plannedRequests
 * counts: N streams per repeat, node i's of its share of the schedule (requests i, i+N, ...), so their
 * rows together are the repeat's requests once more, and each stream has its own files. A ladder's rungs,
 * the warm-ups and the ceiling run from one node: none. Pure.
 */
export function plannedNodeStreamBytes(spec: SizedSpec): number {
  const series = measuringSeries(spec);
  if (!series || series.kind !== 'sustained') return 0;
  let bytes = 0;
  for (const u of measuringOrder(spec)) {
    const nodes = loadNodesOf(spec, u.configuration);
    if (nodes <= 1) continue;
    const requests = (u.configuration.eventsPerSecond / u.configuration.batch) * spec.sustained!.repeatSeconds;
    bytes += Math.ceil(requests) * EVIDENCE_BYTES_PER_REQUEST + nodes * NODE_STREAM_FIXED_BYTES;
  }
  return bytes;
}

/** Bytes of evidence the plan writes where the load runs, at the most. Pure. */
export function plannedEvidenceBytes(spec: SizedSpec): number {
  return plannedRequests(spec) * EVIDENCE_BYTES_PER_REQUEST + plannedNodeStreamBytes(spec) + plannedDbSamplerBytes(spec) + EVIDENCE_FIXED_BYTES;
}

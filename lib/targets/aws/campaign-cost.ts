// What a campaign on an AWS rig will be billed, beside the instances' and storage's $/hour (cost.ts):
// the nodes' public IPv4 addresses and root volumes (the app node's and every load node's: load.nodes), Enhanced Monitoring's log ingestion at its
// interval, and over time: the plan's total (RDS billed at least its 10-minute minimum) and the worst
// case, the rig left running to its watchdog deadline (teardown failed; the watchdog tears down then,
// and the nodes end themselves at it, user-data.ts). Pure: the dry run prints these lines, provisioning
// keeps them in the rig's record for the page. Every price is prices.ts's (source and date there) or
// the spec's override.
import type { AwsSpec } from '../../protocol/aws-spec';
import { campaignLoadNodes } from '../../protocol/load-nodes';
import { expectedFromProvisioning, watchdogNeed } from '../../protocol/plan';
import type { CampaignSpec } from '../../protocol/spec';
import { MONITORING_INTERVAL_S } from './plan';
import { nodeRootVolumeGb } from './node-volume';
import { plannedEvidenceBytes } from '../../protocol/evidence-size';
import { rigCost, type CostItem } from './cost';
import {
  CLOUDWATCH_LOGS_INGEST_PER_GB,
  EC2_GP3_PER_GB_MONTH,
  ENHANCED_MONITORING_BYTES_PER_SAMPLE,
  HOURS_PER_MONTH,
  PRICE_TABLE_REGION,
  PUBLIC_IPV4_PER_HOUR,
  RDS_MINIMUM_BILLED_MINUTES,
} from './prices';

export interface CampaignCostInput {
  aws: AwsSpec;
  /** The plan from provisioning on, minutes allowed (lib/protocol/plan.ts watchdogNeed().planMinutes). */
  planMinutes: number;
  /** The same steps' expected minutes (lib/protocol/plan.ts expectedFromProvisioning), when known. */
  expectedMinutes?: number;
  /** The watchdog's deadline after provisioning, minutes (the spec's watchdogMinutes). */
  watchdogMinutes: number;
  /** Enhanced Monitoring's interval, seconds (0: off). */
  monitoringIntervalS: number;
  /** The nodes' root volume, GB each. */
  rootVolumeGb: number;
  /** The campaign's load nodes (load.nodes; absent: 1), each with its address and root volume beside the app node's. */
  loadNodes?: number;
}

export interface CampaignCost {
  /** Beside cost.ts's items: IPv4, root volumes, Enhanced Monitoring's ingestion (the table's prices, in any region). */
  extras: CostItem[];
  /** Everything per hour (cost.ts's items and the extras); undefined when a price is missing. */
  perHour: number | undefined;
  plan: { minutes: number; usd: number | undefined };
  expected?: { minutes: number; usd: number | undefined };
  worstCase: { minutes: number; usd: number | undefined };
  /** The printed lines: one per extra, the plan, the worst case, the RDS minimum. */
  lines: string[];
  missing: string[];
}

const usd = (x: number | undefined, digits = 2) => (x === undefined ? 'unknown' : `$${x.toFixed(digits)}`);
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

export function campaignCost(x: CampaignCostInput): CampaignCost {
  const loadNodes = x.loadNodes ?? 1;
  const base = rigCost(x.aws, new Date(), loadNodes);
  const nodes = 1 + loadNodes;
  const inTable = x.aws.region === PRICE_TABLE_REGION;
  const missing = [...base.missing];
  const extras: CostItem[] = [];
  // These are small beside the instances: outside the table's region they are its figures, said so,
  // rather than leaving the whole total unknown (the IPv4 price is the same in every commercial region).
  const extra = (what: string, perHour: number) => extras.push({ what: inTable ? what : `${what} (at ${PRICE_TABLE_REGION}'s price)`, perHour, from: 'table' });
  extra(`${nodes} public IPv4 addresses (one per node)`, nodes * PUBLIC_IPV4_PER_HOUR);
  extra(`${nodes} node root volumes (gp3 ${x.rootVolumeGb} GB each)`, (nodes * x.rootVolumeGb * EC2_GP3_PER_GB_MONTH) / HOURS_PER_MONTH);
  const gbPerHour = x.monitoringIntervalS > 0 ? ((3600 / x.monitoringIntervalS) * ENHANCED_MONITORING_BYTES_PER_SAMPLE) / 1e9 : 0;
  if (gbPerHour > 0) extra(`Enhanced Monitoring every ${x.monitoringIntervalS} s (~${gbPerHour.toFixed(3)} GB/hour into CloudWatch Logs)`, gbPerHour * CLOUDWATCH_LOGS_INGEST_PER_GB);

  const dbItem = base.items.find((i) => i.what.startsWith('RDS '));
  const perHour = base.perHour === undefined || missing.length ? undefined : round4(base.perHour + extras.reduce((a, i) => a + i.perHour, 0));
  // RDS is billed at least its minimum: a plan shorter than it pays the minimum for the database.
  const over = (minutes: number) => {
    if (perHour === undefined) return undefined;
    const short = dbItem && minutes < RDS_MINIMUM_BILLED_MINUTES ? (dbItem.perHour * (RDS_MINIMUM_BILLED_MINUTES - minutes)) / 60 : 0;
    return round4((perHour * minutes) / 60 + short);
  };
  const plan = { minutes: x.planMinutes, usd: over(x.planMinutes) };
  const expected = x.expectedMinutes === undefined ? undefined : { minutes: x.expectedMinutes, usd: over(x.expectedMinutes) };
  const worstCase = { minutes: x.watchdogMinutes, usd: over(x.watchdogMinutes) };
  const lines = [
    ...extras.map((i) => `${i.what}: $${i.perHour.toFixed(4)}/hour`),
    // What a campaign that goes as expected costs; the plan's line is what its allowances (the watchdog's cover) come to.
    ...(expected ? [`expected (${expected.minutes} min from provisioning to the report, each step's typical time): ${usd(expected.usd)}`] : []),
    `the plan as allowed (${x.planMinutes} min from provisioning to the report, what the watchdog covers): ${usd(plan.usd)} at ${perHour === undefined ? 'an unknown rate' : `$${perHour.toFixed(4)}/hour`} for everything above`,
    `worst case, teardown failing and the rig running to its watchdog deadline (${x.watchdogMinutes} min): ${usd(worstCase.usd)}; past it only if the watchdog's teardown fails too (the nodes end themselves at it, the database does not)`,
    `RDS bills at least ${RDS_MINIMUM_BILLED_MINUTES} minutes of the instance once created${x.planMinutes < RDS_MINIMUM_BILLED_MINUTES ? ' (counted in the plan above)' : ''}`,
  ];
  return { extras, perHour, plan, ...(expected ? { expected } : {}), worstCase, lines, missing };
}

/** A spec's campaign cost: its plan from provisioning on, its watchdog, the rig's monitoring and root volumes. */
export function awsCampaignCost(spec: CampaignSpec & { aws: AwsSpec }): CampaignCost {
  const loadNodes = campaignLoadNodes(spec);
  return campaignCost({ aws: spec.aws, planMinutes: watchdogNeed(spec).planMinutes, expectedMinutes: expectedFromProvisioning(spec), watchdogMinutes: spec.watchdogMinutes, monitoringIntervalS: MONITORING_INTERVAL_S, rootVolumeGb: nodeRootVolumeGb(plannedEvidenceBytes(spec)), ...(loadNodes > 1 ? { loadNodes } : {}) });
}

/** The dry run's lines for a spec (awsCampaignCost's, with what is missing). */
export function awsCampaignCostLines(spec: CampaignSpec): string[] {
  if (!spec.aws) return [];
  const c = awsCampaignCost({ ...spec, aws: spec.aws });
  return [...c.lines, ...c.missing.map((m) => `MISSING ${m}`)];
}

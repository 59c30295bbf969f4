// $/hour of an AWS rig, item by item, from the price table (prices.ts) with the spec's overrides
// (`aws.prices`) on top. Pure: the dry run, the hardware line and the clean check's "cost so far" all
// use it. A price the table lacks and the spec does not give is reported as missing, never guessed:
// the total is then undefined and the message names the override that supplies it.
import type { AwsSpec } from '../../protocol/aws-spec';
import { engineMajor, GP3_LARGE_RANGE, GP3_SMALL_BASELINE, GP3_SMALL_VOLUME_GB } from '../../protocol/aws-spec';
import { dbClassVcpus, EXTENDED_SUPPORT_PER_VCPU_HOUR, pastStandardSupport } from '../../protocol/rds-lifecycle';
import { EC2_PER_HOUR, HOURS_PER_MONTH, PRICE_TABLE_REGION, PRICE_TABLE_SOURCE, RDS_GP3, RDS_POSTGRES_PER_HOUR } from './prices';

export interface CostItem {
  what: string;
  perHour: number;
  /** 'table' (prices.ts) or 'spec' (aws.prices). */
  from: 'table' | 'spec';
}

export interface RigCost {
  items: CostItem[];
  /** Sum of every item; undefined when a price is missing. */
  perHour: number | undefined;
  /** Database instance + app node: what the protocol's published $/hr counts (no storage, no load generator). */
  protocolPerHour: number | undefined;
  /** Each missing price, with the override that supplies it. */
  missing: string[];
  /** Where the figures come from. */
  source: string;
}

/** The gp3 baseline a volume of this size includes (billed only above it). */
function gp3Included(sizeGb: number): { iops: number; throughputMiBps: number } {
  return sizeGb < GP3_SMALL_VOLUME_GB ? { ...GP3_SMALL_BASELINE } : { iops: GP3_LARGE_RANGE.iops[0], throughputMiBps: GP3_LARGE_RANGE.throughputMiBps[0] };
}

/**
 * `now`: when the rig runs, for whether its major is past standard support (rds-lifecycle.ts).
 * `loadNodes`: the campaign's load nodes (load.nodes, issue 37), each an instance of aws.load's type
 * at its price (aws.prices.loadNodePerHour is per node).
 */
export function rigCost(aws: AwsSpec, now: Date = new Date(), loadNodes = 1): RigCost {
  const o = aws.prices ?? {};
  const inTable = aws.region === PRICE_TABLE_REGION;
  const items: CostItem[] = [];
  const missing: string[] = [];
  const price = (what: string, override: number | undefined, table: number | undefined, overrideName: string, count = 1): number | undefined => {
    if (override !== undefined) {
      items.push({ what, perHour: override * count, from: 'spec' });
      return override;
    }
    if (inTable && table !== undefined) {
      items.push({ what, perHour: table * count, from: 'table' });
      return table;
    }
    missing.push(`${what}: no price for ${inTable ? 'it' : `region ${aws.region}`} in the table (${PRICE_TABLE_REGION} only); give aws.prices.${overrideName}`);
    return undefined;
  };
  const db = price(`RDS ${aws.database.instanceClass}`, o.databasePerHour, RDS_POSTGRES_PER_HOUR[aws.database.instanceClass], 'databasePerHour');
  const app = price(`app node ${aws.app.instanceType}`, o.appNodePerHour, EC2_PER_HOUR[aws.app.instanceType], 'appNodePerHour');
  price(loadNodes > 1 ? `${loadNodes} load nodes ${aws.load.instanceType}` : `load node ${aws.load.instanceType}`, o.loadNodePerHour, EC2_PER_HOUR[aws.load.instanceType], 'loadNodePerHour', loadNodes);

  const s = aws.database.storage;
  const included = gp3Included(s.sizeGb);
  const perMonth = (what: string, override: number | undefined, table: number, quantity: number, overrideName: string) => {
    const unit = override ?? (inTable ? table : undefined);
    if (unit === undefined) {
      missing.push(`${what}: no price for region ${aws.region} in the table (${PRICE_TABLE_REGION} only); give aws.prices.${overrideName}`);
      return;
    }
    items.push({ what, perHour: (unit * quantity) / HOURS_PER_MONTH, from: override !== undefined ? 'spec' : 'table' });
  };
  perMonth(`gp3 ${s.sizeGb} GB`, o.storagePerGbMonth, RDS_GP3.perGbMonth, s.sizeGb, 'storagePerGbMonth');
  if (s.iops > included.iops) perMonth(`gp3 IOPS above ${included.iops}`, o.iopsPerMonth, RDS_GP3.perIopsMonth, s.iops - included.iops, 'iopsPerMonth');
  if (s.throughputMiBps > included.throughputMiBps) {
    perMonth(`gp3 MiB/s above ${included.throughputMiBps}`, o.throughputPerMiBpsMonth, RDS_GP3.perMiBpsMonth, s.throughputMiBps - included.throughputMiBps, 'throughputPerMiBpsMonth');
  }
  // RDS Extended Support, per vCPU-hour on top of the instance, when the spec opted in to run a past-support major.
  const major = engineMajor(aws.database.engineVersion);
  const life = pastStandardSupport(major, now);
  if (aws.database.extendedSupport && life.past) {
    const vcpus = dbClassVcpus(aws.database.instanceClass);
    const table = (life.yearsPast ?? 0) >= 2 ? EXTENDED_SUPPORT_PER_VCPU_HOUR.year3 : EXTENDED_SUPPORT_PER_VCPU_HOUR.years1to2;
    const unit = o.extendedSupportPerVcpuHour ?? (inTable ? table : undefined);
    const what = `RDS Extended Support, PostgreSQL ${major} (${vcpus ?? '?'} vCPU)`;
    if (unit === undefined) missing.push(`${what}: no price for region ${aws.region} in the table (${PRICE_TABLE_REGION} only); give aws.prices.extendedSupportPerVcpuHour`);
    else if (vcpus === undefined) missing.push(`${what}: the vCPUs of ${aws.database.instanceClass} are not known here; give aws.prices.databasePerHour with Extended Support included and aws.prices.extendedSupportPerVcpuHour 0`);
    else items.push({ what, perHour: unit * vcpus, from: o.extendedSupportPerVcpuHour !== undefined ? 'spec' : 'table' });
  }
  const usesTable = items.some((i) => i.from === 'table');
  const usesSpec = items.some((i) => i.from === 'spec');
  const source = [usesTable ? PRICE_TABLE_SOURCE : '', usesSpec ? `spec overrides${o.source ? ` (${o.source})` : ''}` : ''].filter(Boolean).join('; ');
  return {
    items,
    perHour: missing.length ? undefined : round4(items.reduce((a, i) => a + i.perHour, 0)),
    protocolPerHour: db !== undefined && app !== undefined ? round4(db + app) : undefined,
    missing,
    source: source || 'none',
  };
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** "$1.2345/hour" or "unknown (…)" for one line. */
export function formatPerHour(x: number | undefined): string {
  return x === undefined ? 'unknown' : `$${x.toFixed(4)}/hour`;
}

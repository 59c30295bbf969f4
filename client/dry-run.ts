// `rig campaign start SPEC --dry-run`: the plan of a campaign, printed from the spec alone. It makes
// nothing and contacts nothing (no Temporal server, no AWS endpoint, no credentials): what would be
// made, with the names derived from the campaign id, where, with which database parameters, at what
// $/hour, and when the watchdog would tear it down. With --preflight (dryRunPreflight) it also asks the
// AWS account, read-only, what provisioning would be refused.
import { sampleWarnings, watchdogLine, watchdogNeed } from '../lib/protocol/plan';
import type { CampaignSpec } from '../lib/protocol/spec';
import { awsCampaignCostLines } from '../lib/targets/aws/campaign-cost';
import { formatPerHour, rigCost } from '../lib/targets/aws/cost';
import { awsPlan, tagLine } from '../lib/targets/aws/plan';
import { awsClients } from '../lib/targets/aws/clients';
import { preflightAws } from '../lib/targets/aws/preflight';
import { PreflightRefusal } from '../lib/targets/preflight-refusal';

export function dryRunLines(campaignId: string, spec: CampaignSpec, now = new Date(), preflight = false): string[] {
  // With --preflight the account is asked (read-only, below): the header must not say otherwise.
  const out = [`DRY RUN of campaign ${campaignId} (${spec.name}): nothing is created, ${preflight ? 'the account is only read (--preflight)' : 'nothing is contacted'}`];
  if (spec.target === 'aws' && spec.aws) {
    const aws = spec.aws;
    out.push(`target aws: region ${aws.region}, zone ${aws.zone} (the database, the app node and the load node)`);
    out.push(`resources, in the order provisioning makes them (teardown removes them in reverse), tagged ${tagLine(campaignId)}:`);
    for (const r of awsPlan(campaignId, { database: spec.database, aws })) out.push(`  ${r.type.padEnd(19)} ${r.name.padEnd(44)} ${r.detail}`);
    const cost = rigCost(aws);
    out.push('cost:');
    for (const i of cost.items) out.push(`  ${i.what.padEnd(30)} ${formatPerHour(i.perHour)}${i.from === 'spec' ? ' (spec)' : ''}`);
    for (const m of cost.missing) out.push(`  MISSING ${m}`);
    out.push(`  the whole rig: ${formatPerHour(cost.perHour)}; database + app node (what the protocol's $/hr counts): ${formatPerHour(cost.protocolPerHour)}`);
    out.push(`  prices: ${cost.source}`);
    for (const line of awsCampaignCostLines(spec)) out.push(`  ${line}`);
  } else if (spec.target === 'existing' && spec.existing) {
    // Nothing is made or removed there, and no watchdog runs: the plan is what the rig will touch.
    const from = (src: { env: string } | { file: string }) => ('env' in src ? `the worker's $${src.env}` : src.file);
    out.push(`target existing: the service at ${spec.existing.serviceUrl}, the database at the URL in ${from(spec.existing.databaseUrlFrom)}; nothing is provisioned or torn down`);
    out.push(`writes there: the fixtures (tenant rig-bench, a new API key), ${spec.seed.historyRows} history rows, the load's and pgbench's tagged rows; they stay after the campaign`);
    out.push('skipped: clean-check, watchdog, teardown');
    return out;
  } else {
    out.push(`target local: a PostgreSQL cluster on a free loopback port and the reference service, on the host whose worker claims the campaign`);
    out.push(`database parameters: ${Object.entries(spec.database).map(([k, v]) => `${k}=${String(v)}`).join(', ')}`);
    out.push(`cost: ${spec.hardware.costPerHour > 0 ? `$${spec.hardware.costPerHour.toFixed(4)}/hour (the spec's hardware.costPerHour)` : 'none given (hardware.costPerHour)'}`);
  }
  const deadline = new Date(now.getTime() + spec.watchdogMinutes * 60_000);
  out.push(`${watchdogLine(spec)}`);
  out.push(...sampleWarnings(spec));
  out.push(`watchdog deadline: ${spec.watchdogMinutes} min after provisioning (were it provisioned now, the deadline would be ${deadline.toISOString()}); the plan needs ${watchdogNeed(spec).minutes} min`);
  return out;
}

/**
 * `--dry-run --preflight`: the AWS preflight against the account (read-only; the one part of a dry run
 * that contacts anything). 0: every check passed; 1: refused (each failed verdict names its fix).
 */
export async function dryRunPreflight(spec: CampaignSpec, say: (line: string) => void = (l) => console.log(l)): Promise<number> {
  if (spec.target !== 'aws' || !spec.aws) {
    say(`preflight: nothing to check for target ${spec.target} (it is the AWS account's)`);
    return 0;
  }
  const c = awsClients(spec.aws.region);
  try {
    say(`PREFLIGHT against the AWS account in ${spec.aws.region} (read-only):`);
    await preflightAws(c, spec.aws, say);
    return 0;
  } catch (err) {
    if (!(err instanceof PreflightRefusal)) throw err;
    console.error(`rig campaign start: refused by the preflight (${err.failed.join(', ')}); nothing was created`);
    return 1;
  } finally {
    c.destroy();
  }
}

// Is anything of an AWS rig left in the region? Every resource carrying the rig's campaign tag, each
// with its campaign, age and cost so far (age x the price table's $/hour for instances; security
// and parameter groups and IAM cost nothing, a bucket holding one package and a secret cents a month). Any failed call (no credentials, access denied, an endpoint
// that does not answer) is COULD NOT LOOK with the call's error: never a false clean.
import type { CleanCheckResult, Leftover } from '../target';
import { awsClients, defaultRegion } from './clients';
import { findRigResources, type FoundResource } from './find';
import { EC2_PER_HOUR, PRICE_TABLE_REGION, RDS_POSTGRES_PER_HOUR } from './prices';
import { RIG_RESOURCE_KINDS } from './names';

export const AWS_LEFTOVER_KINDS = RIG_RESOURCE_KINDS;

function costSoFar(r: FoundResource, region: string, ageSeconds: number | undefined): string {
  if (!r.size || ageSeconds === undefined) return '';
  const perHour = region === PRICE_TABLE_REGION ? (r.kind === 'db-instance' ? RDS_POSTGRES_PER_HOUR : EC2_PER_HOUR)[r.size] : undefined;
  return perHour === undefined ? `, cost so far unknown (${r.size} not priced in ${region})` : `, ~$${((perHour * ageSeconds) / 3600).toFixed(2)} so far (${r.size})`;
}

export async function cleanCheckAws(opts: { region?: string; now?: Date } = {}): Promise<CleanCheckResult> {
  const region = opts.region ?? defaultRegion();
  if (!region) return { status: 'could-not-look', reason: 'no AWS region: set AWS_REGION (or pass --region)', leftovers: [] };
  const c = awsClients(region);
  const looked = [
    `EC2 instances, security groups, RDS instances, DB parameter groups, S3 buckets and Secrets Manager secrets tagged rig:campaign in ${region}${c.endpoint ? ` at ${c.endpoint}` : ''}, and IAM roles and instance profiles under /rig/`,
  ];
  try {
    const found = await findRigResources(c);
    const now = (opts.now ?? new Date()).getTime();
    const leftovers: Leftover[] = found.map((r) => {
      const ageSeconds = r.createdAt ? Math.max(0, Math.round((now - r.createdAt.getTime()) / 1000)) : undefined;
      return {
        kind: r.kind,
        campaignId: r.campaignId,
        ageSeconds,
        detail: `${r.id}${r.state ? ` ${r.state}` : ''}${r.expiresAt ? `, expires ${r.expiresAt}` : ''}${costSoFar(r, region, ageSeconds)}`,
      };
    });
    return leftovers.length ? { status: 'dirty', leftovers, looked } : { status: 'clean', looked };
  } catch (err) {
    const e = err as Error & { $metadata?: { httpStatusCode?: number } };
    return { status: 'could-not-look', reason: `${region}${c.endpoint ? ` at ${c.endpoint}` : ''}: ${e.name}: ${e.message}`, leftovers: [] };
  } finally {
    c.destroy();
  }
}

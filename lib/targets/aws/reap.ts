// `rig check --target aws --reap`: deletes the rig's EXPIRED resources (rig:expires earlier than now)
// and nothing else: never an unexpired one, or one without the rig's campaign tag. One without a
// readable rig:expires (its stamp never landed: the attempt died between RunInstances and CreateTags,
// or someone removed it) counts as expired once its campaign is closed: `campaignState` (the CLI asks
// Temporal, campaignClosedBy) says the campaign's workflow is closed; while it runs, or when nobody can
// say, it is skipped and reported. The backstop for a rig whose watchdog is gone too (a lost Temporal
// server, a deleted namespace): the tags alone say what may go.
//
// How it looks, and why twice: the Resource Groups Tagging API (GetResources, TagFilters on
// rig:campaign, only the types the rig makes) lists candidates across services in one call, but it is
// an index: it can lag the service (a resource just deleted, tags just changed by the watchdog's
// re-tag). So every expired hit is confirmed with the service's own describe (DescribeInstances,
// DescribeSecurityGroups, DescribeDBInstances): a hit the service no longer has (or an instance it
// reports terminated) is skipped as gone; one whose tags there differ from the hit's is skipped and
// reported, never reaped on the index's word. DB parameter and subnet groups are not in the tagging
// API's answer: they are found by their describes (names starting rig-) and ListTagsForResource
// (find.ts), which is the service's word already; so are the bucket, secrets and IAM roles and
// instance profile the nodes boot with (find-bootstrap.ts: S3, Secrets Manager and IAM listings). Removal is per campaign in dependency order
// (removeRigResources, shared with teardown): nodes, the DB instance, its groups, the security groups.
//
// What moto 5.2.5 does (probed with its server): GetResources supports TagFilters (key alone and
// key + values), ResourceTypeFilters (ec2:instance, ec2:security-group, rds:db; the bare service "ec2"
// also returns volumes) and ResourcesPerPage with PaginationToken. It lists EC2 instances, security
// groups and volumes and RDS DB instances, and never DB parameter or subnet groups. A terminated
// instance stays listed (with its tags) after TerminateInstances, as on AWS for about an hour: the
// confirm step is what skips it; a deleted security group or DB instance drops out at once. Its
// answers come from the live resources, so its tags never lag the service's (the "tags differ" case is
// covered by a unit test of confirmHit, not by the emulator).
//
// `rig check --reap` exits (client/commands/check.ts reapExitCode): 0 nothing expired is left; 1
// something expired could not be reaped (a delete failed, or its tags changed under us and still say
// expired: run again); 69 COULD NOT LOOK (any failed call while looking, as in the clean check: never
// "nothing to reap" on a failed look).
import { DescribeInstancesCommand, DescribeSecurityGroupsCommand, type Tag as Ec2Tag } from '@aws-sdk/client-ec2';
import { DescribeDBInstancesCommand, type Tag as RdsTag } from '@aws-sdk/client-rds';
import { GetResourcesCommand, type ResourceTagMapping } from '@aws-sdk/client-resource-groups-tagging-api';
import type { ProgressFn } from '../target';
import { awsClients, defaultRegion, type AwsClients } from './clients';
import { isNamed } from './errors';
import { CREATED_TAG, findRdsGroups, tagOf, type FoundResource } from './find';
import { CAMPAIGN_TAG, EXPIRES_TAG, RESOURCE_TAG, RIG_RESOURCE_KINDS, type RigResourceKind } from './names';
import { findBootstrapResources } from './find-bootstrap';
import { removeRigResources } from './teardown';

/** The resource types the rig makes that the tagging API lists (volumes go with their instance). */
export const TAGGING_RESOURCE_TYPES = ['ec2:instance', 'ec2:security-group', 'rds:db'];

export interface ReapEntry {
  kind: string;
  id: string;
  campaignId: string;
  ageSeconds?: number;
  expiresAt?: string;
  /** Why it was skipped or not reaped; for a reaped one '' (expired), or why it counted as expired. */
  why: string;
}

export interface ReapResult {
  status: 'done' | 'incomplete' | 'could-not-look';
  reaped: ReapEntry[];
  /** Not reaped on purpose: gone already, tags that differ, no readable expiry. */
  skipped: ReapEntry[];
  /** Expired and still there: the delete failed, or the service's own tags still say expired. */
  notReaped: ReapEntry[];
  /** Unexpired rig resources, left alone. */
  unexpired: number;
  looked: string[];
  /** Why it could not look (status could-not-look). */
  reason?: string;
}


type AnyTag = Ec2Tag | RdsTag;
export type ArnKind = { service: 'ec2'; type: 'instance' | 'security-group'; id: string } | { service: 'rds'; type: 'db'; id: string };

/** arn:aws:ec2:<region>:<account>:instance/i-..., .../security-group/sg-..., arn:aws:rds:<region>:<account>:db:<name>. */
export function parseRigArn(arn: string): ArnKind | undefined {
  const m = /^arn:[^:]+:(ec2|rds):[^:]*:[^:]*:(.+)$/.exec(arn);
  if (!m) return undefined;
  const [, service, rest] = m;
  if (service === 'ec2') {
    const r = /^(instance|security-group)\/(.+)$/.exec(rest);
    return r ? { service, type: r[1] as 'instance' | 'security-group', id: r[2] } : undefined;
  }
  const r = /^db:(.+)$/.exec(rest);
  return r ? { service: 'rds', type: 'db', id: r[1] } : undefined;
}

/** A workflow status that means the campaign will make or use nothing more (Temporal's names). */
export const CLOSED_STATUSES = ['COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT'];

/** Expired at `now`? undefined when the tag is missing or not a time (then its campaign's state decides). */
export function isExpired(expiresAt: string | undefined, now: Date): boolean | undefined {
  if (!expiresAt || Number.isNaN(Date.parse(expiresAt))) return undefined;
  return Date.parse(expiresAt) < now.getTime();
}

/** What the service's own describe said of a hit: gone, or there with its tags (and state). */
export type Described = { gone: string } | { tags: AnyTag[]; state?: string; createdAt?: Date; size?: string };

/**
 * The confirm step, pure: reap a tagging-API hit only when the service still has it and its tags there
 * name the same campaign and the same expiry. Otherwise the reason to skip it, and whether what the
 * service says is itself expired (then it is left expired: not reaped, exit 1, run again).
 */
export function confirmHit(hit: { campaignId: string; expiresAt: string | undefined }, described: Described, now: Date): { ok: true } | { ok: false; why: string; stillExpired: boolean } {
  if ('gone' in described) return { ok: false, why: `gone: ${described.gone}`, stillExpired: false };
  const campaign = tagOf(described.tags, CAMPAIGN_TAG);
  const expires = tagOf(described.tags, EXPIRES_TAG);
  if (campaign === hit.campaignId && expires === hit.expiresAt) return { ok: true };
  const stillExpired = campaign !== undefined && isExpired(expires, now) === true;
  return {
    ok: false,
    why: `tags differ: the tagging API said ${CAMPAIGN_TAG}=${hit.campaignId} ${EXPIRES_TAG}=${hit.expiresAt}, the service says ${CAMPAIGN_TAG}=${campaign ?? '(none)'} ${EXPIRES_TAG}=${expires ?? '(none)'}${stillExpired ? '; still expired there: run --reap again' : ''}`,
    stillExpired,
  };
}

/** The service's own word on one hit. Not-found is "gone"; any other failure throws (could not look). */
async function describeHit(c: AwsClients, a: ArnKind): Promise<Described> {
  try {
    if (a.type === 'instance') {
      const r = await c.ec2.send(new DescribeInstancesCommand({ InstanceIds: [a.id] }));
      const inst = (r.Reservations ?? []).flatMap((x) => x.Instances ?? [])[0];
      if (!inst) return { gone: 'DescribeInstances does not know it' };
      if (inst.State?.Name === 'terminated') return { gone: 'terminated (the tagging API lists it for a while after)' };
      return { tags: inst.Tags ?? [], state: inst.State?.Name, createdAt: inst.LaunchTime, size: inst.InstanceType };
    }
    if (a.type === 'security-group') {
      const sg = (await c.ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [a.id] }))).SecurityGroups?.[0];
      return sg ? { tags: sg.Tags ?? [] } : { gone: 'DescribeSecurityGroups does not know it' };
    }
    const db = (await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: a.id }))).DBInstances?.[0];
    return db ? { tags: db.TagList ?? [], state: db.DBInstanceStatus, createdAt: db.InstanceCreateTime, size: db.DBInstanceClass } : { gone: 'DescribeDBInstances does not know it' };
  } catch (err) {
    if (isNamed(err, 'InvalidInstanceID.NotFound', 'InvalidGroup.NotFound', 'DBInstanceNotFound')) return { gone: `${(err as Error).name}` };
    throw err;
  }
}

const FALLBACK_KIND: Record<ArnKind['type'], RigResourceKind> = { instance: 'app-node', 'security-group': 'nodes-security-group', db: 'db-instance' };

function kindOf(tags: AnyTag[] | undefined, a: ArnKind): RigResourceKind {
  const tagged = tagOf(tags, RESOURCE_TAG) as RigResourceKind | undefined;
  // A tag that names a kind of another service is not believed: the ARN says what it is.
  const sameService = (k: RigResourceKind) => (a.type === 'db' ? k === 'db-instance' : a.type === 'instance' ? k === 'app-node' || k === 'load-node' : k.endsWith('security-group'));
  return tagged && (RIG_RESOURCE_KINDS as readonly string[]).includes(tagged) && sameService(tagged) ? tagged : FALLBACK_KIND[a.type];
}

const ageOf = (createdAt: Date | undefined, now: Date) => (createdAt ? Math.max(0, Math.round((now.getTime() - createdAt.getTime()) / 1000)) : undefined);
const dateOf = (s: string | undefined) => (s && !Number.isNaN(Date.parse(s)) ? new Date(s) : undefined);

/** Every tagging-API hit carrying rig:campaign, of the types the rig makes, all pages. */
async function taggingHits(c: AwsClients): Promise<ResourceTagMapping[]> {
  const hits: ResourceTagMapping[] = [];
  let token: string | undefined;
  do {
    const page = await c.tagging.send(new GetResourcesCommand({ TagFilters: [{ Key: CAMPAIGN_TAG }], ResourceTypeFilters: TAGGING_RESOURCE_TYPES, PaginationToken: token }));
    hits.push(...(page.ResourceTagMappingList ?? []));
    // AWS ends with an empty token, moto with none.
    token = page.PaginationToken || undefined;
  } while (token);
  return hits;
}

/**
 * `campaignState`: the status of a campaign's workflow (CLOSED_STATUSES, RUNNING, NOT_FOUND, ...), or
 * undefined when it cannot be asked; without it a resource with no readable expiry is never reaped.
 */
export async function reapAws(opts: { region?: string; now?: Date; onProgress?: ProgressFn; campaignState?: (campaignId: string) => Promise<string | undefined> } = {}): Promise<ReapResult> {
  const empty = { reaped: [], skipped: [], notReaped: [], unexpired: 0 };
  const region = opts.region ?? defaultRegion();
  if (!region) return { status: 'could-not-look', reason: 'no AWS region: set AWS_REGION (or pass --region)', looked: [], ...empty };
  const now = opts.now ?? new Date();
  const onProgress = opts.onProgress ?? (() => {});
  const c = awsClients(region);
  const where = `${region}${c.endpoint ? ` at ${c.endpoint}` : ''}`;
  const looked = [`the tagging API for ${TAGGING_RESOURCE_TYPES.join(', ')} tagged ${CAMPAIGN_TAG}, each confirmed by its describe; DB parameter and subnet groups named rig-* by their tags; the nodes' bucket, secrets and IAM roles by their own listings; in ${where}`];
  const skipped: ReapEntry[] = [];
  const notReaped: ReapEntry[] = [];
  const reaped: ReapEntry[] = [];
  let unexpired = 0;
  try {
    // 1. Look: nothing is deleted until every look has answered.
    const expired: Array<{ r: FoundResource; entry: ReapEntry }> = [];
    const states = new Map<string, Promise<string | undefined>>();
    const stateOf = (campaignId: string) => {
      if (!states.has(campaignId)) states.set(campaignId, opts.campaignState ? opts.campaignState(campaignId).catch(() => undefined) : Promise.resolve(undefined));
      return states.get(campaignId)!;
    };
    /** Expired, or (no readable expiry) its campaign closed: `why` says which for the second. */
    const consider = async (r: FoundResource, entry: ReapEntry): Promise<{ why: string } | undefined> => {
      const e = isExpired(r.expiresAt, now);
      if (e === true) return { why: '' };
      if (e === false) {
        unexpired++;
        return undefined;
      }
      const state = await stateOf(r.campaignId);
      const noTag = `no readable ${EXPIRES_TAG} tag (${JSON.stringify(r.expiresAt ?? null)})`;
      if (state && CLOSED_STATUSES.includes(state)) return { why: `${noTag}, and its campaign's workflow is closed (${state})` };
      skipped.push({ ...entry, why: `${noTag}: ${state ? `its campaign's workflow is ${state}, not closed` : 'its campaign\'s state is unknown (Temporal not asked or not answering)'}; never reaped then; rig step teardown --campaign ${r.campaignId} removes it` });
      return undefined;
    };
    for (const hit of await taggingHits(c)) {
      const campaignId = tagOf(hit.Tags, CAMPAIGN_TAG) ?? '?';
      const expiresAt = tagOf(hit.Tags, EXPIRES_TAG);
      const a = hit.ResourceARN ? parseRigArn(hit.ResourceARN) : undefined;
      const entry = { kind: tagOf(hit.Tags, RESOURCE_TAG) ?? '?', id: hit.ResourceARN ?? '?', campaignId, expiresAt, ageSeconds: ageOf(dateOf(tagOf(hit.Tags, CREATED_TAG)), now), why: '' };
      if (!a) {
        skipped.push({ ...entry, why: 'not a kind of resource the rig makes' });
        continue;
      }
      const asFound: FoundResource = { kind: kindOf(hit.Tags, a), id: a.id, campaignId, expiresAt, state: '' };
      const verdict = await consider(asFound, { ...entry, kind: asFound.kind, id: a.id });
      if (!verdict) continue;
      const described = await describeHit(c, a);
      const confirmed = confirmHit({ campaignId, expiresAt }, described, now);
      if (!confirmed.ok) {
        (confirmed.stillExpired ? notReaped : skipped).push({ ...entry, kind: asFound.kind, id: a.id, why: confirmed.why });
        continue;
      }
      const d = described as Exclude<Described, { gone: string }>;
      const createdAt = d.createdAt ?? dateOf(tagOf(d.tags, CREATED_TAG));
      expired.push({ r: { ...asFound, kind: kindOf(d.tags, a), state: d.state ?? '', size: d.size, createdAt }, entry: { ...entry, kind: kindOf(d.tags, a), id: a.id, ageSeconds: ageOf(createdAt, now), why: verdict.why } });
    }
    // What the nodes boot with (bucket, secrets, IAM roles and instance profile) is found through each
    // service's own listing (find-bootstrap.ts), which is already the service's word: nothing to confirm.
    // IAM is global: an expired campaign's roles are reaped from whichever region looks first.
    for (const g of [...(await findRdsGroups(c, ['db-parameter-group', 'db-subnet-group'])), ...(await findBootstrapResources(c))]) {
      const entry = { kind: g.kind, id: g.id, campaignId: g.campaignId, expiresAt: g.expiresAt, ageSeconds: ageOf(g.createdAt, now), why: '' };
      const verdict = await consider(g, entry);
      if (verdict) expired.push({ r: g, entry: { ...entry, why: verdict.why } });
    }

    // 2. Reap, campaign by campaign, each in dependency order.
    const campaigns = [...new Set(expired.map((x) => x.r.campaignId))].sort();
    for (const campaignId of campaigns) {
      const mine = expired.filter((x) => x.r.campaignId === campaignId);
      onProgress(`reaping ${mine.length} expired resource(s) of ${campaignId}`);
      const removed: string[] = [];
      let failure: string | undefined;
      try {
        await removeRigResources(c, mine.map((x) => x.r), onProgress, removed);
      } catch (err) {
        failure = `${(err as Error).name}: ${(err as Error).message}`;
      }
      for (const x of mine) {
        if (removed.includes(`${x.r.kind} ${x.r.id}`)) reaped.push(x.entry);
        else notReaped.push({ ...x.entry, why: `not reaped: ${failure ?? 'the removal stopped before it'}` });
      }
    }
    return { status: notReaped.length ? 'incomplete' : 'done', reaped, skipped, notReaped, unexpired, looked };
  } catch (err) {
    const e = err as Error;
    // Only a look reaches here (each campaign's removal catches its own failure): nothing was deleted.
    return { status: 'could-not-look', reason: `${where}: ${e.name}: ${e.message}`, reaped, skipped, notReaped, unexpired, looked };
  } finally {
    c.destroy();
  }
}

// Finding what the nodes boot with (bootstrap.ts): the artifacts bucket, the Temporal secret, the
// nodes' role and instance profile and the Enhanced Monitoring role. None of these has an EC2-style
// tag filter, so each is listed where it can only be the rig's and its tags are read one by one:
//   - S3 buckets named rig-* in this region (ListBuckets, then GetBucketTagging). A bucket is tagged
//     just after it is made (CreateBucket takes no tags): one left untagged by an attempt that died is
//     still reported when its name has the rig's shape, and matched to its campaign by that name.
//   - Secrets Manager secrets with the rig:campaign tag key, including those scheduled for deletion
//     (they still exist, and a listing without them would be a false clean).
//   - IAM roles and instance profiles under the path /rig/ (ListRoles/ListInstanceProfiles with a
//     path prefix, then ListRoleTags / GetInstanceProfile: IAM's listings leave tags out, and moto 5.2.5
//     has no ListInstanceProfileTags). IAM is global: a region's clean check reports them whatever
//     region their campaign is in, which errs toward dirty, never toward clean.
// Any failed call throws (the caller says COULD NOT LOOK).
import { GetInstanceProfileCommand, ListInstanceProfilesCommand, ListRolesCommand, ListRoleTagsCommand, type ListInstanceProfilesCommandOutput, type ListRolesCommandOutput } from '@aws-sdk/client-iam';
import { GetBucketLocationCommand, GetBucketTaggingCommand, ListBucketsCommand } from '@aws-sdk/client-s3';
import { ListSecretsCommand, type ListSecretsCommandOutput } from '@aws-sdk/client-secrets-manager';
import type { AwsClients } from './clients';
import { isNamed } from './errors';
import type { FoundResource } from './find';
import { CAMPAIGN_TAG, CREATED_TAG, EXPIRES_TAG, IAM_PATH, RESOURCE_TAG, rigNames, type RigResourceKind } from './names';

type Tags = { Key?: string; Value?: string }[] | undefined;
const tagOf = (tags: Tags, key: string) => tags?.find((t) => t.Key === key)?.Value;
const dateOf = (s: string | undefined) => (s && !Number.isNaN(Date.parse(s)) ? new Date(s) : undefined);

/** The shape of a rig bucket name: rig-<slug->?<hash8>-<account12> (names.ts). */
const RIG_BUCKET = /^rig-(?:[a-z0-9-]+-)?[0-9a-f]{8}-(\d{12})$/;

function resource(tags: Tags, fallbackKind: RigResourceKind, id: string, createdAt: Date | undefined, state = ''): FoundResource {
  return {
    kind: (tagOf(tags, RESOURCE_TAG) as RigResourceKind | undefined) ?? fallbackKind,
    id,
    campaignId: tagOf(tags, CAMPAIGN_TAG) ?? '?',
    createdAt: createdAt ?? dateOf(tagOf(tags, CREATED_TAG)),
    expiresAt: tagOf(tags, EXPIRES_TAG),
    state,
  };
}

export async function findBootstrapResources(c: AwsClients, campaignId?: string): Promise<FoundResource[]> {
  const mine = (tags: Tags) => tagOf(tags, CAMPAIGN_TAG) !== undefined && (!campaignId || tagOf(tags, CAMPAIGN_TAG) === campaignId);
  return [...(await buckets(c, campaignId, mine)), ...(await secrets(c, campaignId, mine)), ...(await roles(c, campaignId, mine)), ...(await profiles(c, campaignId, mine))];
}

async function buckets(c: AwsClients, campaignId: string | undefined, mine: (t: Tags) => boolean): Promise<FoundResource[]> {
  const found: FoundResource[] = [];
  let token: string | undefined;
  do {
    const page = await c.s3.send(new ListBucketsCommand({ Prefix: 'rig-', ContinuationToken: token }));
    for (const b of page.Buckets ?? []) {
      if (!b.Name?.startsWith('rig-')) continue;
      const region = b.BucketRegion ?? (await c.s3.send(new GetBucketLocationCommand({ Bucket: b.Name }))).LocationConstraint ?? 'us-east-1';
      if ((region || 'us-east-1') !== c.region && !(region === 'EU' && c.region === 'eu-west-1')) continue;
      let tags: Tags;
      try {
        tags = (await c.s3.send(new GetBucketTaggingCommand({ Bucket: b.Name }))).TagSet;
      } catch (err) {
        if (!isNamed(err, 'NoSuchTagSet', 'NoSuchTagSetError')) throw err;
      }
      if (mine(tags)) {
        found.push(resource(tags, 'artifacts-bucket', b.Name, b.CreationDate));
        continue;
      }
      // Untagged (an attempt died between CreateBucket and PutBucketTagging) but shaped like the rig's.
      const account = tagOf(tags, CAMPAIGN_TAG) === undefined ? RIG_BUCKET.exec(b.Name)?.[1] : undefined;
      if (!account) continue;
      if (campaignId && rigNames(campaignId).artifactsBucket(account) !== b.Name) continue;
      found.push({ ...resource(undefined, 'artifacts-bucket', b.Name, b.CreationDate, 'untagged'), campaignId: campaignId ?? '?' });
    }
    token = page.ContinuationToken;
  } while (token);
  return found;
}

async function secrets(c: AwsClients, campaignId: string | undefined, mine: (t: Tags) => boolean): Promise<FoundResource[]> {
  const found: FoundResource[] = [];
  let token: string | undefined;
  do {
    const page: ListSecretsCommandOutput = await c.secrets.send(
      new ListSecretsCommand({
        Filters: [{ Key: 'tag-key', Values: [CAMPAIGN_TAG] }, ...(campaignId ? [{ Key: 'tag-value' as const, Values: [campaignId] }] : [])],
        IncludePlannedDeletion: true,
        NextToken: token,
      }),
    );
    for (const s of page.SecretList ?? []) {
      if (!mine(s.Tags) || !s.ARN) continue;
      found.push(resource(s.Tags, 'temporal-secret', s.ARN, s.CreatedDate, s.DeletedDate ? 'scheduled for deletion' : ''));
    }
    token = page.NextToken;
  } while (token);
  return found;
}

async function roles(c: AwsClients, campaignId: string | undefined, mine: (t: Tags) => boolean): Promise<FoundResource[]> {
  const found: FoundResource[] = [];
  let marker: string | undefined;
  do {
    const page: ListRolesCommandOutput = await c.iam.send(new ListRolesCommand({ PathPrefix: IAM_PATH, Marker: marker }));
    for (const r of page.Roles ?? []) {
      if (!r.RoleName || r.Path !== IAM_PATH) continue;
      const tags = (await c.iam.send(new ListRoleTagsCommand({ RoleName: r.RoleName }))).Tags;
      // Only the rig puts roles under /rig/: an untagged one there is reported to a campaign-less look.
      if (!mine(tags) && (campaignId || tagOf(tags, CAMPAIGN_TAG) !== undefined)) continue;
      found.push(resource(tags, r.RoleName.endsWith('-rdsmon') ? 'monitoring-role' : 'node-role', r.RoleName, r.CreateDate));
    }
    marker = page.IsTruncated ? page.Marker : undefined;
  } while (marker);
  return found;
}

async function profiles(c: AwsClients, campaignId: string | undefined, mine: (t: Tags) => boolean): Promise<FoundResource[]> {
  const found: FoundResource[] = [];
  let marker: string | undefined;
  do {
    const page: ListInstanceProfilesCommandOutput = await c.iam.send(new ListInstanceProfilesCommand({ PathPrefix: IAM_PATH, Marker: marker }));
    for (const p of page.InstanceProfiles ?? []) {
      if (!p.InstanceProfileName || p.Path !== IAM_PATH) continue;
      const tags = (await c.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: p.InstanceProfileName }))).InstanceProfile?.Tags;
      if (!mine(tags) && (campaignId || tagOf(tags, CAMPAIGN_TAG) !== undefined)) continue;
      found.push(resource(tags, 'node-instance-profile', p.InstanceProfileName, p.CreateDate));
    }
    marker = page.IsTruncated ? page.Marker : undefined;
  } while (marker);
  return found;
}

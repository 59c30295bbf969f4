// Moving a rig's expiry: when the watchdog's deadline moves (an operator's extend, the campaign's
// hold-until), every resource of the campaign gets the new rig:expires, so the reaper (reap.ts) never
// takes a rig its watchdog still guards. Found by the campaign tag (find.ts); EC2 instances and
// security groups by CreateTags, the RDS instance and its parameter (and subnet) group by
// AddTagsToResource on their ARN, the nodes' roles and instance profile by TagRole and
// TagInstanceProfile, the secrets by TagResource, and the artifacts bucket by PutBucketTagging with
// its other tags kept (S3 replaces a bucket's whole tag set). Each replaces a tag's value in place:
// running it twice with the same time changes nothing (idempotent), and a resource already gone is
// simply not found.
import { CreateTagsCommand } from '@aws-sdk/client-ec2';
import { TagInstanceProfileCommand, TagRoleCommand } from '@aws-sdk/client-iam';
import { AddTagsToResourceCommand } from '@aws-sdk/client-rds';
import { GetBucketTaggingCommand, PutBucketTaggingCommand } from '@aws-sdk/client-s3';
import { TagResourceCommand } from '@aws-sdk/client-secrets-manager';
import type { ProgressFn } from '../target';
import { awsClients, defaultRegion, type AwsClients } from './clients';
import { findRigResources, findRdsGroups, type FoundResource } from './find';
import { EXPIRES_TAG, type RigResourceKind } from './names';
import { readAwsRecord } from './record';

const EC2_KINDS = new Set<RigResourceKind>(['app-node', 'load-node', 'nodes-security-group', 'db-security-group']);
const RDS_KINDS = new Set<RigResourceKind>(['db-instance', 'db-parameter-group', 'db-subnet-group']);

/** One resource that is not EC2's (those go in one CreateTags). */
async function retagOne(c: AwsClients, campaignId: string, r: FoundResource, tag: Array<{ Key: string; Value: string }>): Promise<void> {
  if (RDS_KINDS.has(r.kind)) {
    if (!r.arn) throw new Error(`extendExpiry of ${campaignId}: ${r.kind} ${r.id} came back from RDS without an ARN; AddTagsToResource needs one`);
    await c.rds.send(new AddTagsToResourceCommand({ ResourceName: r.arn, Tags: tag }));
  } else if (r.kind === 'node-role' || r.kind === 'monitoring-role') {
    await c.iam.send(new TagRoleCommand({ RoleName: r.id, Tags: tag }));
  } else if (r.kind === 'node-instance-profile') {
    await c.iam.send(new TagInstanceProfileCommand({ InstanceProfileName: r.id, Tags: tag }));
  } else if (r.kind === 'rig-secret' || r.kind === 'temporal-secret') {
    await c.secrets.send(new TagResourceCommand({ SecretId: r.id, Tags: tag }));
  } else if (r.kind === 'artifacts-bucket') {
    const current = (await c.s3.send(new GetBucketTaggingCommand({ Bucket: r.id }))).TagSet ?? [];
    const kept = current.filter((t) => t.Key !== EXPIRES_TAG).map((t) => ({ Key: t.Key!, Value: t.Value ?? '' }));
    await c.s3.send(new PutBucketTaggingCommand({ Bucket: r.id, Tagging: { TagSet: [...kept, ...tag] } }));
  } else {
    throw new Error(`extendExpiry of ${campaignId}: no way to re-tag a ${r.kind} (${r.id}): add it to retag.ts`);
  }
}

/** Re-tags rig:expires = expiresAt (ISO 8601) on every resource of the campaign; returns "<kind> <id>" of each. */
export async function extendExpiryAws(campaignId: string, expiresAt: string, onProgress: ProgressFn = () => {}): Promise<string[]> {
  if (Number.isNaN(Date.parse(expiresAt))) throw new Error(`extendExpiry of ${campaignId}: expiresAt must be an ISO 8601 time, got ${JSON.stringify(expiresAt)}`);
  const region = readAwsRecord(campaignId)?.region ?? defaultRegion();
  if (!region) throw new Error(`extendExpiry of ${campaignId}: no record of its region (state/aws-rigs) and no AWS_REGION`);
  const c = awsClients(region);
  try {
    const found = [...(await findRigResources(c, campaignId)), ...(await findRdsGroups(c, ['db-subnet-group'], campaignId))];
    const tag = [{ Key: EXPIRES_TAG, Value: expiresAt }];
    const ec2Ids = found.filter((r) => EC2_KINDS.has(r.kind)).map((r) => r.id);
    // One CreateTags for all EC2 ids (it takes up to 1000).
    if (ec2Ids.length) await c.ec2.send(new CreateTagsCommand({ Resources: ec2Ids, Tags: tag }));
    for (const r of found.filter((x) => !EC2_KINDS.has(x.kind))) await retagOne(c, campaignId, r, tag);
    const done = found.map((r) => `${r.kind} ${r.id}`);
    onProgress(`rig:expires ${expiresAt} on ${done.length} resource(s) of ${campaignId}`);
    return done;
  } finally {
    c.destroy();
  }
}

// Finding a rig's AWS resources by their tags, the one way provision, teardown and the clean check
// look: EC2 instances and security groups by a tag filter, RDS instances by the TagList their
// describe returns, DB parameter groups one by one with ListTagsForResource (neither
// DescribeDBParameterGroups nor the tagging API's listing covers them), and the S3 bucket, the
// Secrets Manager secrets (the Temporal connection's and the rig's own) and the IAM roles and
// instance profile of the nodes through find-bootstrap.ts. Terminated instances are gone, not
// leftovers. Any failed call throws: a caller that cannot look must say so, never report clean.
import { DescribeInstancesCommand, DescribeSecurityGroupsCommand, type DescribeSecurityGroupsCommandOutput, type Tag as Ec2Tag } from '@aws-sdk/client-ec2';
import {
  DescribeDBInstancesCommand,
  DescribeDBParameterGroupsCommand,
  ListTagsForResourceCommand,
  type DescribeDBParameterGroupsCommandOutput,
  type Tag as RdsTag,
} from '@aws-sdk/client-rds';
import type { AwsClients } from './clients';
import { findBootstrapResources } from './find-bootstrap';
import { CAMPAIGN_TAG, CREATED_TAG, EXPIRES_TAG, RESOURCE_TAG, type RigResourceKind } from './names';

export { CREATED_TAG };

export interface FoundResource {
  kind: RigResourceKind;
  /** The id AWS keys it by: i-..., sg-..., the DB instance or parameter group's name. */
  id: string;
  campaignId: string;
  /** When it was made (the service's own time where it has one, else the rig:created tag). */
  createdAt?: Date;
  expiresAt?: string;
  /** running, available, deleting, ... ('' where the resource has no state). */
  state: string;
  /** Instance type or class, for the cost so far. */
  size?: string;
  /** Private IP of a node, endpoint address of the database. */
  address?: string;
}

type AnyTag = Ec2Tag | RdsTag;
const tagOf = (tags: AnyTag[] | undefined, key: string) => tags?.find((t) => t.Key === key)?.Value;
const dateOf = (s: string | undefined) => (s && !Number.isNaN(Date.parse(s)) ? new Date(s) : undefined);

function base(tags: AnyTag[] | undefined, fallbackKind: RigResourceKind): Pick<FoundResource, 'kind' | 'campaignId' | 'expiresAt'> & { created?: Date } {
  return {
    kind: (tagOf(tags, RESOURCE_TAG) as RigResourceKind | undefined) ?? fallbackKind,
    campaignId: tagOf(tags, CAMPAIGN_TAG) ?? '?',
    expiresAt: tagOf(tags, EXPIRES_TAG),
    created: dateOf(tagOf(tags, CREATED_TAG)),
  };
}

/** Every rig resource in the clients' region; only `campaignId`'s when given. */
export async function findRigResources(c: AwsClients, campaignId?: string): Promise<FoundResource[]> {
  const ec2Filter = campaignId ? { Name: `tag:${CAMPAIGN_TAG}`, Values: [campaignId] } : { Name: 'tag-key', Values: [CAMPAIGN_TAG] };
  const mine = (tags: AnyTag[] | undefined) => tagOf(tags, CAMPAIGN_TAG) !== undefined && (!campaignId || tagOf(tags, CAMPAIGN_TAG) === campaignId);
  const found: FoundResource[] = [];

  let token: string | undefined;
  do {
    const page = await c.ec2.send(new DescribeInstancesCommand({ Filters: [ec2Filter], NextToken: token }));
    for (const inst of (page.Reservations ?? []).flatMap((r) => r.Instances ?? [])) {
      const state = inst.State?.Name ?? '';
      if (state === 'terminated' || !mine(inst.Tags)) continue;
      const b = base(inst.Tags, 'app-node');
      found.push({ ...b, id: inst.InstanceId ?? '?', createdAt: inst.LaunchTime ?? b.created, state, size: inst.InstanceType, address: inst.PrivateIpAddress });
    }
    token = page.NextToken;
  } while (token);

  token = undefined;
  do {
    const page: DescribeSecurityGroupsCommandOutput = await c.ec2.send(new DescribeSecurityGroupsCommand({ Filters: [ec2Filter], NextToken: token }));
    for (const sg of page.SecurityGroups ?? []) {
      if (!mine(sg.Tags)) continue;
      const b = base(sg.Tags, 'db-security-group');
      found.push({ ...b, id: sg.GroupId ?? '?', createdAt: b.created, state: '' });
    }
    token = page.NextToken;
  } while (token);

  let marker: string | undefined;
  do {
    const page = await c.rds.send(new DescribeDBInstancesCommand({ Marker: marker }));
    for (const db of page.DBInstances ?? []) {
      if (!mine(db.TagList)) continue;
      const b = base(db.TagList, 'db-instance');
      found.push({ ...b, id: db.DBInstanceIdentifier ?? '?', createdAt: db.InstanceCreateTime ?? b.created, state: db.DBInstanceStatus ?? '', size: db.DBInstanceClass, address: db.Endpoint?.Address });
    }
    marker = page.Marker;
  } while (marker);

  marker = undefined;
  do {
    const page: DescribeDBParameterGroupsCommandOutput = await c.rds.send(new DescribeDBParameterGroupsCommand({ Marker: marker }));
    for (const pg of page.DBParameterGroups ?? []) {
      if (!pg.DBParameterGroupName?.startsWith('rig-') || !pg.DBParameterGroupArn) continue;
      const tags = (await c.rds.send(new ListTagsForResourceCommand({ ResourceName: pg.DBParameterGroupArn }))).TagList;
      if (!mine(tags)) continue;
      const b = base(tags, 'db-parameter-group');
      found.push({ ...b, id: pg.DBParameterGroupName, createdAt: b.created, state: '' });
    }
    marker = page.Marker;
  } while (marker);
  // The bucket, secret and IAM the nodes boot with: looked up their own ways (find-bootstrap.ts).
  found.push(...(await findBootstrapResources(c, campaignId)));
  return found;
}

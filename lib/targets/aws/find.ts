// Finding a rig's AWS resources by their tags, the one way provision, teardown and the clean check
// look: EC2 instances and security groups by a tag filter, RDS instances by the TagList their
// describe returns, DB parameter and subnet groups (names starting rig-) one by one with
// ListTagsForResource (neither their describes nor the tagging API's listing carry their tags), and
// the S3 bucket, the Secrets Manager secrets (the Temporal connection's and the rig's own) and the
// IAM roles and instance profile of the nodes through find-bootstrap.ts. Terminated instances are gone, not
// leftovers. Any failed call throws: a caller that cannot look must say so, never report clean.
import { DescribeInstancesCommand, DescribeSecurityGroupsCommand, type DescribeSecurityGroupsCommandOutput, type Tag as Ec2Tag } from '@aws-sdk/client-ec2';
import {
  DescribeDBInstancesCommand,
  DescribeDBParameterGroupsCommand,
  DescribeDBSubnetGroupsCommand,
  ListTagsForResourceCommand,
  type DescribeDBParameterGroupsCommandOutput,
  type DescribeDBSubnetGroupsCommandOutput,
  type Tag as RdsTag,
} from '@aws-sdk/client-rds';
import type { AwsClients } from './clients';
import { findBootstrapResources } from './find-bootstrap';
import { CAMPAIGN_TAG, CREATED_TAG, EXPIRES_TAG, LOAD_NODE_TAG, RESOURCE_TAG, type RigResourceKind } from './names';

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
  /** The RDS resource's ARN (AddTagsToResource keys by it); EC2 resources are keyed by id. */
  arn?: string;
  /** A load node beyond the data plane's: its node number (LOAD_NODE_TAG). */
  loadNode?: number;
}

type AnyTag = Ec2Tag | RdsTag;
export const tagOf = (tags: AnyTag[] | undefined, key: string) => tags?.find((t) => t.Key === key)?.Value;
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
      const loadNode = Number(tagOf(inst.Tags, LOAD_NODE_TAG));
      found.push({ ...b, id: inst.InstanceId ?? '?', createdAt: inst.LaunchTime ?? b.created, state, size: inst.InstanceType, address: inst.PrivateIpAddress, ...(Number.isInteger(loadNode) && loadNode > 0 ? { loadNode } : {}) });
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
      found.push({
        ...b,
        id: db.DBInstanceIdentifier ?? '?',
        arn: db.DBInstanceArn,
        createdAt: db.InstanceCreateTime ?? b.created,
        state: db.DBInstanceStatus ?? '',
        size: db.DBInstanceClass,
        address: db.Endpoint?.Address,
      });
    }
    marker = page.Marker;
  } while (marker);

  found.push(...(await findRdsGroups(c, ['db-parameter-group', 'db-subnet-group'], campaignId)));
  // The bucket, secrets and IAM the nodes boot with: looked up their own ways (find-bootstrap.ts).
  found.push(...(await findBootstrapResources(c, campaignId)));
  return found;
}

/**
 * DB parameter groups and DB subnet groups whose name starts rig- and whose tags (ListTagsForResource,
 * one call each) carry the campaign tag; only `campaignId`'s when given. Neither the groups' describes
 * nor the tagging API's GetResources returns their tags (moto 5.2.5 does not list them there either).
 */
export async function findRdsGroups(c: AwsClients, kinds: Array<'db-parameter-group' | 'db-subnet-group'>, campaignId?: string): Promise<FoundResource[]> {
  const found: FoundResource[] = [];
  const consider = async (kind: 'db-parameter-group' | 'db-subnet-group', name: string | undefined, arn: string | undefined) => {
    if (!name?.startsWith('rig-') || !arn) return;
    const tags = (await c.rds.send(new ListTagsForResourceCommand({ ResourceName: arn }))).TagList;
    const campaign = tagOf(tags, CAMPAIGN_TAG);
    if (campaign === undefined || (campaignId && campaign !== campaignId)) return;
    const b = base(tags, kind);
    // The kind is what the service says it is, not what a tag claims.
    found.push({ ...b, kind, id: name, arn, createdAt: b.created, state: '' });
  };
  let marker: string | undefined;
  if (kinds.includes('db-parameter-group')) {
    do {
      const page: DescribeDBParameterGroupsCommandOutput = await c.rds.send(new DescribeDBParameterGroupsCommand({ Marker: marker }));
      for (const pg of page.DBParameterGroups ?? []) await consider('db-parameter-group', pg.DBParameterGroupName, pg.DBParameterGroupArn);
      marker = page.Marker;
    } while (marker);
  }
  if (kinds.includes('db-subnet-group')) {
    marker = undefined;
    do {
      const page: DescribeDBSubnetGroupsCommandOutput = await c.rds.send(new DescribeDBSubnetGroupsCommand({ Marker: marker }));
      for (const g of page.DBSubnetGroups ?? []) await consider('db-subnet-group', g.DBSubnetGroupName, g.DBSubnetGroupArn);
      marker = page.Marker;
    } while (marker);
  }
  return found;
}

// Preflight: what the account must already have, since the rig's policy cannot make it.
// - RDS's service-linked role AWSServiceRoleForRDS (RDS User Guide, "Using service-linked roles for
//   Amazon RDS"): RDS makes it on an account's first DB instance with the caller's
//   iam:CreateServiceLinkedRole; without it CreateDBInstance fails after the security groups, secrets
//   and roles were made. iam:GetRole finds it; when it is absent, provisioning makes it first
//   (CreateServiceLinkedRole, rds.amazonaws.com: free, the account's own, what RDS would make), which
//   docs/aws-iam-policy.md allows for that service only (RdsServiceLinkedRole). The dry run only reads:
//   it says provisioning will make it. An identity without that grant is refused before any create,
//   told how to make it by hand.
// - A default VPC with a default subnet in the zone that gives instances a public address: the rig
//   places the database and the nodes there (no subnet group, no NAT of its own), and the nodes reach S3,
//   Secrets Manager and Temporal through that address.
import { DescribeSubnetsCommand, DescribeVpcsCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { CreateServiceLinkedRoleCommand, GetRoleCommand, type IAMClient } from '@aws-sdk/client-iam';
import type { AwsSpec } from '../../protocol/aws-spec';
import { isNamed } from './errors';
import { couldNotLook, pass, refuse, type Verdict } from './preflight-verdict';

export const RDS_SERVICE_LINKED_ROLE = 'AWSServiceRoleForRDS';

const MAKE_SLR_BY_HAND = 'create it once, as an identity allowed iam:CreateServiceLinkedRole: aws iam create-service-linked-role --aws-service-name rds.amazonaws.com';

/** `create`: make the role when it is absent (provisioning); without it (the dry run) only say that provisioning will. */
export async function checkRdsServiceLinkedRole(iam: IAMClient, opts: { create?: boolean } = {}): Promise<Verdict> {
  const check = 'rds-service-linked-role';
  try {
    const r = await iam.send(new GetRoleCommand({ RoleName: RDS_SERVICE_LINKED_ROLE }));
    return pass(check, `${RDS_SERVICE_LINKED_ROLE} exists (${r.Role?.Arn ?? 'no ARN given'})`);
  } catch (err) {
    if (!isNamed(err, 'NoSuchEntity', 'NoSuchEntityException')) return couldNotLook(check, 'iam:GetRole', err);
  }
  if (!opts.create) return pass(check, `${RDS_SERVICE_LINKED_ROLE} does not exist yet: provisioning makes it first (iam:CreateServiceLinkedRole for rds.amazonaws.com)`);
  try {
    const made = await iam.send(new CreateServiceLinkedRoleCommand({ AWSServiceName: 'rds.amazonaws.com' }));
    return pass(check, `${RDS_SERVICE_LINKED_ROLE} did not exist: made it (${made.Role?.Arn ?? 'no ARN given'})`);
  } catch (err) {
    // Made meanwhile (another campaign's provisioning, or RDS itself): what was wanted.
    if (isNamed(err, 'InvalidInput', 'InvalidInputException') && /has been taken|already exists/i.test((err as Error).message)) return pass(check, `${RDS_SERVICE_LINKED_ROLE} made meanwhile`);
    const denied = isNamed(err, 'AccessDenied', 'AccessDeniedException');
    if (denied) return refuse(check, `${RDS_SERVICE_LINKED_ROLE} does not exist in this account, and this identity may not create it (${(err as Error).message.slice(0, 200)})`, MAKE_SLR_BY_HAND);
    return couldNotLook(check, 'iam:CreateServiceLinkedRole', err);
  }
}

export async function checkDefaultVpc(ec2: EC2Client, aws: AwsSpec): Promise<Verdict> {
  const check = 'default-vpc';
  try {
    const vpc = (await ec2.send(new DescribeVpcsCommand({ Filters: [{ Name: 'is-default', Values: ['true'] }] }))).Vpcs?.[0]?.VpcId;
    if (!vpc) return refuse(check, `no default VPC in ${aws.region}`, `aws ec2 create-default-vpc --region ${aws.region}`);
    const subnets = (
      await ec2.send(new DescribeSubnetsCommand({ Filters: [{ Name: 'vpc-id', Values: [vpc] }, { Name: 'availability-zone', Values: [aws.zone] }, { Name: 'default-for-az', Values: ['true'] }] }))
    ).Subnets ?? [];
    const subnet = subnets[0];
    if (!subnet?.SubnetId) return refuse(check, `the default VPC ${vpc} has no default subnet in ${aws.zone}`, `aws ec2 create-default-subnet --region ${aws.region} --availability-zone ${aws.zone}`);
    if (subnet.MapPublicIpOnLaunch === false) {
      return refuse(check, `the default subnet ${subnet.SubnetId} in ${aws.zone} gives instances no public address (the nodes reach S3, Secrets Manager and Temporal through one)`, `aws ec2 modify-subnet-attribute --region ${aws.region} --subnet-id ${subnet.SubnetId} --map-public-ip-on-launch`);
    }
    return pass(check, `default VPC ${vpc}, subnet ${subnet.SubnetId} in ${aws.zone} with public addresses`);
  } catch (err) {
    return couldNotLook(check, 'ec2:DescribeVpcs/ec2:DescribeSubnets', err);
  }
}

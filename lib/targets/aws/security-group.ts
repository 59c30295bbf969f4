// Opening a port on a security group made a moment ago. EC2 is eventually consistent (EC2 API
// reference, "Eventual consistency in the Amazon EC2 API"): right after CreateSecurityGroup, both
// AuthorizeSecurityGroupIngress and RunInstances can answer InvalidGroup.NotFound for the group it
// just returned. That error, and only that one, is retried as "not consistent yet" (wait.ts
// eventually); InvalidPermission.Duplicate is a rule an earlier attempt already added.
import { AuthorizeSecurityGroupIngressCommand, type IpPermission } from '@aws-sdk/client-ec2';
import type { ProgressFn } from '../target';
import { isNamed } from './errors';
import { eventually, type EventuallyOptions } from './wait';

/** The error EC2 answers for a security group it does not know yet (or any more). */
export const GROUP_NOT_KNOWN_YET = 'InvalidGroup.NotFound';

type Ec2Send = { send(cmd: AuthorizeSecurityGroupIngressCommand): Promise<unknown> };

/** Adds `permission` to `groupId` once: waits out a group EC2 does not know yet, and takes a duplicate as done. */
export async function authorizeIngress(ec2: Ec2Send, groupId: string, permission: IpPermission, onProgress: ProgressFn = () => {}, retry: EventuallyOptions = {}): Promise<void> {
  try {
    await eventually(`opening ${permission.FromPort}/${permission.IpProtocol} on ${groupId}`, () => ec2.send(new AuthorizeSecurityGroupIngressCommand({ GroupId: groupId, IpPermissions: [permission] })), [GROUP_NOT_KNOWN_YET], onProgress, retry);
  } catch (err) {
    if (!isNamed(err, 'InvalidPermission.Duplicate')) throw err;
  }
}

// One node's RunInstances, as provisioning (provision.ts) launches the app and load nodes and the
// load-nodes step launches a lost load node again (relaunch.ts): the same request both ways, so a
// node launched again boots exactly as the one it replaces.
//
// The request is the same on every attempt that carries the same ClientToken (EC2 answers
// IdempotentParameterMismatch otherwise): its tags are the ones every attempt gives alike (Name,
// campaign, kind, node number); rig:created and rig:expires, which differ per attempt, follow by
// CreateTags (expiry-stamp.ts); the user data's deadline and build id are fixed by the caller.
import { RunInstancesCommand } from '@aws-sdk/client-ec2';
import type { ProgressFn } from '../target';
import { nodeUserDataInput, type NodeBootstrap } from './bootstrap';
import type { AwsClients } from './clients';
import { whileIamPropagates } from './iam';
import { LOAD_NODE_TAG } from './names';
import type { NodeImage } from './node-image';
import { GROUP_NOT_KNOWN_YET } from './security-group';
import type { RigTag } from './tags';
import { renderUserData } from './user-data';
import { eventually } from './wait';

export interface NodeLaunch {
  campaignId: string;
  region: string;
  zone: string;
  kind: 'app-node' | 'load-node';
  name: string;
  instanceType: string;
  /** The whole token, as RunInstances gets it (64 ASCII characters at most). */
  clientToken: string;
  /** A load node beyond the rig's own (1..N-1): its node number, tagged, and its own queue in the user data. */
  loadNode?: number;
  /** The tags every attempt gives alike (without rig:created and rig:expires); the node number is added here. */
  tags: RigTag[];
  boot: NodeBootstrap;
  docker: boolean;
  lifetimeMinutes: number;
  buildId: string;
  image: NodeImage;
  rootVolumeGb: number;
  securityGroupId: string;
}

/** What RunInstances answered of the one instance. */
export interface LaunchedNode {
  id: string;
  state: string;
  address?: string;
}

export async function runNode(c: AwsClients, l: NodeLaunch, onProgress: ProgressFn): Promise<LaunchedNode> {
  onProgress(`launching ${l.kind} ${l.name} (${l.instanceType}) in ${l.zone}`);
  const userData = renderUserData(nodeUserDataInput(l.campaignId, l.region, l.kind === 'load-node' ? 'load' : 'app', l.boot, { docker: l.docker, lifetimeMinutes: l.lifetimeMinutes, buildId: l.buildId, ...(l.loadNode ? { loadNode: l.loadNode } : {}) }));
  // Its node number, so that a retry finds it (and no other load node) before launching it again.
  const nodeTags = [...l.tags, ...(l.loadNode ? [{ Key: LOAD_NODE_TAG, Value: String(l.loadNode) }] : [])];
  // Retried while IAM has not spread the profile, and while EC2 does not know the nodes' group yet
  // (the same ClientToken each time: one instance).
  const r = await whileIamPropagates(`launching ${l.kind} ${l.name}`, () => eventually(`launching ${l.kind} ${l.name}`, () => c.ec2.send(
    new RunInstancesCommand({
      ImageId: l.image.imageId,
      InstanceType: l.instanceType as never,
      MinCount: 1,
      MaxCount: 1,
      ClientToken: l.clientToken,
      Placement: { AvailabilityZone: l.zone },
      SecurityGroupIds: [l.securityGroupId],
      IamInstanceProfile: { Arn: l.boot.instanceProfileArn },
      // Its own dead-man switch (user-data.ts): a poweroff from inside terminates it, and it reads its
      // rig:expires tag from instance metadata (IMDSv2 only). Tags in metadata allow only keys of
      // letters, digits and + - = . , _ : @ (no '/', no space): the rig's are Name and rig:*.
      InstanceInitiatedShutdownBehavior: 'terminate',
      MetadataOptions: { HttpEndpoint: 'enabled', HttpTokens: 'required', InstanceMetadataTags: 'enabled' },
      UserData: Buffer.from(userData, 'utf8').toString('base64'),
      BlockDeviceMappings: [{ DeviceName: l.image.rootDevice, Ebs: { VolumeSize: l.rootVolumeGb, VolumeType: 'gp3', DeleteOnTermination: true } }],
      TagSpecifications: [
        { ResourceType: 'instance', Tags: nodeTags },
        { ResourceType: 'volume', Tags: nodeTags },
      ],
    }),
  ), [GROUP_NOT_KNOWN_YET], onProgress), onProgress);
  const inst = r.Instances![0];
  return { id: inst.InstanceId!, state: inst.State?.Name ?? 'pending', ...(inst.PrivateIpAddress ? { address: inst.PrivateIpAddress } : {}) };
}

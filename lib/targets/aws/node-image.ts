// The nodes' AMI: Amazon Linux 2023 from AWS's SSM public parameter
// /aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-<arch> (AWS's documented way to the
// current AL2023 image: one id per region and architecture, the default kernel), not a DescribeImages
// name pattern (`al2023-ami-2023*` matches the 6.1 and the 6.12 kernels' images alike and picks by date).
// Resolved once per campaign and kept in the rig record (record.ts nodeImages): the parameter moves when
// AWS publishes a new image, and a retried launch must send RunInstances the same ImageId under the same
// ClientToken, and the page must name the image the nodes actually ran.
import { DescribeImagesCommand } from '@aws-sdk/client-ec2';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import type { AwsClients } from './clients';

export type NodeArchitecture = 'arm64' | 'x86_64';

export interface NodeImage {
  imageId: string;
  /** The AMI's name (al2023-ami-2023.<release>-kernel-<version>-<arch>): the page shows it beside the id. */
  name: string;
  /** The AMI's root device: the root volume's BlockDeviceMapping names it. */
  rootDevice: string;
  /** The SSM parameter it came from. */
  parameter: string;
}

/** The SSM public parameter of AL2023's current image, default kernel, for an architecture. */
export function al2023Parameter(arch: NodeArchitecture): string {
  return `/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-${arch}`;
}

/** Reads the parameter now (GetParameter), then the image it names (DescribeImages on that one id). */
export async function resolveNodeImage(c: Pick<AwsClients, 'ssm' | 'ec2' | 'region'>, arch: NodeArchitecture): Promise<NodeImage> {
  const parameter = al2023Parameter(arch);
  const imageId = (await c.ssm.send(new GetParameterCommand({ Name: parameter }))).Parameter?.Value;
  if (!imageId) throw new Error(`SSM parameter ${parameter} in ${c.region} has no value: cannot choose the nodes' AMI`);
  const image = (await c.ec2.send(new DescribeImagesCommand({ ImageIds: [imageId] }))).Images?.[0];
  if (!image?.ImageId) throw new Error(`SSM parameter ${parameter} in ${c.region} names ${imageId}, which DescribeImages does not know`);
  if (image.Architecture && image.Architecture !== arch) throw new Error(`SSM parameter ${parameter} names ${imageId}, an ${image.Architecture} image`);
  return { imageId, name: image.Name ?? '(no name)', rootDevice: image.RootDeviceName ?? '/dev/xvda', parameter };
}

/**
 * The images for these architectures: the recorded one where the record has it (a retried provisioning
 * reads no parameter), else resolved now. `resolved` says whether anything was looked up (a new record is due).
 */
export async function nodeImages(
  c: Pick<AwsClients, 'ssm' | 'ec2' | 'region'>,
  archs: NodeArchitecture[],
  recorded: Partial<Record<NodeArchitecture, NodeImage>> | undefined,
): Promise<{ images: Partial<Record<NodeArchitecture, NodeImage>>; resolved: boolean }> {
  const images: Partial<Record<NodeArchitecture, NodeImage>> = { ...(recorded ?? {}) };
  let resolved = false;
  for (const arch of [...new Set(archs)]) {
    if (images[arch]) continue;
    images[arch] = await resolveNodeImage(c, arch);
    resolved = true;
  }
  return { images, resolved };
}

/** The hardware line's words for the images: each AMI's id and name. */
export function nodeImagesLine(images: Partial<Record<NodeArchitecture, NodeImage>>): string {
  const list = Object.values(images).filter((i): i is NodeImage => !!i);
  return `node AMI ${list.map((i) => `${i.imageId} (${i.name})`).join(', ')}`;
}

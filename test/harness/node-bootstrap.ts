// A NodeBootstrap as provisioning would give it (bucket, package keys, the Temporal secret's ARN, the
// instance profile, the queues), made up for tests that render the nodes' user data without AWS.
import type { NodeBootstrap } from '../../lib/targets/aws/bootstrap';
import { awsAppQueue, awsDataQueue } from '../../lib/temporal/queues';

/** `slug` names the bucket and ARNs; `hex` (one character) fills the package's sha256. */
export function sampleBootstrap(campaignId: string, slug: string, hex: string): NodeBootstrap {
  const sha = hex.repeat(64);
  return {
    bucket: `rig-${slug}-0123abcd-123456789012`,
    tarballKey: `packages/${sha}/rig.tgz`,
    lockKey: `packages/${sha}/package-lock.json`,
    packageSha256: sha,
    temporalSecretArn: `arn:aws:secretsmanager:us-east-1:123456789012:secret:rig/${slug}-0123abcd/temporal-AbCdEf`,
    instanceProfileArn: `arn:aws:iam::123456789012:instance-profile/rig/rig-${slug}-0123abcd-node`,
    dataQueue: awsDataQueue(campaignId),
    appQueue: awsAppQueue(campaignId),
  };
}

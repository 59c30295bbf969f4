// The AWS SDK clients of one rig, built from one config: the region (the campaign's, else AWS_REGION),
// the endpoint (RIG_AWS_ENDPOINT, for the emulator; unset on real AWS) and the SDK's standard
// credential chain (environment, shared files, SSO, instance role). Nothing here holds a secret of
// its own. Retries are the SDK's (3 attempts); a call that cannot be made at all (no credentials,
// refused connection) fails fast so the clean check can say COULD NOT LOOK instead of waiting.
// S3 uses path-style addressing against an emulator (moto answers on one host, not a bucket's own
// subdomain); real S3 keeps its default virtual-hosted style. IAM is global: its client's region only
// picks the signing region.
import { EC2Client } from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import { RDSClient } from '@aws-sdk/client-rds';
import { ResourceGroupsTaggingAPIClient } from '@aws-sdk/client-resource-groups-tagging-api';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { attachReplay, replayDir } from './replay';
import { serviceQuotaReader, type ServiceQuotaFn } from './service-quotas';

export interface AwsClients {
  region: string;
  endpoint?: string;
  ec2: EC2Client;
  rds: RDSClient;
  s3: S3Client;
  iam: IAMClient;
  secrets: SecretsManagerClient;
  /** SSM: only the public parameter that names the nodes' AMI (node-image.ts). */
  ssm: SSMClient;
  /** The Resource Groups Tagging API: the reaper's first look across services (reap.ts). */
  tagging: ResourceGroupsTaggingAPIClient;
  /** Service Quotas' read (service-quotas.ts): the one seam preflight's vCPU check goes through. */
  serviceQuota: ServiceQuotaFn;
  destroy(): void;
}

/** The region a call goes to when no campaign names one: AWS_REGION, AWS_DEFAULT_REGION. */
export function defaultRegion(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined;
}

/**
 * The clients for a region. Credentials come from the SDK's default chain (the environment, a profile,
 * the instance role) unless given: a caller acting as another identity than the process's (the tests'
 * admin beside a worker held to the documented policy) passes its keys.
 */
export function awsClients(region: string, env: NodeJS.ProcessEnv = process.env, credentials?: { accessKeyId: string; secretAccessKey: string }): AwsClients {
  const endpoint = env.RIG_AWS_ENDPOINT || undefined;
  const config = { region, ...(endpoint ? { endpoint } : {}), maxAttempts: 3, ...(credentials ? { credentials } : {}) };
  const ec2 = new EC2Client(config);
  const rds = new RDSClient(config);
  const s3 = new S3Client({ ...config, ...(endpoint ? { forcePathStyle: true } : {}) });
  const iam = new IAMClient(config);
  const secrets = new SecretsManagerClient(config);
  const ssm = new SSMClient(config);
  const tagging = new ResourceGroupsTaggingAPIClient(config);
  const quotas = serviceQuotaReader(region, config, env);
  // Test-only: answers the emulator cannot give (replay.ts; refused without RIG_AWS_ENDPOINT).
  const replay = replayDir(env);
  if (replay) for (const client of [ec2, rds, s3, iam, secrets, ssm, tagging]) attachReplay(client, replay);
  return {
    region,
    endpoint,
    ec2,
    rds,
    s3,
    iam,
    secrets,
    ssm,
    tagging,
    serviceQuota: quotas.read,
    destroy() {
      for (const client of [ec2, rds, s3, iam, secrets, ssm, tagging]) client.destroy();
      quotas.destroy();
    },
  };
}

// The Temporal connection the nodes' workers use, kept in Secrets Manager (one secret per campaign)
// and read by the nodes through their instance role. It is what this control host's own connection
// uses (lib/temporal/connection-env.ts: the TEMPORAL_* variables over the temporal.toml profile, as
// the CLI resolves them: address, namespace, API key or mTLS certificate and key, private CA, SNI
// name, gRPC headers), read here and written there, and nowhere else: not in
// user data (anyone with ec2:DescribeInstanceAttribute reads that), not in an activity's input or
// result (workflow history), never in a progress line or log. Idempotent: the secret is found by its
// name (derived from the campaign) before it is created, and a retry puts the value again with a
// ClientRequestToken made from the value's hash, so the same value makes no new version.
import { createHash } from 'node:crypto';
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  DescribeSecretCommand,
  PutSecretValueCommand,
  RestoreSecretCommand,
} from '@aws-sdk/client-secrets-manager';
import { temporalEnv, usesTls } from '../../temporal/connection-env';
import type { ProgressFn } from '../target';
import type { AwsClients } from './clients';
import { isNamed } from './errors';
import type { RigTag } from './tags';
import { waitFor } from './wait';

/** The secret's JSON: what scripts/node-temporal-env.cjs turns into the worker's environment on a node. */
export interface TemporalSecretValue {
  address: string;
  namespace: string;
  apiKey?: string;
  /** TLS with the system's trust store when nothing else below asks for it. */
  tls: boolean;
  clientCert?: string;
  clientKey?: string;
  serverCa?: string;
  serverName?: string;
  /**
   * gRPC headers sent with every call (TEMPORAL_GRPC_META_*, a profile's grpc_meta), by header name.
   * On the node they go into a temporal.toml profile rather than into variables: a header name with
   * more than one hyphen does not survive envconfig's TEMPORAL_GRPC_META_ name mapping.
   */
  grpcMeta?: Record<string, string>;
}

const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');
const LOOPBACK = /^(127\.|localhost\b|\[?::1\]?)/;

/** The control host's own connection, as the nodes will need it. Throws where the environment is inconsistent. */
export function temporalSecretValue(env: NodeJS.ProcessEnv = process.env): TemporalSecretValue {
  const t = temporalEnv(env);
  const tls = typeof t.tls === 'object' ? t.tls : undefined;
  return {
    address: t.address,
    namespace: t.namespace,
    ...(t.apiKey ? { apiKey: t.apiKey } : {}),
    tls: usesTls(t),
    ...(tls?.clientCertPair ? { clientCert: text(tls.clientCertPair.crt), clientKey: text(tls.clientCertPair.key) } : {}),
    ...(tls?.serverRootCACertificate ? { serverCa: text(tls.serverRootCACertificate) } : {}),
    ...(tls?.serverNameOverride ? { serverName: tls.serverNameOverride } : {}),
    ...(t.metadata && Object.keys(t.metadata).length > 0 ? { grpcMeta: { ...t.metadata } } : {}),
  };
}

/** Whether the nodes could reach that address at all: a loopback address is this machine's, not theirs. */
export function isLoopbackAddress(address: string): boolean {
  return LOOPBACK.test(address);
}

/** Creates the secret or puts the value again; gives its ARN (not secret: it names, it does not hold). */
export async function ensureTemporalSecret(c: AwsClients, name: string, value: TemporalSecretValue, tags: RigTag[], onProgress: ProgressFn = () => {}): Promise<string> {
  const secretString = JSON.stringify(value);
  // 32-64 characters; the same value gives the same token, so a retry makes no new version.
  const token = createHash('sha256').update(secretString).digest('hex').slice(0, 64);
  let arn: string | undefined;
  try {
    const d = await c.secrets.send(new DescribeSecretCommand({ SecretId: name }));
    arn = d.ARN;
    if (d.DeletedDate) {
      onProgress(`restoring secret ${name} (scheduled for deletion)`);
      await c.secrets.send(new RestoreSecretCommand({ SecretId: name }));
    }
  } catch (err) {
    if (!isNamed(err, 'ResourceNotFoundException')) throw err;
  }
  if (!arn) {
    onProgress(`creating secret ${name} (the nodes' Temporal connection)`);
    try {
      return (await c.secrets.send(new CreateSecretCommand({ Name: name, SecretString: secretString, ClientRequestToken: token, Tags: tags, Description: 'rig: the Temporal connection of this campaign\'s nodes' }))).ARN!;
    } catch (err) {
      if (!isNamed(err, 'ResourceExistsException')) throw err;
      arn = (await c.secrets.send(new DescribeSecretCommand({ SecretId: name }))).ARN;
    }
  }
  try {
    await c.secrets.send(new PutSecretValueCommand({ SecretId: arn ?? name, SecretString: secretString, ClientRequestToken: token }));
  } catch (err) {
    // The version with this token is there already, holding this very value.
    if (!isNamed(err, 'ResourceExistsException')) throw err;
  }
  return arn!;
}

/** Deletes it at once (no recovery window) and waits until Secrets Manager no longer describes it. */
export async function removeTemporalSecret(c: AwsClients, secretId: string, onProgress: ProgressFn = () => {}): Promise<void> {
  onProgress(`deleting secret ${secretId}`);
  try {
    await c.secrets.send(new DeleteSecretCommand({ SecretId: secretId, ForceDeleteWithoutRecovery: true }));
  } catch (err) {
    if (!isNamed(err, 'ResourceNotFoundException')) throw err;
  }
  await waitFor(
    `secret ${secretId} deleted`,
    async () => {
      try {
        await c.secrets.send(new DescribeSecretCommand({ SecretId: secretId }));
        return undefined;
      } catch (err) {
        if (isNamed(err, 'ResourceNotFoundException')) return true;
        throw err;
      }
    },
    { timeoutMs: 5 * 60_000, onProgress },
  );
}

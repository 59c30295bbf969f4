// The SDK clients cloud evidence needs, built like lib/targets/aws/clients.ts (the region, the
// emulator's endpoint from RIG_AWS_ENDPOINT, the SDK's credential chain, 3 attempts). Kept apart from
// the provisioning clients so provision, teardown and the clean check load no monitoring SDKs.
// Every collector takes these as a parameter, so a test can point one of them (Performance Insights,
// which the emulator lacks) at a replay server and the others at moto.
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { PIClient } from '@aws-sdk/client-pi';
import { RDSClient } from '@aws-sdk/client-rds';

export interface CloudClients {
  cloudwatch: CloudWatchClient;
  logs: CloudWatchLogsClient;
  pi: PIClient;
  rds: RDSClient;
  destroy(): void;
}

export function cloudClients(region: string, env: NodeJS.ProcessEnv = process.env): CloudClients {
  const endpoint = env.RIG_AWS_ENDPOINT || undefined;
  const config = { region, ...(endpoint ? { endpoint } : {}), maxAttempts: 3 };
  return assembleCloudClients({ cloudwatch: new CloudWatchClient(config), logs: new CloudWatchLogsClient(config), pi: new PIClient(config), rds: new RDSClient(config) });
}

/** Clients made elsewhere (a test's), with the one destroy() that closes them all. */
export function assembleCloudClients(c: Omit<CloudClients, 'destroy'>): CloudClients {
  return {
    ...c,
    destroy() {
      c.cloudwatch.destroy();
      c.logs.destroy();
      c.pi.destroy();
      c.rds.destroy();
    },
  };
}

/** "AccessDeniedException: User ... is not authorized", first line: what an error file records. */
export function awsErrorText(err: unknown): string {
  const e = err as { name?: string; message?: string; Code?: string };
  const name = e?.name && e.name !== 'Error' ? e.name : (e?.Code ?? 'Error');
  const message = (e?.message ?? String(err)).split('\n')[0];
  return message.startsWith(name) ? message : `${name}: ${message}`;
}

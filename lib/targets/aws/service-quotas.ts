// One Service Quotas read, behind a function so that preflight does not depend on how it is made:
// `GetServiceQuota` (the applied value), falling back to `GetAWSDefaultServiceQuota` when the applied
// value is not available (NoSuchResourceException: the API reference says some quotas have only their
// default). The client package `@aws-sdk/client-service-quotas` is loaded when the first call is made:
// without it the call fails naming the package to add, so the vCPU check refuses instead of passing
// unchecked. Under the emulator with RIG_AWS_REPLAY (replay.ts) the answer comes from
// `GetServiceQuota.json` there: moto 5.2.5 models only VPC's quotas, not EC2's.
import { replayDir, replayed } from './replay';

export interface QuotaRequest {
  ServiceCode: string;
  QuotaCode: string;
}
export interface QuotaAnswer {
  value: number;
  name?: string;
  /** 'applied': the account's value (an increase shows here); 'default': AWS's default, no applied value known. */
  kind: 'applied' | 'default';
}
export type ServiceQuotaFn = (req: QuotaRequest) => Promise<QuotaAnswer>;

interface QuotaOutput {
  Quota?: { Value?: number; QuotaName?: string };
}
interface SqModule {
  ServiceQuotasClient: new (config: object) => { send(cmd: unknown): Promise<QuotaOutput>; destroy(): void };
  GetServiceQuotaCommand: new (input: QuotaRequest) => unknown;
  GetAWSDefaultServiceQuotaCommand: new (input: QuotaRequest) => unknown;
}

export const SERVICE_QUOTAS_PACKAGE = '@aws-sdk/client-service-quotas';

function answerOf(out: QuotaOutput, kind: QuotaAnswer['kind'], req: QuotaRequest): QuotaAnswer {
  const value = out.Quota?.Value;
  if (typeof value !== 'number') throw new Error(`Service Quotas answered ${req.ServiceCode}/${req.QuotaCode} without a Quota.Value`);
  return { value, kind, ...(out.Quota?.QuotaName ? { name: out.Quota.QuotaName } : {}) };
}

/** The quota reader for `region`: the replay under the emulator, else the SDK (loaded on first use). */
export function serviceQuotaReader(region: string, config: { endpoint?: string; maxAttempts?: number; credentials?: { accessKeyId: string; secretAccessKey: string } }, env: NodeJS.ProcessEnv = process.env): { read: ServiceQuotaFn; destroy(): void } {
  const dir = replayDir(env);
  if (dir) {
    return {
      read: async (req) => {
        const hit = replayed(dir, 'GetServiceQuota', { ...req });
        if (!hit) throw new Error(`${dir}/GetServiceQuota.json is missing: the emulator has no EC2 quotas to answer ${req.ServiceCode}/${req.QuotaCode}`);
        return answerOf(hit.output, 'applied', req);
      },
      destroy() {},
    };
  }
  let client: InstanceType<SqModule['ServiceQuotasClient']> | undefined;
  return {
    read: async (req) => {
      let sq: SqModule;
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        sq = require(SERVICE_QUOTAS_PACKAGE) as SqModule;
      } catch {
        throw new Error(`the vCPU quota check needs the npm package ${SERVICE_QUOTAS_PACKAGE}, which is not installed: add it to package.json's dependencies and run npm ci`);
      }
      client ??= new sq.ServiceQuotasClient({ region, ...config });
      try {
        return answerOf(await client.send(new sq.GetServiceQuotaCommand(req)), 'applied', req);
      } catch (err) {
        if (!(err instanceof Error && err.name === 'NoSuchResourceException')) throw err;
        return answerOf(await client.send(new sq.GetAWSDefaultServiceQuotaCommand(req)), 'default', req);
      }
    },
    destroy() {
      client?.destroy();
    },
  };
}

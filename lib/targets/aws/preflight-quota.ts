// Preflight: the account's On-Demand vCPU quota in the region holds every node: the app node and each
// load node (load.nodes of them, issue 37: a quota too small for them is refused naming load.nodes).
// EC2 limits running On-Demand instances by vCPUs per family group; the app and load nodes' families
// (c, m, r, t, ...) count against "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances",
// Service Quotas code ec2 / L-1216C47A (EC2 User Guide, "On-Demand Instance quotas"). The vCPUs of a
// type are DescribeInstanceTypes' VCpuInfo.DefaultVCpus. The quota's value is compared with what the
// nodes need; instances already running in the account count against it too, which this does not read (it
// would need CloudWatch's usage metric), so the verdict says so. A new account's quota can be as low as 5.
import { DescribeInstanceTypesCommand, type EC2Client, type _InstanceType } from '@aws-sdk/client-ec2';
import type { AwsSpec } from '../../protocol/aws-spec';
import { couldNotLook, pass, refuse, type Verdict } from './preflight-verdict';
import type { ServiceQuotaFn } from './service-quotas';

export const STANDARD_ON_DEMAND_QUOTA = { ServiceCode: 'ec2', QuotaCode: 'L-1216C47A' } as const;
const CHECK = 'vcpu-quota';

/** Whether a type counts against the Standard quota: families A, C, D, H, I, M, R, T, Z (not Inf, DL, Trn, HPC, Mac, u-). */
export function isStandardFamily(instanceType: string): boolean {
  const family = /^[a-z]+/.exec(instanceType)?.[0] ?? '';
  return /^[acdhimrtz]/.test(family) && !['inf', 'dl', 'trn', 'hpc', 'mac'].includes(family);
}

/** One kind of node the rig launches: `count` instances of `type`. */
export interface QuotaNodes {
  node: 'app' | 'load';
  type: string;
  count: number;
}

/** The rig's nodes for the quota: the app node and `loadNodes` load nodes (load.nodes, issue 37). Pure. */
export function quotaNodes(aws: AwsSpec, loadNodes = 1): QuotaNodes[] {
  return [
    { node: 'app', type: aws.app.instanceType, count: 1 },
    { node: 'load', type: aws.load.instanceType, count: loadNodes },
  ];
}

/** The vCPUs `nodes` need (each type's DefaultVCpus times its count) and the sum as words ("app c7g.2xlarge 8 + 3 load nodes c7g.2xlarge 8 each"). Pure. */
export function vcpuNeed(nodes: readonly QuotaNodes[], vcpus: ReadonlyMap<string, number>): { need: number; parts: string } {
  const need = nodes.reduce((s, n) => s + n.count * vcpus.get(n.type)!, 0);
  const parts = nodes.map((n) => (n.count === 1 ? `${n.node} ${n.type} ${vcpus.get(n.type)}` : `${n.count} ${n.node} nodes ${n.type} ${vcpus.get(n.type)} each`)).join(' + ');
  return { need, parts };
}

export async function checkVcpuQuota(ec2: EC2Client, readQuota: ServiceQuotaFn, aws: AwsSpec, loadNodes = 1): Promise<Verdict> {
  const nodes = quotaNodes(aws, loadNodes);
  const other = nodes.filter((n) => !isStandardFamily(n.type));
  let vcpus: Map<string, number>;
  try {
    const r = await ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: [...new Set(nodes.map((n) => n.type))] as _InstanceType[] }));
    vcpus = new Map((r.InstanceTypes ?? []).map((t) => [t.InstanceType ?? '', t.VCpuInfo?.DefaultVCpus ?? 0]));
  } catch (err) {
    return couldNotLook(CHECK, 'ec2:DescribeInstanceTypes', err);
  }
  const unknown = nodes.filter((n) => !vcpus.get(n.type));
  if (unknown.length) return refuse(CHECK, `DescribeInstanceTypes gives no vCPU count for ${unknown.map((n) => n.type).join(', ')}`, 'set aws.app/load.instanceType to EC2 types of this region');
  const standard = nodes.filter((n) => isStandardFamily(n.type));
  if (standard.length === 0) return pass(CHECK, `not checked: ${other.map((n) => n.type).join(' and ')} count against another On-Demand quota than Standard (see Service Quotas, EC2)`);
  const { need, parts } = vcpuNeed(standard, vcpus);
  let quota;
  try {
    quota = await readQuota({ ...STANDARD_ON_DEMAND_QUOTA });
  } catch (err) {
    return couldNotLook(CHECK, 'servicequotas:GetServiceQuota', err);
  }
  const name = `Running On-Demand Standard instances (${STANDARD_ON_DEMAND_QUOTA.QuotaCode}) in ${aws.region}`;
  const otherNote = other.length ? `; ${other.map((n) => n.type).join(', ')} counts against another quota, not checked` : '';
  if (quota.value < need) {
    return refuse(
      CHECK,
      `${name} is ${quota.value} vCPUs${quota.kind === 'default' ? ' (AWS\'s default)' : ''}; the nodes need ${need} (${parts})${otherNote}`,
      `ask for at least ${need} plus what already runs: aws service-quotas request-service-quota-increase --region ${aws.region} --service-code ec2 --quota-code ${STANDARD_ON_DEMAND_QUOTA.QuotaCode} --desired-value ${need}, or smaller aws.app/load.instanceType${loadNodes > 1 ? `, or fewer load.nodes (${loadNodes} asked: ${loadNodes} load nodes of ${aws.load.instanceType})` : ''}`,
    );
  }
  return pass(CHECK, `${name} is ${quota.value} vCPUs${quota.kind === 'default' ? ' (AWS\'s default)' : ''}, the nodes need ${need} (${parts}); instances already running count against it too${otherNote}`);
}

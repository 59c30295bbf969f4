// What an AWS campaign would make, before it makes anything: each resource with the name it will
// carry, in the order provisioning creates them (teardown goes the other way). Pure, no SDK, no
// network: `rig campaign start SPEC --dry-run` prints it, and provision.ts creates exactly these.
import type { AwsSpec } from '../../protocol/aws-spec';
import type { CampaignSpec } from '../../protocol/spec';
import { rigSecretName } from './secrets';
import { awsAppQueue, awsDataQueue, awsLoadNodeQueue } from '../../temporal/queues';
import { CAMPAIGN_TAG, EXPIRES_TAG, IAM_PATH, rigNames, type RigResourceKind } from './names';
import { parameterGroupFamily, rdsParameters } from './parameters';
import { engineLifecycleSupport } from '../../protocol/rds-lifecycle';

/** Enhanced Monitoring's interval, seconds: the finest RDS offers, for the per-repeat OS figures. */
export const MONITORING_INTERVAL_S = 1;
/** PostgreSQL's port: the only one the database's security group opens, to the nodes' group only. */
export const POSTGRES_PORT = 5432;

export interface PlannedResource {
  kind: RigResourceKind;
  /** What it is, for one column. */
  type: string;
  name: string;
  detail: string;
}

/** `loadNodes` (load.nodes, issue 37): the load nodes beyond the rig's own, launched after it, each on its own queue. */
export function awsPlan(campaignId: string, spec: Pick<CampaignSpec, 'database'> & { aws: AwsSpec }, loadNodes = 1): PlannedResource[] {
  const n = rigNames(campaignId);
  const { aws } = spec;
  const s = aws.database.storage;
  const params = rdsParameters(spec.database)
    .map((p) => `${p.name}=${p.value}`)
    .join(', ');
  return [
    { kind: 'nodes-security-group', type: 'security group', name: n.nodesSecurityGroup, detail: 'the app and load nodes (default VPC)' },
    { kind: 'db-security-group', type: 'security group', name: n.dbSecurityGroup, detail: `PostgreSQL ${POSTGRES_PORT} from ${n.nodesSecurityGroup} only` },
    { kind: 'db-parameter-group', type: 'DB parameter group', name: n.dbParameterGroup, detail: `family ${parameterGroupFamily(aws.database.engineVersion)} (expected; provisioning takes RDS's from the preflight): sends ${params} (RDS units: the spec's database block and the marker logging; everything else the family's defaults)` },
    { kind: 'rig-secret', type: 'secret', name: rigSecretName(campaignId), detail: 'the database roles\' passwords and the fixtures\' API key (made here, read on the nodes)' },
    { kind: 'monitoring-role', type: 'IAM role', name: `${IAM_PATH}${n.monitoringRole}`, detail: 'RDS Enhanced Monitoring (AmazonRDSEnhancedMonitoringRole)' },
    {
      kind: 'db-instance',
      type: 'RDS instance',
      name: n.dbInstance,
      detail: `${aws.database.instanceClass}, PostgreSQL ${aws.database.engineVersion}${aws.database.engineVersion.includes('.') ? '' : ' (its default minor, resolved by the preflight)'}, EngineLifecycleSupport ${engineLifecycleSupport(aws.database.extendedSupport)}, backups off, no auto minor upgrade, windows after the plan, gp3 ${s.sizeGb} GB ${s.iops} IOPS ${s.throughputMiBps} MiB/s, single-AZ in ${aws.zone}, not publicly accessible, Enhanced Monitoring 1 s, Performance Insights 7 days`,
    },
    { kind: 'node-role', type: 'IAM role', name: `${IAM_PATH}${n.nodeRole}`, detail: 'the nodes: read the package and three secrets, keep the API key, read their own database and its metrics, ship their evidence to the bucket' },
    { kind: 'artifacts-bucket', type: 'S3 bucket', name: n.artifactsBucket('<account>'), detail: 'the package the nodes run (npm pack + package-lock.json, keyed by sha256) and the evidence they ship (evidence/<campaign>/)' },
    { kind: 'temporal-secret', type: 'secret', name: n.temporalSecret, detail: 'the nodes\' Temporal connection (this machine\'s TEMPORAL_* settings)' },
    { kind: 'node-instance-profile', type: 'instance profile', name: `${IAM_PATH}${n.nodeInstanceProfile}`, detail: `carries ${n.nodeRole}` },
    { kind: 'app-node', type: 'EC2 instance', name: n.appNode, detail: `${aws.app.instanceType} in ${aws.zone} (ClientToken ${n.appClientToken}-<secret suffix>), worker on ${awsAppQueue(campaignId)}` },
    { kind: 'load-node', type: 'EC2 instance', name: n.loadNode, detail: `${aws.load.instanceType} in ${aws.zone} (ClientToken ${n.loadClientToken}-<secret suffix>), worker on ${awsDataQueue(campaignId)}${loadNodes > 1 ? `, load node 0 of ${loadNodes}` : ''}` },
    ...Array.from({ length: Math.max(0, loadNodes - 1) }, (_, k): PlannedResource => {
      const node = k + 1;
      const x = n.extraLoadNode(node);
      return { kind: 'load-node', type: 'EC2 instance', name: x.name, detail: `${aws.load.instanceType} in ${aws.zone} (ClientToken ${x.clientToken}-<secret suffix>), worker on ${awsLoadNodeQueue(campaignId, node)}, load node ${node} of ${loadNodes}` };
    }),
  ];
}

/** The tags every resource carries, as one line. */
export function tagLine(campaignId: string): string {
  return `${CAMPAIGN_TAG}=${campaignId}, ${EXPIRES_TAG}=<provisioning time + watchdogMinutes>, Name=<its name>`;
}

// Every name an AWS rig's resources carry, derived from the campaign id alone, so that a retried
// provision, teardown, the watchdog and `rig check` all find the same things without a ledger to
// read. RDS identifiers allow letters, digits and single hyphens (63 characters, a letter first);
// a campaign id allows more, so it is slugged and shortened, and a hash of the full id keeps two
// campaigns whose slugs collide apart. The tags are how everything is looked up; the names are for
// RDS (whose instance identifier is its key) and for a human reading the console.
import { campaignSlug } from '../../protocol/campaign-id';
import { createHash } from 'node:crypto';

/** The tag every resource of a rig carries: its campaign id, verbatim. */
export const CAMPAIGN_TAG = 'rig:campaign';
/** When the resource may be reaped: the watchdog's deadline at provisioning, ISO 8601. */
export const EXPIRES_TAG = 'rig:expires';
/** When the resource was made, ISO 8601 (for those whose service keeps no creation time). */
export const CREATED_TAG = 'rig:created';
/** Which of the rig's resources this is (RigResourceKind). */
export const RESOURCE_TAG = 'rig:resource';
/**
 * On a load node beyond the rig's own (issue 37, `load.nodes` > 1): its node number, 1..N-1. The load
 * node without it is node 0, the data plane's. The kind stays `load-node`, so teardown, the reaper, the
 * re-tag and the clean check take every one of them as they take that one.
 */
export const LOAD_NODE_TAG = 'rig:load-node';

// db-subnet-group: not made yet (the default VPC's default subnet group serves the first slice), but
// the reaper removes one that carries the rig's tags, so a later slice that makes one is covered.
export const RIG_RESOURCE_KINDS = [
  'nodes-security-group',
  'db-security-group',
  'db-parameter-group',
  'db-subnet-group',
  'db-instance',
  'app-node',
  'load-node',
  // What the nodes boot with (bootstrap.ts): the package they run, the Temporal connection, the role
  // that reads both, and the role RDS's Enhanced Monitoring publishes through.
  'artifacts-bucket',
  'temporal-secret',
  'node-role',
  'node-instance-profile',
  'monitoring-role',
  // The database role passwords and the fixtures' API key (secrets.ts).
  'rig-secret',
] as const;
export type RigResourceKind = (typeof RIG_RESOURCE_KINDS)[number];

export interface RigNames {
  /** The RDS instance identifier (its key: DBInstanceAlreadyExists on a second create). */
  dbInstance: string;
  dbParameterGroup: string;
  dbSecurityGroup: string;
  nodesSecurityGroup: string;
  appNode: string;
  loadNode: string;
  /** EC2 RunInstances idempotency tokens (64 ASCII characters at most). */
  appClientToken: string;
  loadClientToken: string;
  /** Load node `node` (1..N-1) beyond the data plane's: its Name and its RunInstances token, each its own. */
  extraLoadNode(node: number): { name: string; clientToken: string };
  /** Secrets Manager name of the Temporal connection the nodes' workers use. */
  temporalSecret: string;
  /** IAM role and instance profile of the app and load nodes (64 characters at most). */
  nodeRole: string;
  nodeInstanceProfile: string;
  /** IAM role Enhanced Monitoring publishes OS metrics through. */
  monitoringRole: string;
  /** The artifacts bucket's name in an account (bucket names are global: the account keeps two apart). */
  artifactsBucket(accountId: string): string;
}

/**
 * Every rig IAM role and instance profile lives under this path: IAM is global and has no tag filter
 * on its listings, so the finder lists this path and reads each one's tags.
 */
export const IAM_PATH = '/rig/';

export function rigNames(campaignId: string): RigNames {
  const hash = createHash('sha256').update(campaignId).digest('hex').slice(0, 8);
  const slug = campaignSlug(campaignId);
  const base = `rig-${slug ? `${slug}-` : ''}${hash}`;
  return {
    dbInstance: base,
    dbParameterGroup: `${base}-pg`,
    dbSecurityGroup: `${base}-db`,
    nodesSecurityGroup: `${base}-nodes`,
    appNode: `${base}-app`,
    loadNode: `${base}-load`,
    appClientToken: `rig-${hash}-app`,
    loadClientToken: `rig-${hash}-load`,
    extraLoadNode: (node) => ({ name: `${base}-load-n${node}`, clientToken: `rig-${hash}-load-n${node}` }),
    temporalSecret: `rig/${base.slice(4)}/temporal`,
    nodeRole: `${base}-node`,
    nodeInstanceProfile: `${base}-node`,
    monitoringRole: `${base}-rdsmon`,
    // 3-63 characters, lowercase, digits and hyphens: 4 + 25 + 1 + 8 + 1 + 12 = 51 at most.
    artifactsBucket: (accountId) => `rig-${slug.slice(0, 25).replace(/-+$/, '')}${slug ? '-' : ''}${hash}-${accountId}`,
  };
}

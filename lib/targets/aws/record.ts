// <state>/aws-rigs/<campaign>.json: what provisioning made on AWS, for the steps that must answer
// without a call (describe, hardware, connection). No secret: the master password stays in Secrets
// Manager (RDS manages it), and so does the nodes' Temporal connection (only its ARN is here). The tags, not this file, are the truth for teardown and the clean check:
// a deleted record loses nothing there.
import fs from 'node:fs';
import path from 'node:path';
import { stateDir } from '../../tools/paths';
import type { LoadNodeRelaunch } from '../../protocol/load-node-relaunch';
import type { NodeBootstrap } from './bootstrap';
import type { RigResourceKind } from './names';
import type { NodeArchitecture, NodeImage } from './node-image';

export interface AwsRigRecord {
  campaignId: string;
  region: string;
  zone: string;
  createdAt: string;
  resources: Partial<Record<RigResourceKind, string>>;
  dbEndpoint: string;
  appAddress: string;
  loadAddress: string;
  hardwareLine: string;
  /** How the database was set up for measuring, as RDS reports it (provision.ts rdsSettingsLine). */
  rdsSettings?: string;
  costPerHour: number | undefined;
  /** The source of costPerHour (the price table with its date, the spec's overrides). */
  priceSource?: string;
  /** campaign-cost.ts's lines (the IPv4 addresses, Enhanced Monitoring, the plan, the worst case, RDS's minimum). */
  costLines?: string[];
  parameters: Record<string, string>;
  /** What the nodes were given: bucket, package keys, Temporal secret ARN, instance profile, queues. */
  bootstrap?: NodeBootstrap;
  /** The campaign's load nodes when more than the rig's own (load.nodes, issue 37): launched, billed and counted against the quota. */
  loadNodes?: number;
  /** The nodes' AMI per architecture, resolved once per campaign (node-image.ts): every later launch attempt reuses it. */
  nodeImages?: Partial<Record<NodeArchitecture, NodeImage>>;
  /** What a load node's launch sends besides the above, kept so that a lost one can be launched again as provisioning launched it (relaunch.ts). */
  loadLaunch?: LoadLaunch;
  /**
   * The load nodes launched again in a lost one's place (relaunch.ts), each written here BEFORE its
   * RunInstances with its own ClientToken: a retry after a crash sends the same token. Provisioning
   * keeps them when it writes the record again.
   */
  relaunches?: LoadNodeRelaunch[];
}

export interface LoadLaunch {
  instanceType: string;
  rootVolumeGb: number;
  /** The provisioning's ClientToken suffix (provision.ts tokenSuffix): a relaunch's token carries it too. */
  tokenSuffix: string;
}

export function awsRecordFile(campaignId: string): string {
  return path.join(stateDir(), 'aws-rigs', `${campaignId}.json`);
}

export function readAwsRecord(campaignId: string): AwsRigRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(awsRecordFile(campaignId), 'utf8')) as AwsRigRecord;
  } catch {
    return undefined;
  }
}

export function writeAwsRecord(rec: AwsRigRecord): void {
  const file = awsRecordFile(rec.campaignId);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(rec, null, 2) + '\n');
  fs.renameSync(tmp, file);
}

export function removeAwsRecord(campaignId: string): void {
  fs.rmSync(awsRecordFile(campaignId), { force: true });
}

// <rig>/rig.json: the non-secret description of a local rig. Written when provisioning completes
// (`complete: true`); a rig folder without a complete record is a half-made rig, which provision removes
// and makes again rather than trusting (in RDS-fidelity mode a record written, not complete, means the
// database was prepared: provision resumes from it, provision.ts resumePrepared).
import fs from 'node:fs';
import type { RigParameters } from '../target';
import { rigPaths } from './rig-paths';

export interface RigRecord {
  campaignId: string;
  createdAt: string;
  complete: boolean;
  params: RigParameters;
  /** The postgresql.conf settings the rig applied (campaign parameters plus the logging it always sets). */
  postgresParameters: Record<string, string | number | boolean>;
  cluster: {
    dir: string;
    dataDir: string;
    host: string;
    port: number;
    binDir: string;
    logFile: string;
    superuser: string;
    /** RDS-fidelity mode (spec local.rdsFidelity): the non-superuser admin the rig works as, and the CA clients verify against. */
    admin?: string;
    tls?: { caFile: string };
  };
  database: string;
  ownerRole: string;
  appRole: string;
  service?: { resourceId: string; pid: number; port: number; url: string; logFile: string; pidFile: string };
}

export function readRigRecord(campaignId: string): RigRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(rigPaths(campaignId).rigFile, 'utf8')) as RigRecord;
  } catch {
    return undefined;
  }
}

export function writeRigRecord(rec: RigRecord): void {
  const file = rigPaths(rec.campaignId).rigFile;
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(rec, null, 2) + '\n');
  fs.renameSync(tmp, file);
}

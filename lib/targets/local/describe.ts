// What a provisioned local rig is, for the campaign's handle and the report: its service URL, database,
// cluster folder and applied parameters (from rig.json), and the hardware line, which on this machine
// is the spec's description plus what the OS says of its CPUs and memory. The price is the spec's:
// a machine of one's own has no list price.
import os from 'node:os';
import type { Hardware, RigDescription } from '../target';
import { completeRecord, connectionFromRecord } from './connection';
import { readRigRecord } from './rig-record';

export function describeLocal(campaignId: string): RigDescription {
  const conn = connectionFromRecord(completeRecord(campaignId));
  const rec = readRigRecord(campaignId);
  return {
    serviceUrl: conn.serviceUrl,
    database: `${conn.db.host}:${conn.db.port}/${conn.db.database}`,
    rigDir: rec?.cluster.dir ?? '',
    parameters: rec?.postgresParameters ?? {},
  };
}

export function hardwareLocal(declared: { description: string; costPerHour: number }): Hardware {
  const cpus = os.cpus();
  return {
    line: `${declared.description} (${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, local PostgreSQL cluster)`,
    costPerHour: declared.costPerHour,
  };
}

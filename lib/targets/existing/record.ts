// The record of a connected existing deployment: what `connect` found, kept so that every later step
// (describe, the database URLs, the hardware line) answers from it without the spec. Secret-free: the
// URLs' sources are a variable's name or a file's path, and the database is host:port/name and a role.
import fs from 'node:fs';
import type { SecretSource } from '../../protocol/existing-spec';
import { writeAtomic } from '../../evidence/atomic';
import { existingPaths } from './paths';

export interface ExistingRecord {
  campaignId: string;
  serviceUrl: string;
  databaseUrlFrom: SecretSource;
  appDatabaseUrlFrom?: SecretSource;
  /** From the owner URL, without its password. */
  database: { host: string; port: number; name: string; ownerRole: string; appRole: string };
  /** The server's version and the spec's parameters as the server runs them (read, never set). */
  serverVersion: string;
  parameters: Record<string, string>;
  connectedAt: string;
}

export function writeExistingRecord(rec: ExistingRecord): void {
  const p = existingPaths(rec.campaignId);
  fs.mkdirSync(p.dir, { recursive: true, mode: 0o700 });
  writeAtomic(p.recordFile, JSON.stringify(rec, null, 2) + '\n');
}

export function readExistingRecord(campaignId: string): ExistingRecord | undefined {
  const file = existingPaths(campaignId).recordFile;
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as ExistingRecord;
}

/** The record, or an error that says to connect first. */
export function connectedRecord(campaignId: string): ExistingRecord {
  const rec = readExistingRecord(campaignId);
  if (!rec) throw new Error(`campaign ${campaignId} has not connected to its existing deployment (${existingPaths(campaignId).recordFile}): run provision (connect) first`);
  return rec;
}

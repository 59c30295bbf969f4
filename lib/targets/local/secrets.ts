// The rig's secrets: generated here, kept in <rig>/secrets.json (mode 0600, never in the ledger, the
// rig description, a provision result or a command line). Callers that need a password ask for a
// connection URL (connection.ts) inside the process that uses it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { rigPaths } from './rig-paths';

export interface RigSecrets {
  superuserPassword: string;
  ownerPassword: string;
  appPassword: string;
  /** RDS-fidelity mode: the non-superuser admin's (the rig's stand-in for RDS's master user). */
  adminPassword?: string;
  /** The fixtures' raw API key, once bring-up has made it (storeApiKey). */
  apiKey?: string;
}

export function generatePassword(): string {
  // URL-safe, so it can sit in a libpq URL without escaping surprises.
  return crypto.randomBytes(24).toString('base64url');
}

export function newSecrets(): RigSecrets {
  return { superuserPassword: generatePassword(), ownerPassword: generatePassword(), appPassword: generatePassword(), adminPassword: generatePassword() };
}

/** Write (or replace) the secrets file atomically with mode 0600. */
export function writeSecrets(campaignId: string, secrets: RigSecrets): void {
  const file = rigPaths(campaignId).secretsFile;
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 });
  fs.chmodSync(tmp, 0o600); // the umask cannot widen it, but an existing tmp could have other bits
  fs.renameSync(tmp, file);
}

export function readSecrets(campaignId: string): RigSecrets {
  const file = rigPaths(campaignId).secretsFile;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`secrets of rig ${campaignId} unreadable (${file}): ${(err as Error).message}. Provision the rig first`);
  }
  const mode = fs.statSync(file).mode & 0o777;
  if (mode & 0o077) throw new Error(`${file} has mode ${mode.toString(8)}: secrets must be 0600 (chmod 600 it)`);
  const s = JSON.parse(text) as RigSecrets;
  for (const k of ['superuserPassword', 'ownerPassword', 'appPassword'] as const) {
    if (typeof s[k] !== 'string' || !s[k]) throw new Error(`${file}: field ${k} is missing`);
  }
  return s;
}

/** Keep the fixtures' raw API key beside the passwords (bring-up calls this; the load generator reads it). */
export function storeApiKey(campaignId: string, apiKey: string): void {
  writeSecrets(campaignId, { ...readSecrets(campaignId), apiKey });
}

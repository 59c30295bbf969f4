// Where a local rig keeps its things. One folder per campaign under <state>/rigs/, one ledger per
// campaign under <state>/ledger/. The campaign id becomes a folder name, so it is checked here once.
import path from 'node:path';
import { stateDir } from '../../tools/paths';

const CAMPAIGN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;

/** Throws unless the id is usable as a folder name (letters, digits, . _ -, at most 80). */
export function assertCampaignId(campaignId: string): void {
  if (!CAMPAIGN_ID.test(campaignId) || campaignId.includes('..')) {
    throw new Error(
      `campaign id '${campaignId}' is not usable: use 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  }
}

export function rigsDir(): string {
  return path.join(stateDir(), 'rigs');
}

export function ledgerDir(): string {
  return path.join(stateDir(), 'ledger');
}

/** Ledgers whose every resource was removed are moved here: the history of what a campaign made. */
export function closedLedgerDir(): string {
  return path.join(ledgerDir(), 'closed');
}

export interface RigPaths {
  /** The rig folder: everything a local rig makes lives under it. */
  dir: string;
  /** The default PostgreSQL cluster folder (data/, postgres.log, socket, cluster.json), owned by the DB's OS user; pg-data-root.ts places it elsewhere when that user cannot reach the rig folder, and the rig record says where it is. */
  clusterDir: string;
  /** Non-secret description of the rig (ports, URLs without passwords, parameters). */
  rigFile: string;
  /** DB passwords and the API key, mode 0600. */
  secretsFile: string;
  /** The reference service's stdout and stderr. */
  serviceLog: string;
  serviceLogFor(resourceId: string): string;
  servicePidFile: string;
  /** Scratch files for pgbench scripts (readable by the DB's OS user). */
  scratchDir: string;
  ledgerFile: string;
  lockFile: string;
}

export function rigPaths(campaignId: string): RigPaths {
  assertCampaignId(campaignId);
  const dir = path.join(rigsDir(), campaignId);
  return {
    dir,
    clusterDir: path.join(dir, 'pg'),
    rigFile: path.join(dir, 'rig.json'),
    secretsFile: path.join(dir, 'secrets.json'),
    serviceLog: path.join(dir, 'service.log'),
    serviceLogFor: (resourceId: string) => path.join(dir, `${resourceId}.log`),
    servicePidFile: path.join(dir, 'service.pid'),
    scratchDir: path.join(dir, 'scratch'),
    ledgerFile: path.join(ledgerDir(), `${campaignId}.jsonl`),
    lockFile: path.join(ledgerDir(), `${campaignId}.lock`),
  };
}

/** The environment variables that mark a process as made by a local rig (see proc.ts). */
export const MARKER_CAMPAIGN = 'RIG_LOCAL_CAMPAIGN';
export const MARKER_RESOURCE = 'RIG_LOCAL_RESOURCE';
export const MARKER_RIG_DIR = 'RIG_LOCAL_RIG_DIR';

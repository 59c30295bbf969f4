// One interface for every place a rig can live: the local target (a PostgreSQL cluster the rig makes,
// plus the reference service) and, later, AWS (RDS + EC2). The campaign calls these four; what a target
// makes is recorded against the campaign id before it is made, so teardown and the clean check never guess.

/** PostgreSQL settings a campaign chooses (the spec's "WAL pool sized", the vacuum lever, ...). */
export interface DbParameters {
  shared_buffers?: string;
  min_wal_size?: string;
  max_wal_size?: string;
  autovacuum_vacuum_insert_scale_factor?: number;
  wal_compression?: string;
  /** Anything else, passed through to postgresql.conf (e.g. autovacuum_naptime for short tests). */
  extra?: Record<string, string | number | boolean>;
}

/** How the service under test is configured (the reference service's HC_* settings). */
export interface ServiceParameters {
  poolSize?: number;
  /** 'per-minute' is the #818 fix; 'every-request' reproduces the hot row. */
  lastUsed?: 'per-minute' | 'every-request';
  /** 'per-event' is one INSERT per event (Hardcount as measured); 'multi-row' is the #823 lever. */
  insert?: 'per-event' | 'multi-row';
  aggregate?: 'scan' | 'rollup';
}

export interface RigParameters {
  db?: DbParameters;
  service?: ServiceParameters;
}

/** How to reach a rig, without any secret: URLs here carry no password. */
export interface RigConnection {
  campaignId: string;
  target: string;
  /** The service's base URL, e.g. http://127.0.0.1:41234 */
  serviceUrl: string;
  db: {
    host: string;
    port: number;
    database: string;
    superuser: string;
    ownerRole: string;
    appRole: string;
    /** postgres://hardcount_owner@127.0.0.1:PORT/hardcount (no password) */
    ownerUrl: string;
    appUrl: string;
  };
  /** Where the target keeps files a human may want: the Postgres log, the service log, the secrets file. */
  files: Record<string, string>;
}

export interface ProvisionResult extends RigConnection {
  /** True when a live rig for this campaign was found and reused instead of made. */
  reused: boolean;
}

export interface TeardownResult {
  campaignId: string;
  /** What was removed (ledger resource ids with a word on each). */
  removed: string[];
  /** Resources the ledger listed that were already gone. */
  alreadyGone: string[];
  /** Logs copied out of the rig before it was removed (the Postgres log, the service logs). */
  keptLogs?: string[];
}

export type LeftoverKind = 'ledger-entry' | 'postmaster' | 'service' | 'rig-folder' | 'listening-port' | 'process';

export interface Leftover {
  kind: LeftoverKind;
  /** The campaign it belongs to, when known. */
  campaignId?: string;
  /** Seconds since it was made (ledger time, or process start). */
  ageSeconds?: number;
  /** One line: what it is and where (pid, path, port). */
  detail: string;
}

export type CleanCheckResult =
  | { status: 'clean'; looked: string[] }
  | { status: 'dirty'; leftovers: Leftover[]; looked: string[] }
  | { status: 'could-not-look'; reason: string; leftovers: Leftover[] };

/** Progress for long operations (activities heartbeat with it; the CLI prints it). */
export type ProgressFn = (message: string) => void;

export interface Target {
  readonly name: string;
  provision(campaignId: string, params: RigParameters, onProgress?: ProgressFn): Promise<ProvisionResult>;
  teardown(campaignId: string, onProgress?: ProgressFn): Promise<TeardownResult>;
  cleanCheck(): Promise<CleanCheckResult>;
  /** How to reach a provisioned rig; throws when there is none. */
  connection(campaignId: string): Promise<RigConnection>;
}

/** Exit code of `rig check`: 0 clean, 1 dirty, 2 could not look. */
export function cleanCheckExitCode(r: CleanCheckResult): 0 | 1 | 2 {
  return r.status === 'clean' ? 0 : r.status === 'dirty' ? 1 : 2;
}

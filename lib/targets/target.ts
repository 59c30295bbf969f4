// One interface for every place a rig can live: the local target (a PostgreSQL cluster the rig makes,
// plus the reference service) and, later, AWS (RDS + EC2). It is the only door to a rig: activities
// get their targets from lib/targets/registry.ts through createActivities (activities/factory.ts) and
// never import a target's folder. Besides make, find and remove, a target answers what the steps
// need of it: the database URLs with the passwords from its own secret store, the API key store, the
// Postgres log of a repeat's window, the hardware line and its price, the data-plane queue, a pgbench
// runner beside the database, the availability zones bring-up compares, and the leftover kinds its
// clean check reports. What a target makes is recorded against the campaign id before it is made, so
// teardown and the clean check never guess.
import type { CloudFileName } from '../evidence/layout';
import type { LoadNodeHandle } from '../protocol/load-nodes';
import type { AwsSpec } from '../protocol/aws-spec';
import type { ExistingSpec } from '../protocol/existing-spec';
import type { LocalSpec } from '../protocol/local-spec';
import type { ServiceRunSpec } from '../protocol/service-spec';
import type { TargetName } from '../protocol/spec';

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

/**
 * How the service under test is started (lib/protocol/service-spec.ts serviceLaunch): the reference
 * service's switches (HC_*), the settings env, and `run`, the build when it is not the reference service.
 */
export interface ServiceParameters {
  poolSize?: number;
  /** 'per-minute' is the #818 fix; 'every-request' reproduces the hot row. */
  lastUsed?: 'per-minute' | 'every-request';
  /** 'per-event' is one INSERT per event (Hardcount as measured); 'multi-row' is the #823 lever. */
  insert?: 'per-event' | 'multi-row';
  aggregate?: 'scan' | 'rollup';
  /** The service's own settings, each passed as an environment variable (after the switches' HC_*: an entry wins). */
  env?: Record<string, string>;
  /** Absent: the reference service. A command (local) or an image (aws app node) that starts the user's build. */
  run?: ServiceRunSpec;
}

/** A variant's settings as they took effect on a live rig, read back (Target.applySettings). */
export interface AppliedSettings {
  /** Each parameter as the server reports it (pg_settings' value and unit). */
  database: Record<string, string>;
  /** The service's switches as its /healthz reports them. */
  service: Record<string, string | undefined>;
  /** What was restarted to get there: the parameters that needed the database restarted, and the service. */
  restarted: { database: string[]; service: boolean };
  /** The service's URL now (a restarted service may listen elsewhere). */
  serviceUrl: string;
}

export interface RigParameters {
  db?: DbParameters;
  service?: ServiceParameters;
  /** The AWS target's: the spec's aws block and when the rig expires (the expiry tag); the local target ignores it. */
  /** lifetimeMinutes: the spec's watchdogMinutes, each node's own deadline until it reads its rig:expires tag (lib/targets/aws/user-data.ts). */
  /** waitForDatabase false: provision returns once everything is made and launched; Target.awaitDatabase waits for the database. */
  aws?: { spec: AwsSpec; expiresAt: string; lifetimeMinutes?: number; planMinutes?: number; /** The plan's expected minutes from provisioning on (the cost's "expected"). */ expectedMinutes?: number; waitForDatabase?: boolean; /** The plan's evidence at the most (lib/protocol/evidence-size.ts): the nodes' root volumes are sized for it. */ evidenceBytes?: number; /** The campaign's load nodes (lib/protocol/load-nodes.ts campaignLoadNodes), given only above 1: the load node and loadNodes - 1 more of its type are launched, billed and counted against the quota. */ loadNodes?: number };
  /** The local target's: the spec's `local` block (rdsFidelity: a cluster that refuses what RDS refuses). */
  local?: LocalSpec;
  /** The existing target's: the service's URL and where the database's URLs are read (connect makes nothing). */
  existing?: ExistingSpec;
  /** Builds the campaign's variants will start (`variants.*.service.run`), by spec field: checked before anything is made. */
  variantRuns?: Array<{ field: string; run: ServiceRunSpec }>;
}

/** How to reach a rig, without any secret: URLs here carry no password. */
export interface RigConnection {
  campaignId: string;
  target: TargetName;
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

/** What a clean check can find; each target lists its own (Target.leftoverKinds). */
export type LeftoverKind = string;

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

/** What bounds Target.awaitDatabase across attempts: when the step's bound started, and this attempt's cancellation. */
export interface DatabaseWaitBound {
  /** Epoch ms the bound counts from (the activity's first scheduling); now when absent (`rig step`). */
  sinceMs?: number;
  /** Aborted when Temporal gives up on this attempt, so that a stuck attempt stops before a retry waits beside it. */
  signal?: AbortSignal;
}

/** Connection URLs WITH passwords. Keep them in the process that connects: never return them from an activity. */
export interface RigDbUrls {
  /**
   * The rig's admin: a superuser on a plain local cluster; on RDS (and a local cluster in RDS-fidelity
   * mode) the master user, who is NOT one. Each URL carries its TLS settings (sslmode, sslrootcert).
   */
  superuserUrl: string;
  ownerUrl: string;
  appUrl: string;
}

/** The fixtures' raw API key, kept in the target's secret store beside the database passwords. */
export interface ApiKeyStore {
  /** Keep (or replace) the key: bring-up makes a new one on every attempt. */
  store(campaignId: string, apiKey: string): Promise<void>;
  /** The key, or undefined before bring-up made one; throws when the secret store cannot be read. */
  read(campaignId: string): Promise<string | undefined>;
}

/** The Postgres log from the moment the window was opened (a repeat's load start) to its reading. */
export interface PostgresLogWindow {
  /** Everything the server logged in the window ('' when nothing, or no log). */
  read(): Promise<string>;
}

/** Runs pgbench beside the database (locally as the cluster's OS user; on AWS, on the load host). */
export interface PgbenchRunner {
  /** A folder the runner can read script files from. */
  scriptDir(): string;
  run(args: string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string }>;
  cleanup(): void;
}

/** What provisioning made, read from the target's own record (no network, no secret). */
export interface RigDescription {
  /** The service's base URL. */
  serviceUrl: string;
  /** Database host:port/name, for display. */
  database: string;
  /** The folder holding the database's own files, for display ('' where there is none). */
  rigDir: string;
  /** The PostgreSQL parameters the rig applied. */
  parameters: Record<string, string | number | boolean>;
}

/** The hardware line the report names, and its price. */
export interface Hardware {
  line: string;
  costPerHour: number;
  /** Where the $/hour comes from (a price table and its date, the spec's overrides); absent: the spec's hardware block. */
  priceSource?: string;
  /** What the $/hour covers, when it is more than the spec's hardware line says (e.g. "RDS, both nodes and gp3 storage"). */
  priceCovers?: string;
  /** What else the bill holds, one line each (aws: the IPv4 addresses, Enhanced Monitoring, the plan's total, the worst case, RDS's minimum). */
  costNotes?: string[];
}

/**
 * A rig whose database and service are made ready after provisioning, each on its own host (AWS: the
 * database is reachable only from the load node, and the service runs on the app node). Absent where
 * provisioning makes the rig whole (the local target).
 */
export interface RigNodes {
  /** The task queue of the worker on the app node. */
  appQueue(campaignId: string): string;
  /** On the data-plane queue: roles, database and default privileges, then the migrations. Returns a summary. */
  prepareDatabase(campaignId: string, onProgress: ProgressFn): Promise<string>;
  /** On the app queue: the service under test; returns the URL the load node reaches it at. */
  startService(campaignId: string, service: ServiceParameters, onProgress: ProgressFn): Promise<{ serviceUrl: string; reused: boolean }>;
  /** On a node, at the end of every step that wrote evidence there: what changed goes where the control host can fetch it. */
  shipEvidence(campaignId: string, onProgress: ProgressFn): Promise<void>;
  /** On the control host, before the rig (and the shipped evidence with it) is removed, and before the report: the nodes' evidence comes into its results folder. */
  gatherEvidence(campaignId: string, onProgress: ProgressFn): Promise<string>;
  /**
   * On a load node that is not the data plane's (issue 37, `load.nodes` > 1): the fixtures' customers
   * in bring-up's order, which only the data plane's disk holds as a file (aws: read from the database).
   */
  fixtureCustomers?(campaignId: string): Promise<string[]>;
  /**
   * On the data-plane node, before a repeat's node streams are merged: the files `rels` (campaign
   * folder paths) that load node `node` wrote on its own host and shipped, brought into this one's
   * folder. One it never shipped is left missing (the merge refuses it). Returns how many came.
   */
  fetchLoadNodeEvidence?(campaignId: string, node: number, rels: string[], onProgress: ProgressFn): Promise<number>;
}

export type { LoadNodeHandle };

export interface Target {
  readonly name: TargetName;
  readonly nodes?: RigNodes;
  provision(campaignId: string, params: RigParameters, onProgress?: ProgressFn): Promise<ProvisionResult>;
  /** `region`: where an AWS rig lives, for a worker that has no record of it (another host than the one that made it). */
  teardown(campaignId: string, onProgress?: ProgressFn, opts?: { region?: string }): Promise<TeardownResult>;
  cleanCheck(): Promise<CleanCheckResult>;
  /** How to reach a provisioned rig; throws when there is none. */
  connection(campaignId: string): Promise<RigConnection>;
  /** What provisioning made; throws when there is no provisioned rig. */
  describe(campaignId: string): RigDescription;
  /** Database URLs with the passwords from this target's own secret store. */
  dbUrls(campaignId: string): Promise<RigDbUrls>;
  readonly apiKeys: ApiKeyStore;
  /** Opens the Postgres log's window now; read it when the window ends. */
  openPostgresLog(campaignId: string): Promise<PostgresLogWindow>;
  /**
   * The cloud's own evidence of a repeat's window (aws: CloudWatch, Enhanced Monitoring, Performance
   * Insights), each file handed to `write` as soon as it is read; a source that fails writes its error
   * into its file instead of throwing. Absent where there is no cloud (local).
   */
  cloudEvidence?(campaignId: string, window: { start: string; end: string }, write: (file: CloudFileName, json: unknown) => void, onProgress?: ProgressFn): Promise<void>;
  /**
   * Folders on the data-plane host that hold the database's files (local: the cluster's data directory
   * and its pg_wal), for the per-second disk sampler (lib/evidence/disk-sampler.ts). Absent where the
   * database has a host of its own (aws: Enhanced Monitoring reports its disks).
   */
  databaseFolders?(campaignId: string): string[];
  /** The hardware line and $/hour, from what the spec declares and what the target knows of itself. */
  hardware(campaignId: string, declared: { description: string; costPerHour: number }): Hardware;
  /**
   * The data-plane task queue whose worker reaches the rig (load, samplers, seeding, pgbench).
   * `host` is the host that provisioned it: a local rig lives there.
   */
  dataQueue(campaignId: string, host: string): string;
  /** pgbench beside the database; call its cleanup when done. */
  pgbenchRunner(campaignId: string): Promise<PgbenchRunner>;
  /** The app's and the database's availability zones, for bring-up to compare; undefined where there are none. */
  availabilityZones(campaignId: string): Promise<{ app: string; database: string } | undefined>;
  /** A folder on the data-plane host for the rig's plain working files (the fixtures' customer list). */
  workDir(campaignId: string): string;
  /** Every kind of leftover this target's clean check can report. */
  readonly leftoverKinds: readonly LeftoverKind[];
  /**
   * The watchdog's deadline moved: every resource of the campaign now expires at `expiresAt` (ISO
   * 8601), so a reaper never takes a rig its watchdog still guards. Idempotent; nothing found, nothing done.
   */
  extendExpiry(campaignId: string, expiresAt: string): Promise<void>;
  /**
   * What the rig's own hosts said on their consoles, bounded (AWS: GetConsoleOutput's tail of each
   * node): when no worker on them took a step, the campaign's failure carries it. Absent where the
   * rig has no hosts of its own.
   */
  nodeConsole?(campaignId: string): Promise<string>;
  /**
   * Waits (at most `waitMinutes` from `bound.sinceMs`) for a database that provisioning created but did not wait for (aws,
   * RigParameters.aws.waitForDatabase false), then answers as provision does. Absent where provision
   * makes the rig whole.
   */
  awaitDatabase?(campaignId: string, waitMinutes: number, onProgress: ProgressFn, bound?: DatabaseWaitBound): Promise<ProvisionResult>;
  /**
   * A variant's settings on the live rig (issue 13): database parameters and the service's switches,
   * restarting what must restart, read back from where they took effect. Absent on a target that
   * cannot change them between repeats (the spec check refuses variants there).
   */
  applySettings?(campaignId: string, settings: { database: DbParameters; service: ServiceParameters }, onProgress: ProgressFn): Promise<AppliedSettings>;
  /**
   * The rig's load nodes (issue 37, `load.nodes` > 1): a worker per node polling its own queue
   * (local: loadNodeQueue(campaign, i) in a namespace each; aws: the instances provisioning launched),
   * made or found (idempotent), removed by teardown. Absent on a target with one load host (the spec
   * check refuses more there).
   */
  startLoadNodes?(campaignId: string, nodes: number, onProgress: ProgressFn): Promise<LoadNodeHandle[]>;
}



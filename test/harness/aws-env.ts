// The set-up every test against moto shares (test/targets/aws/*.test.ts, test/campaign/aws-*.test.ts),
// in one place instead of a copy per file: examples/aws.json's spec, the environment that keeps this
// machine's own AWS credentials out (no shared files, no profile, no instance metadata) and gives
// moto's dummy ones, and useMoto(), which a test file calls at its top level to get a real moto 5.2.5
// (test/harness/moto.ts) and a temporary RIG_STATE_DIR for the whole file, with the environment set in
// process.env (for the rig's code running in this process) and cliEnv() for `rig` child processes.
//
// Why: each file carried its own copy of this set-up (the duplicate finder flagged it), and a change to
// how the tests reach moto (one more variable that must not leak in) had to be made ten times.
//
// useMoto registers one `before` and one `after` (node:test) on the file. A file's own top-level hooks
// are NOT ordered after useMoto's (Node 20 runs a file's root hooks without waiting for one before the
// next: a synchronous `before` finishes before an async one registered earlier), so what needs moto
// and the environment goes in `afterStart`, and what must run while moto still answers in `beforeStop`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import type { AwsSpec } from '../../lib/protocol/aws-spec';
import { parseCampaignSpec, type CampaignSpecInput } from '../../lib/protocol/spec';
import { awsClients, type AwsClients } from '../../lib/targets/aws/clients';
import type { EmulatorMap } from '../../lib/targets/aws/emulator-map';
import { findRigResources } from '../../lib/targets/aws/find';
import type { PgCluster, PgClusterOptions } from '../../lib/targets/local/pg-cluster';
import { startMoto, type Moto } from './moto';
import { throwAwayCluster } from './pg';

const root = path.resolve(__dirname, '..', '..');
const exampleText = fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8');

/** examples/aws.json as written (a CampaignSpecInput: what tinySpec and a workflow's args take). */
export const exampleInput = JSON.parse(exampleText) as CampaignSpecInput;
/** examples/aws.json parsed (parseCampaignSpec), and its aws block. */
export const exampleSpec = parseCampaignSpec(JSON.parse(exampleText));
export const exampleAws = exampleSpec.aws as AwsSpec;

/** Every kind of resource one provision makes, sorted (db-subnet-group is only ever found, never made). */
export const MADE_KINDS = [
  'app-node',
  'artifacts-bucket',
  'db-instance',
  'db-parameter-group',
  'db-security-group',
  'load-node',
  'monitoring-role',
  'node-instance-profile',
  'node-role',
  'nodes-security-group',
  'rig-secret',
  'temporal-secret',
];

/** No credential source on this machine leaks in: no shared files, no instance metadata. */
export const NO_AMBIENT = { AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/rig-test', AWS_CONFIG_FILE: '/nonexistent/rig-test', AWS_EC2_METADATA_DISABLED: 'true', AWS_PROFILE: '' };
/**
 * What moto does not model, replayed from AWS API reference shapes (test/targets/aws/replayed/README.md):
 * the account every test here runs in. RIG_AWS_REPLAY in process.env and cliEnv().
 */
export const REPLAYED = path.join(root, 'test', 'targets', 'aws', 'replayed');
export const ACCOUNT_REPLAY = { RIG_AWS_REPLAY: path.join(REPLAYED, 'account') };

/**
 * The account as a first real run needs it: RDS's service-linked role, made once by hand (preflight
 * checks it). Made with CreateRole at the path and name AWS gives it: moto 5.2.5's
 * CreateServiceLinkedRole names it AWSServiceRoleForRds, not AWS's AWSServiceRoleForRDS.
 */
export async function prepareAccount(c: AwsClients): Promise<void> {
  const trust = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'rds.amazonaws.com' }, Action: 'sts:AssumeRole' }] };
  await c.iam.send(new CreateRoleCommand({ RoleName: 'AWSServiceRoleForRDS', Path: '/aws-service-role/rds.amazonaws.com/', AssumeRolePolicyDocument: JSON.stringify(trust) }));
}

/** moto's dummy credentials. */
export const TEST_CREDS = { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing' };

export interface UseMotoOptions {
  /** The temporary folder's name prefix (os.tmpdir()/<prefix>XXXXXX); default 'rig-aws-state-'. */
  prefix?: string;
  /** AWS_REGION, and the region withClients() uses; default examples/aws.json's. */
  region?: string;
  /** Set in process.env beside the AWS settings (not in cliEnv()), e.g. TEMPORAL_*. */
  extraEnv?: NodeJS.ProcessEnv;
  /**
   * The state folder: true (default) makes the temporary folder and makes it RIG_STATE_DIR; a string
   * makes RIG_STATE_DIR that path inside the temporary folder (which is then `dir`); false makes no
   * folder and sets no RIG_STATE_DIR (campaignEnv() sets its own).
   */
  stateDir?: boolean | string;
  /** Run at the end of the `before` hook, once moto answers and process.env is set: e.g. clients, data. */
  afterStart?: () => unknown;
  /** Run first in the `after` hook, while moto still answers (only when moto started): e.g. a teardown. */
  beforeStop?: () => unknown;
  /** Names deleted from process.env in the `after` hook, after beforeStop and before moto stops. */
  clearEnv?: string[];
}

export interface AwsTestEnv {
  readonly region: string;
  /** The file's moto (from the `before` hook on). */
  readonly moto: Moto;
  /** moto's endpoint: RIG_AWS_ENDPOINT. */
  readonly endpoint: string;
  /** The temporary folder the `before` hook made, removed by the `after` hook. */
  readonly dir: string;
  /** RIG_STATE_DIR (inside or equal to `dir`). */
  readonly state: string;
  /** The environment for a `rig` child process: no ambient credentials, moto's, the region, moto, the state folder; then `extra`. */
  cliEnv: (extra?: NodeJS.ProcessEnv) => NodeJS.ProcessEnv;
  /** Runs fn with fresh awsClients(region), destroyed after. */
  withClients: <T>(fn: (c: AwsClients) => Promise<T>) => Promise<T>;
  /** `kind id` of every resource findRigResources finds for the campaign, in its order (unsorted). */
  rigResources: (campaignId: string) => Promise<string[]>;
}

/**
 * A moto and a state folder for the whole test file: call it at the file's top level. Its `before`
 * starts moto, makes the folder and sets process.env; its `after` runs beforeStop, deletes clearEnv,
 * stops moto and removes the folder.
 */
export function useMoto(opts: UseMotoOptions = {}): AwsTestEnv {
  const region = opts.region ?? exampleAws.region;
  const stateDir = opts.stateDir ?? true;
  let moto: Moto | undefined;
  let dir = '';
  let state = '';
  const started = (): Moto => {
    if (!moto) throw new Error('useMoto: moto is not started yet (its `before` hook starts it)');
    return moto;
  };
  const stateEnv = (): NodeJS.ProcessEnv => (stateDir === false ? {} : { RIG_STATE_DIR: state });

  before(async () => {
    moto = await startMoto();
    if (stateDir !== false) {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), opts.prefix ?? 'rig-aws-state-'));
      state = typeof stateDir === 'string' ? path.join(dir, stateDir) : dir;
    }
    Object.assign(process.env, NO_AMBIENT, TEST_CREDS, ACCOUNT_REPLAY, opts.extraEnv, { AWS_REGION: region, RIG_AWS_ENDPOINT: moto.endpoint, ...stateEnv() });
    await withClients(prepareAccount);
    await opts.afterStart?.();
  });
  after(async () => {
    if (moto) await opts.beforeStop?.();
    for (const name of opts.clearEnv ?? []) delete process.env[name];
    await moto?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const withClients = async <T>(fn: (c: AwsClients) => Promise<T>): Promise<T> => {
    const c = awsClients(region);
    try {
      return await fn(c);
    } finally {
      c.destroy();
    }
  };

  return {
    region,
    get moto() {
      return started();
    },
    get endpoint() {
      return started().endpoint;
    },
    get dir() {
      return dir;
    },
    get state() {
      return state;
    },
    cliEnv: (extra: NodeJS.ProcessEnv = {}) => ({ ...NO_AMBIENT, ...TEST_CREDS, ...ACCOUNT_REPLAY, AWS_REGION: region, RIG_AWS_ENDPOINT: started().endpoint, ...stateEnv(), ...extra }),
    withClients,
    rigResources: (campaignId: string) => withClients(async (c) => (await findRigResources(c, campaignId)).map((r) => `${r.kind} ${r.id}`)),
  };
}

export interface StandInDatabase {
  cluster: PgCluster;
  /** The RIG_AWS_EMULATOR_MAP entries for it: the cluster as the RDS endpoint, its log as the Postgres log. */
  map: Required<Pick<EmulatorMap, 'db' | 'postgresLog' | 'dbCaFile'>>;
  /** JSON.stringify(map): the value for RIG_AWS_EMULATOR_MAP (EMULATOR_MAP_ENV). */
  mapJson: string;
}

/**
 * A throw-away local PostgreSQL cluster standing in for the RDS endpoint moto returns (nothing listens
 * there): RDS's master user is rig_admin (provision.ts), a non-superuser admin of the cluster. Call
 * it inside a test, not in a `before` hook: throwAwayCluster registers its own `after`. It does not set
 * RIG_AWS_EMULATOR_MAP: where and when is the test's (campaignEnv() copies process.env when called).
 */
export async function standInDatabase(opts: Omit<PgClusterOptions, 'dir' | 'superuser' | 'rdsFidelity'> = {}): Promise<StandInDatabase> {
  // RDS-fidelity mode: TLS required (verified against its test CA, dbCaFile) and rig_admin not a
  // superuser, as RDS's master user; no password check, since moto makes the master password.
  const cluster = await throwAwayCluster({ rdsFidelity: { admin: 'rig_admin' }, ...opts });
  const map = { db: `${cluster.host}:${cluster.port}`, postgresLog: cluster.logFile, dbCaFile: cluster.info.tls!.caFile };
  return { cluster, map, mapJson: JSON.stringify(map) };
}

// A test-only setting: RIG_AWS_EMULATOR_MAP maps what the AWS emulator (moto) makes but cannot run
// onto real parts on this machine, so that a whole campaign with target "aws" runs every step here.
// moto answers RDS's control plane (an endpoint such as rig-x.aaaaaaaaaa.us-east-1.rds.amazonaws.com
// that nothing listens on) and has no backend for DownloadDBLogFilePortion; EC2 nodes are records,
// not machines. With the map, the database endpoint is a local PostgreSQL cluster the test made, the
// Postgres log is that cluster's file, and the app node's service listens on loopback (this machine's
// worker serves the app and load queues). It is honoured only beside RIG_AWS_ENDPOINT (an emulator):
// on real AWS it is refused, so it can never point a real campaign at the wrong database.
//
// The stand-in requires TLS as RDS does; `dbCaFile` is its test CA, verified in place of RDS's bundle.
//
//   RIG_AWS_EMULATOR_MAP='{"db":"127.0.0.1:54329","postgresLog":"/tmp/x/postgres.log","appNodeStateDir":"/tmp/app/state","dbCaFile":"/tmp/x/tls/ca.pem"}'

export interface EmulatorMap {
  /** host:port that stands in for the RDS endpoint. */
  db: string;
  /** The stand-in cluster's log file, read by offset for a repeat's window (none: the log is empty). */
  postgresLog?: string;
  /**
   * The emulated app node's RIG_STATE_DIR when its worker runs with its own (a child process standing
   * in for the node): where teardown finds the service to stop. Default: this process's state folder.
   */
  appNodeStateDir?: string;
  /** The CA the stand-in cluster's certificate chains to (an RDS-fidelity cluster's test CA), verified in place of RDS's bundle. */
  dbCaFile?: string;
}

export const EMULATOR_MAP_ENV = 'RIG_AWS_EMULATOR_MAP';

/** The map, when set; throws when it is set wrongly or without an emulator endpoint. */
export function emulatorMap(env: NodeJS.ProcessEnv = process.env): EmulatorMap | undefined {
  const raw = env[EMULATOR_MAP_ENV];
  if (!raw) return undefined;
  if (!env.RIG_AWS_ENDPOINT) {
    throw new Error(`${EMULATOR_MAP_ENV} is a test-only setting for the AWS emulator: it needs RIG_AWS_ENDPOINT and is refused against real AWS. Unset ${EMULATOR_MAP_ENV}.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`${EMULATOR_MAP_ENV} is not JSON: give {"db":"127.0.0.1:PORT","postgresLog":"/path/postgres.log"}`);
  }
  const m = parsed as Partial<EmulatorMap>;
  if (typeof m.db !== 'string' || !/^[^:\s]+:\d+$/.test(m.db)) {
    throw new Error(`${EMULATOR_MAP_ENV}.db must be "host:port" of the PostgreSQL cluster that stands in for RDS (got ${JSON.stringify(m.db)})`);
  }
  if (m.postgresLog !== undefined && typeof m.postgresLog !== 'string') throw new Error(`${EMULATOR_MAP_ENV}.postgresLog must be a file path`);
  if (m.appNodeStateDir !== undefined && typeof m.appNodeStateDir !== 'string') throw new Error(`${EMULATOR_MAP_ENV}.appNodeStateDir must be a folder path`);
  if (m.dbCaFile !== undefined && typeof m.dbCaFile !== 'string') throw new Error(`${EMULATOR_MAP_ENV}.dbCaFile must be the path of the stand-in cluster's CA certificate`);
  return {
    db: m.db,
    ...(m.postgresLog ? { postgresLog: m.postgresLog } : {}),
    ...(m.appNodeStateDir ? { appNodeStateDir: m.appNodeStateDir } : {}),
    ...(m.dbCaFile ? { dbCaFile: m.dbCaFile } : {}),
  };
}

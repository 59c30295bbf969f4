// A team's deployment of the reference service, as target "existing" meets it: reference/main.ts in a
// process of its own (as the local target runs it), not in the caller's, whose event loop a worker and
// a generator may share. A release is undeploy then deploy on the same port (HC_PORT) with a new
// HC_BUILD. Used by the weekly tests and bench:weekly.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../lib/tools/paths';

export interface Deployed {
  child: ChildProcess;
  url: string;
  port: number;
}

/** Starts the service with exactly `env` (and PATH); resolves once it listens. */
export async function deploy(env: Record<string, string>): Promise<Deployed> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join('reference', 'main.ts')], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.on('exit', (code) => reject(new Error(`the reference service exited ${code} before listening`)));
  });
  const url = (JSON.parse(line) as { listening: string }).listening;
  return { child, url, port: Number(new URL(url).port) };
}

/** Stops it (SIGTERM) and waits for its exit. */
export async function undeploy(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

// A real moto server (the pinned 5.2.5 from .venv, through lib/tools/binaries.ts) for tests: started
// on a free loopback port, stopped by its own pid through stop() (call it from the file's `after`
// hook: an `after` registered inside a `before` hook runs at once), and (synchronously) if the process
// exits first. Nothing else is ever signalled.
import { spawn, type ChildProcess } from 'node:child_process';
import { toolPath } from '../../lib/tools/binaries';
import { freePort, portAnswers } from '../../lib/tools/free-port';

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

export interface Moto {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * A fresh moto server; `env` adds to its environment (INITIAL_NO_AUTH_ACTION_COUNT=0 enforces credentials).
 * AWS's managed IAM policies are loaded (MOTO_IAM_LOAD_MANAGED_POLICIES): moto leaves them out by
 * default, and provisioning attaches AmazonRDSEnhancedMonitoringRole to the monitoring role.
 */
export async function startMoto(env: NodeJS.ProcessEnv = {}): Promise<Moto> {
  const port = await freePort();
  const child = spawn(toolPath('moto_server'), ['-H', '127.0.0.1', '-p', String(port)], { env: { MOTO_IAM_LOAD_MANAGED_POLICIES: 'true', ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  live.add(child);
  const stop = async () => {
    live.delete(child);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  };
  const deadline = Date.now() + 60_000;
  while (!(await portAnswers('127.0.0.1', port))) {
    if (child.exitCode !== null) throw new Error(`moto_server exited (${child.exitCode}): ${stderr}`);
    if (Date.now() > deadline) throw new Error(`moto_server did not answer on ${port} within 60 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { endpoint: `http://127.0.0.1:${port}`, port, stop };
}

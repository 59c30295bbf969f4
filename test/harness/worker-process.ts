// `rig worker` in a child process, as a user (or a node's user data) starts it: the tests that kill a
// worker mid-step, the emulated AWS nodes and `npm run faults` all start theirs here. Resolves once the
// worker says it polls; rejects with its output if it exits first. The caller keeps the set of
// children and kills what is left when it ends.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

export async function spawnRigWorker(opts: { env: NodeJS.ProcessEnv; args?: string[]; children?: Set<ChildProcess>; name?: string }): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'rig.cjs'), 'worker', ...(opts.args ?? [])], { cwd: root, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  opts.children?.add(child);
  child.on('exit', () => opts.children?.delete(child));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('rig worker on')) resolve();
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`${opts.name ?? 'rig worker'} exited (${code}) before it was ready:\n${out}`)));
  });
  return child;
}

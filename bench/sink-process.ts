// The benches' sink (bench/sink.ts) in its own process, so the tool under test never shares a thread
// with what answers it. Resolves with its port; stop() ends it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export async function startSink(): Promise<{ port: number; stop: () => void }> {
  const sink = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'sink.ts')], { stdio: ['pipe', 'pipe', 'ignore'] });
  const port = await new Promise<number>((resolve, reject) => {
    readline.createInterface({ input: sink.stdout }).once('line', (l) => resolve((JSON.parse(l) as { port: number }).port));
    sink.once('exit', () => reject(new Error('the sink exited')));
  });
  return { port, stop: () => sink.stdin.end() };
}

// Runs `rig ARGV` in this process through client/main.ts, as bin/rig.cjs does, and captures what it
// prints: fast enough to hold every command to its help and exit codes without a process each.
import { main } from '../../client/main';

export async function captureRig(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  console.error = (...a: unknown[]) => void err.push(a.join(' '));
  try {
    return { code: await main(argv), out: out.join('\n'), err: err.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
  }
}

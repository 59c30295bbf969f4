// Runs an external program to its end and gives back its output, or throws an Error that carries the
// program's own words (stderr, else stdout): initdb, pg_ctl, pgbench, pg_waldump, the Temporal CLI.
// execa does the process work (spawn, wait, collect both streams, a timeout, the failure with exit
// code or signal) that node:child_process left to hand-written code here; by default it also stops a
// program still running when this process exits normally.
//
// How execa (9.x, ESM-only) is loaded, found on Node 20.20 with tsx 4.23: Node 20.20 itself has
// require(esm) on (process.features.require_module is true; plain `node -e "require('execa')"` works),
// but the rig runs under tsx's require hook (bin/rig.cjs, `npm test`), and that hook does not hand an
// ESM file to Node: it transforms it to CommonJS itself, so execa's own imports are resolved with the
// "require" condition, and unicorn-magic 0.3 (execa -> npm-run-path 6 -> unicorn-magic) exports only
// "import": ERR_PACKAGE_PATH_NOT_EXPORTED. A static `import { execa } from 'execa'` (compiled to
// require) therefore fails under tsx; a dynamic import() goes to Node's ESM loader and works under
// both tsx entry points. So it is imported once, lazily, here, and nowhere else.
import path from 'node:path';

type Execa = typeof import('execa', { with: { 'resolution-mode': 'import' } });
let loading: Promise<Execa> | undefined;
const execaModule = (): Promise<Execa> => (loading ??= import('execa'));

export interface RunOptions {
  /** The whole environment of the program (not merged with this process's). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run as this OS user (PostgreSQL refuses to run as root). */
  uid?: number;
  gid?: number;
  /** Kill it (SIGTERM) after this long and fail. */
  timeoutMs?: number;
  /** Written to its standard input (otherwise it has none). */
  input?: string;
}

export async function runProgram(file: string, args: string[], opts: RunOptions = {}): Promise<{ stdout: string; stderr: string }> {
  const { execa } = await execaModule();
  try {
    const res = await execa(file, args, {
      env: opts.env ?? process.env,
      extendEnv: false,
      cwd: opts.cwd,
      ...(opts.uid !== undefined ? { uid: opts.uid } : {}),
      ...(opts.gid !== undefined ? { gid: opts.gid } : {}),
      ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
      ...(opts.input !== undefined ? { input: opts.input } : { stdin: 'ignore' as const }),
      stripFinalNewline: false,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { stdout: res.stdout, stderr: res.stderr };
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; shortMessage?: string; message: string };
    throw new Error(`${path.basename(file)} ${args.join(' ')} failed: ${(e.stderr || e.stdout || e.shortMessage || e.message).trim()}`);
  }
}

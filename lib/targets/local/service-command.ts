// Can this machine start the spec's `service.run.command`? Asked before the local rig makes anything,
// so that a typo in a path is a refusal naming the field, not a cluster made and torn down again.
import fs from 'node:fs';
import path from 'node:path';
import type { ServiceRunSpec } from '../../protocol/service-spec';
import { portAnswers } from '../../tools/free-port';
import { ServiceRefusal } from '../service-refusal';

/** argv[0] as the spawn will find it: an absolute path, or the first executable of that name on PATH. */
export function resolveProgram(program: string, pathVar = process.env.PATH ?? ''): string | undefined {
  const executable = (p: string) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes('/')) return executable(program) ? program : undefined;
  for (const dir of pathVar.split(':').filter(Boolean)) {
    const p = path.join(dir, program);
    if (executable(p)) return p;
  }
  return undefined;
}

/** Throws ServiceRefusal naming the field when the command cannot start here; the image form is refused on this target. */
export async function assertCommandStartable(run: ServiceRunSpec | undefined, field = 'service.run'): Promise<void> {
  if (!run) return;
  try {
    await assertStartable(run);
  } catch (err) {
    // The field the error names: the campaign's service.run, or a variant's (variants.treatments[0].service.run).
    if (err instanceof ServiceRefusal && field !== 'service.run') throw new ServiceRefusal(err.message.replace(/^service\.run/, field));
    throw err;
  }
}

async function assertStartable(run: ServiceRunSpec): Promise<void> {
  if (run.command === undefined) {
    throw new ServiceRefusal(`service.run.image: the local target runs a command, not a container image: give service.run.command`);
  }
  const program = run.command[0];
  if (!resolveProgram(program)) {
    throw new ServiceRefusal(
      program.includes('/')
        ? `service.run.command[0]: ${program} is not an executable file on this machine`
        : `service.run.command[0]: "${program}" is not on the PATH of this machine's worker (${process.env.PATH ?? ''}): give its absolute path`,
    );
  }
  if (run.cwd !== undefined && !(fs.existsSync(run.cwd) && fs.statSync(run.cwd).isDirectory())) {
    throw new ServiceRefusal(`service.run.cwd: ${run.cwd} is not a folder on this machine`);
  }
  if (run.port !== undefined && (await portAnswers('127.0.0.1', run.port))) {
    throw new ServiceRefusal(`service.run.port: something already listens on 127.0.0.1:${run.port}; the rig would measure it instead of your build: stop it or choose another port`);
  }
}

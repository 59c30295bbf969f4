// The `rig` command line. Each subcommand lives in client/commands/<name>.ts and exports
// `run(argv: string[]): Promise<number>` (the exit code) and `summary` (one line for `rig help`).
// They are loaded lazily (require, not import(): the sources run as CommonJS through tsx) so that
// `rig analyze` does not pay for loading Temporal.

import { UsageError } from './parse-flags';

interface Command {
  summary: string;
  run(argv: string[]): Promise<number>;
}

/* eslint-disable @typescript-eslint/no-require-imports */
export const commands: Record<string, () => Command> = {
  analyze: () => require('./commands/analyze'),
  calibrate: () => require('./commands/calibrate'),
  measure: () => require('./commands/measure'),
  check: () => require('./commands/check'),
  denominator: () => require('./commands/denominator'),
  campaign: () => require('./commands/campaign'),
  dev: () => require('./commands/dev'),
  doctor: () => require('./commands/doctor'),
  report: () => require('./commands/report'),
  worker: () => require('./commands/worker'),
  rehearse: () => require('./commands/rehearse'),
  replay: () => require('./commands/replay'),
  schedule: () => require('./commands/schedule'),
  seed: () => require('./commands/seed'),
  step: () => require('./commands/step'),
};
/* eslint-enable @typescript-eslint/no-require-imports */

function usage(withSummaries: boolean): string {
  const names = Object.keys(commands).sort();
  return [
    'usage: rig <command> [options]   (rig <command> --help for its options)',
    '',
    'commands:',
    ...names.map((name) => (withSummaries ? `  ${name.padEnd(12)} ${commands[name]().summary}` : `  ${name}`)),
  ].join('\n');
}

/**
 * A usage error, exit 2: node:util parseArgs rejecting an unknown or malformed flag (its ERR_PARSE_ARGS_
 * codes), or a flag value a command refused (client/parse-flags.ts UsageError).
 */
function isUsageError(err: unknown): boolean {
  if (err instanceof UsageError) return true;
  const code = (err as { code?: string }).code ?? '';
  return code.startsWith('ERR_PARSE_ARGS_');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    if (name && rest[0] && commands[rest[0]]) return commands[rest[0]]().run(['--help']);
    console.log(usage(true));
    return name ? 0 : 2;
  }
  const load = commands[name];
  if (!load) {
    console.error(`rig: unknown command '${name}'\n\n${usage(false)}`);
    return 2;
  }
  try {
    return await load().run(rest);
  } catch (err) {
    if (!isUsageError(err)) throw err;
    console.error(`rig ${name}: ${(err as Error).message} (rig ${name} --help lists the options)`);
    return 2;
  }
}

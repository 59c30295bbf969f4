// The `rig` command line. Each subcommand lives in client/commands/<name>.ts and exports
// `run(argv: string[]): Promise<number>` (the exit code) and `summary` (one line for `rig help`).
// Each also exports `actions` (client/command.ts), so a bad flag after an action points at that
// action's help, and the tests find every action here. They are loaded lazily (require, not import(): the sources run as CommonJS through tsx) so that
// `rig analyze` does not pay for loading Temporal.

import { EXIT, EXIT_CODES_HELP } from './exit-codes';
import type { Command as CommandDefinitionExport } from './command';
import { UsageError } from './parse-flags';
import { SpecInputError } from './spec-input';
import { UnreachableError } from '../lib/tools/unreachable';
import { ConnectionSettingsError } from '../lib/temporal/connection-env';

/** What a command module exports (client/command.ts's Command, less its help text). */
type Command = Pick<CommandDefinitionExport, 'summary' | 'actions' | 'syntax' | 'run'>;

/* eslint-disable @typescript-eslint/no-require-imports */
export const commands: Record<string, () => Command> = {
  analyze: () => require('./commands/analyze'),
  calibrate: () => require('./commands/calibrate'),
  measure: () => require('./commands/measure'),
  check: () => require('./commands/check'),
  denominator: () => require('./commands/denominator'),
  campaign: () => require('./commands/campaign'),
  deploy: () => require('./commands/deploy'),
  dev: () => require('./commands/dev'),
  doctor: () => require('./commands/doctor'),
  history: () => require('./commands/history'),
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
    'usage: rig <command> [options]   (rig <command> --help for its options; rig --version)',
    '',
    'commands:',
    ...names.map((name) => (withSummaries ? `  ${name.padEnd(12)} ${commands[name]().summary}` : `  ${name}`)),
    ...(withSummaries ? ['', EXIT_CODES_HELP] : []),
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
    return name ? EXIT.OK : EXIT.USAGE;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    console.log(version());
    return EXIT.OK;
  }
  const load = commands[name];
  if (!load) {
    console.error(`rig: unknown command '${name}'\n\n${usage(false)}`);
    return EXIT.USAGE;
  }
  try {
    return await load().run(rest);
  } catch (err) {
    // A spec refused, or Temporal (a target) not answering: each its own code, whatever the command.
    if (err instanceof SpecInputError || err instanceof ConnectionSettingsError) {
      console.error(`rig ${name}: ${err.message}`);
      return EXIT.USAGE;
    }
    if (err instanceof UnreachableError) {
      console.error(`rig ${name}: ${err.message}`);
      return EXIT.UNREACHABLE;
    }
    if (!isUsageError(err)) throw err;
    // After an action, its own help is the one that lists what it takes.
    const helpOf = rest[0] && load().actions.includes(rest[0]) ? `${name} ${rest[0]}` : name;
    console.error(`rig ${name}: ${(err as Error).message} (rig ${helpOf} --help lists the options)`);
    return EXIT.USAGE;
  }
}

/** `rig --version`: the package's version and the Node that runs it. */
export function version(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pkg = require('../package.json') as { name: string; version: string };
  return `${pkg.name} ${pkg.version} (node ${process.versions.node})`;
}

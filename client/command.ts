// One definition per `rig` command: its summary, its help and its options beside the code that runs
// it. Every command parses the same way (node:util parseArgs, strict), prints its own help for
// --help/-h (exit 0), and turns a bad or missing flag into a UsageError, which client/main.ts prints
// with the command's name and exits 2. So `rig X --bogus` and `rig X` without its action fail alike.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT_CODES_HELP } from './exit-codes';
import { UsageError } from './parse-flags';

type Options = NonNullable<ParseArgsConfig['options']>;
const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ options: O & typeof HELP_OPTION; allowPositionals: true; strict: true }>>;

export interface CommandDefinition<O extends Options> {
  /** One line for `rig help`. */
  summary: string;
  /** What `rig X --help` prints: usage, options, exit codes. */
  help: string;
  /** A command with actions: the help of the action named first (`rig campaign extend --help`). */
  actionHelp?: Readonly<Record<string, string>>;
  options: O;
  /** Positional arguments accepted (an action, an id, a file); parseArgs refuses them otherwise. */
  positionals?: boolean;
  run(args: Parsed<O>): Promise<number>;
}

export interface CommandSyntax {
  options: Readonly<Options>;
  positionals: boolean;
}

export interface Command {
  summary: string;
  help: string;
  /** The actions named first (campaign start, dev up), [] for a command without: read by main.ts and the tests that hold every action to its help and exit codes. */
  actions: readonly string[];
  /** What the command parses (its options, --help among them, and whether it takes positionals): the docs test holds every quoted command line to it. */
  syntax: CommandSyntax;
  run(argv: string[]): Promise<number>;
}

export function defineCommand<O extends Options>(def: CommandDefinition<O>): Command {
  // Every help, and every action's, ends with the one exit-code table (client/exit-codes.ts).
  const help = `${def.help}\n\n${EXIT_CODES_HELP}`;
  return {
    summary: def.summary,
    help,
    actions: Object.keys(def.actionHelp ?? {}),
    syntax: { options: { ...def.options, ...HELP_OPTION }, positionals: def.positionals ?? false },
    async run(argv: string[]): Promise<number> {
      let parsed: Parsed<O>;
      try {
        parsed = parseArgs({ args: argv, options: { ...def.options, ...HELP_OPTION }, allowPositionals: def.positionals ?? false, strict: true }) as Parsed<O>;
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      if ((parsed.values as { help?: boolean }).help) {
        const action = def.actionHelp?.[parsed.positionals[0] ?? ''];
        console.log(action !== undefined ? `${action}\n\n${EXIT_CODES_HELP}` : help);
        return 0;
      }
      return def.run(parsed);
    },
  };
}

/** The positional at `index`, or a UsageError naming what is missing and what may be given. */
export function requiredPositional(positionals: string[], index: number, what: string, choices?: readonly string[]): string {
  const v = positionals[index];
  if (v === undefined) throw new UsageError(`${what} is missing${choices ? `: one of ${choices.join(', ')}` : ''}`);
  if (choices && !choices.includes(v)) throw new UsageError(`unknown ${what} '${v}': one of ${choices.join(', ')}`);
  return v;
}

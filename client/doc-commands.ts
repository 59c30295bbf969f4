// The commands the documentation quotes, held to the CLI (issue 38): every `npx rig ...`,
// `node bin/rig.cjs ...`, bare `rig <command> ...` and `npm run ...` in README.md and docs/*.md,
// in code blocks and inline code, must name a command (and action) that exists, with flags that
// command parses. The flags come from the command's own definition (client/command.ts `syntax`,
// the options node:util parseArgs is given), so the check is the parse `rig` itself would do.
// Pure apart from the registry and the scripts passed in: markdown in, problems out.
import { parseArgs } from 'node:util';
import type { Command } from './command';

export interface QuotedCommand {
  /** The file and 1-based line the command starts on. */
  where: string;
  /** `rig` (npx rig, node bin/rig.cjs, rig) or `npm run`. */
  kind: 'rig' | 'npm run';
  /** What follows `rig` or `npm run`, tokenized as a shell would (placeholders `<like this>` kept whole). */
  argv: string[];
  /** The text as quoted, for the message. */
  text: string;
}

type Registry = Record<string, () => Pick<Command, 'actions' | 'syntax'>>;

const SEPARATORS = new Set(['&&', '||', ';', '|', '&', '>', '>>', '2>', '2>&1', ')']);

/** Shell-like words: quotes group, `<...>` placeholders stay one word, a `#` word starts a comment, a backtick ends the code. */
export function shellWords(text: string): string[] {
  return shellTokens(text).map((t) => t.word);
}

interface Token {
  word: string;
  quoted: boolean;
}

function shellTokens(text: string): Token[] {
  const words: Token[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i])) i++;
    if (i >= text.length) break;
    if (text[i] === '#' || text[i] === '`') break;
    let word = '';
    let quoted = false;
    while (i < text.length && !/\s/.test(text[i])) {
      const c = text[i];
      if (c === '`') {
        i = text.length;
        break;
      }
      if (c === '"' || c === "'") {
        quoted = true;
        const end = text.indexOf(c, i + 1);
        if (end < 0) {
          word += text.slice(i + 1);
          i = text.length;
        } else {
          word += text.slice(i + 1, end);
          i = end + 1;
        }
      } else if (c === '<' && text.indexOf('>', i) > i) {
        const end = text.indexOf('>', i);
        word += text.slice(i, end + 1);
        i = end + 1;
      } else if ((c === ';' || c === ')' || c === '|') && word === '') {
        word = c;
        i++;
        break;
      } else if (c === ';' || c === ')') {
        break;
      } else {
        word += c;
        i++;
      }
    }
    words.push({ word, quoted });
  }
  return words;
}

/** Where a command starts in a line of code: `npx rig`, `node bin/rig.cjs`, `npm run`, or `rig` followed by a registered command. */
const START = /(?:^|[\s($`])(npx rig|node bin\/rig\.cjs|npm run|rig)\s+(\S)/g;

/**
 * The words of one command line: up to a shell separator; a usage line's optional groups
 * (`[--out DIR]`, `[--db URL | --reconcile R]`) count as their flags, and `...` as nothing.
 */
function commandWords(text: string): string[] {
  const words: string[] = [];
  let optional = 0;
  for (const { word: raw, quoted } of shellTokens(text)) {
    if (quoted) {
      // `"..."` quoted is a value left out, never "and so on".
      words.push(raw === '...' || raw === '…' ? '<value>' : raw);
      continue;
    }
    if (SEPARATORS.has(raw) && !(optional > 0 && raw === '|')) break;
    if (raw === '|') continue;
    let w = raw;
    while (w.startsWith('[')) {
      optional++;
      w = w.slice(1);
    }
    while (w.endsWith(']') && optional > 0) {
      optional--;
      w = w.slice(0, -1);
    }
    if (w === '') continue;
    // `--case N ...` (more of the same) inside an optional group says nothing to parse.
    if ((w === '...' || w === '…') && (optional > 0 || raw.endsWith(']'))) continue;
    words.push(w);
  }
  // A trailing `...` is "and so on"; one in the middle stands for a value (`--url ...`).
  while (words.length > 0 && (words[words.length - 1] === '...' || words[words.length - 1] === '…')) words.pop();
  return words;
}

/** A placeholder in a usage line: `ID`, `SPEC.json`, `<campaign>`, `DIR|CAMPAIGN_ID`. */
function isPlaceholder(word: string): boolean {
  return word.startsWith('<') || /^[A-Z][A-Z0-9_.|]*$/.test(word);
}

/** The commands in one line of code; `bare` also takes a plain `rig <command>` (code a person types, not a program's output). */
function commandsIn(code: string, where: string, registry: Registry, bare: boolean): QuotedCommand[] {
  const out: QuotedCommand[] = [];
  for (const m of code.matchAll(START)) {
    const start = (m.index ?? 0) + m[0].length - 1;
    const words = commandWords(code.slice(start));
    const kind = m[1] === 'npm run' ? 'npm run' : 'rig';
    // A bare `rig` is a command only when a registered command follows (not "the rig worker's ...").
    if (m[1] === 'rig' && (!bare || !(words[0] in registry))) continue;
    // `npx rig ...` in prose names the family, not a command; `npm run bench:*` a family of scripts.
    if (words.length === 0 || (kind === 'npm run' && words[0].includes('*'))) continue;
    out.push({ where, kind, argv: kind === 'npm run' ? words.slice(0, 1) : words, text: `${m[1]} ${words.join(' ')}` });
  }
  return out;
}

/** Every command quoted in a markdown file: in fenced code blocks (a `\` continues a line) and in inline code. */
export function quotedCommands(markdown: string, file: string, registry: Registry): QuotedCommand[] {
  const out: QuotedCommand[] = [];
  const lines = markdown.split('\n');
  let fence: string | null = null;
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    const f = /^\s*(```|~~~)(\S*)/.exec(line);
    if (f) {
      fence = fence === null ? f[2] || 'text' : null;
      continue;
    }
    if (fence !== null) {
      // JSON, TOML and a program's output quote no command line.
      if (!['sh', 'bash', 'shell', 'console', 'text'].includes(fence)) continue;
      // A fence without a language is as often a program's output as a command: explicit prefixes only.
      const bare = fence !== 'text';
      let code = line;
      const startLine = n + 1;
      while (/\\\s*$/.test(code) && n + 1 < lines.length) code = code.replace(/\\\s*$/, ' ') + lines[++n];
      out.push(...commandsIn(code.replace(/^\s*\$\s/, ''), `${file}:${startLine}`, registry, bare));
    } else {
      // Inline code, its delimiter a run of backticks (``a `b` c`` holds one).
      for (const span of line.matchAll(/(`+)(.+?)\1(?!`)/g)) out.push(...commandsIn(span[2], `${file}:${n + 1}`, registry, true));
    }
  }
  return out;
}

/** What is wrong with one quoted command (empty when `rig` and npm would take it). */
export function commandProblems(cmd: QuotedCommand, registry: Registry, npmScripts: Readonly<Record<string, string>>): string[] {
  if (cmd.kind === 'npm run') {
    const script = cmd.argv[0];
    return script in npmScripts ? [] : [`${cmd.where}: \`${cmd.text}\`: no npm script '${script}' in package.json (it has ${Object.keys(npmScripts).join(', ')})`];
  }
  const [name, ...rest] = cmd.argv;
  if (name === '--help' || name === '-h' || name === '--version' || name === 'help') return [];
  const load = registry[name];
  if (!load) return [`${cmd.where}: \`${cmd.text}\`: rig has no command '${name}' (client/main.ts has ${Object.keys(registry).join(', ')})`];
  const command = load();
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options: { ...command.syntax.options }, allowPositionals: command.syntax.positionals, strict: true });
  } catch (err) {
    return [`${cmd.where}: \`${cmd.text}\`: rig ${name} refuses it: ${(err as Error).message}`];
  }
  if (command.actions.length > 0 && parsed.values.help !== true) {
    const action = parsed.positionals[0];
    if (action === undefined || isPlaceholder(action)) return [];
    if (!command.actions.includes(action)) return [`${cmd.where}: \`${cmd.text}\`: rig ${name} has no action '${action}' (it has ${command.actions.join(', ')})`];
  }
  return [];
}

// test-mode: unit
// The front door tells the truth (issue 38). Every command README.md and docs/*.md quote (`npx rig`,
// `node bin/rig.cjs`, a bare `rig <command>`, `npm run`) names a command, action and flags that the
// CLI parses (client/doc-commands.ts, reading each command's own option table through client/main.ts's
// registry) or a script package.json has; a made-up flag, command, action or script is caught.
// The README stays a front door: about 250 lines at most, the two set-up commands in its first
// screen, its pictures present, its exit-code table exactly client/exit-codes.ts's codes, and
// every guide it lists present.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { commandProblems, quotedCommands, shellWords } from '../../client/doc-commands';
import { EXIT } from '../../client/exit-codes';
import { commands } from '../../client/main';

const root = path.resolve(__dirname, '..', '..');
const scripts = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const docs = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

function problemsOf(markdown: string, file = 'x.md'): string[] {
  return quotedCommands(markdown, file, commands).flatMap((c) => commandProblems(c, commands, scripts));
}

test('every command quoted in README.md and docs/*.md exists, with the flags it shows', () => {
  const quoted = docs.flatMap((f) => quotedCommands(read(f), f, commands));
  const problems = quoted.flatMap((c) => commandProblems(c, commands, scripts));
  assert.deepEqual(problems, []);
  // The check saw the commands the README and the guides are made of.
  const rig = new Set(quoted.filter((c) => c.kind === 'rig').map((c) => c.argv[0]));
  for (const name of ['rehearse', 'campaign', 'worker', 'schedule', 'doctor', 'replay', 'deploy', 'report', 'calibrate', 'measure', 'analyze', 'check', 'history', 'dev', 'step']) {
    assert.ok(rig.has(name), `the docs quote rig ${name}`);
  }
  const npm = new Set(quoted.filter((c) => c.kind === 'npm run').map((c) => c.argv[0]));
  for (const s of ['docs:pictures', 'setup:browser', 'setup:peers', 'lint', 'test:quick']) assert.ok(npm.has(s), `the docs quote npm run ${s}`);
  assert.ok(quoted.length > 150, `${quoted.length} quoted commands found`);
});

test('a made-up flag, command, action or script is caught, in a code block or inline', () => {
  assert.deepEqual(problemsOf('```sh\nnpx rig campaign start examples/rehearsal.json --dry-run\n```\n'), []);
  const flag = problemsOf('```sh\nnpx rig campaign start examples/rehearsal.json --dry-run --made-up-flag   # a comment\n```\n');
  assert.equal(flag.length, 1);
  assert.match(flag[0], /^x\.md:2: `npx rig campaign start examples\/rehearsal\.json --dry-run --made-up-flag`: rig campaign refuses it: .*--made-up-flag/);
  assert.match(problemsOf('Run `rig rehearse --require-heldd` to gate.')[0], /rig rehearse refuses it: .*--require-heldd/);
  assert.match(problemsOf('`node bin/rig.cjs report run1 --format html --outt page.html`')[0], /--outt/);
  assert.match(problemsOf('`npx rig campaign launch nightly-1`')[0], /rig campaign has no action 'launch' \(it has start, /);
  assert.match(problemsOf('`npx rig deplooy check`')[0], /rig has no command 'deplooy'/);
  assert.match(problemsOf('`npm run docs:pictures && npm run docs:pictur`')[0], /no npm script 'docs:pictur'/);
  // A string flag without its value, and a value given to a flag that takes none.
  assert.match(problemsOf('`npx rig campaign extend nightly-1 --minutes`')[0], /--minutes/);
  assert.match(problemsOf('`npx rig doctor --offline=yes`')[0], /--offline/);
  // A line continued with `\`, env assignments before it, a pipe after it, and a placeholder with a quote.
  assert.match(problemsOf('```sh\nAWS_REGION=us-east-1 npx rig check --target aws \\\n  --reapp | tee out\n```\n')[0], /^x\.md:2: .*--reapp/);
  assert.deepEqual(problemsOf("```sh\nnpx rig report <this week's id> --baseline <last week's id>\n```\n"), []);
  // Prose about the rig, JSON and a program's output are not command lines.
  assert.deepEqual(problemsOf('`the rig worker` and ```json\n{"rig rehearse": "--x"}\n```\n'), []);
});

test('shell words: quotes group, placeholders stay whole, # starts a comment', () => {
  assert.deepEqual(shellWords(`schedule create weekly x.json --cron "0 3 * * 1" # Mondays`), ['schedule', 'create', 'weekly', 'x.json', '--cron', '0 3 * * 1']);
  assert.deepEqual(shellWords(`report <this week's id> --baseline <last>`), ['report', "<this week's id>", '--baseline', '<last>']);
  assert.deepEqual(shellWords(`replay --query "WorkflowId STARTS_WITH 'nightly'" --limit 20`), ['replay', '--query', "WorkflowId STARTS_WITH 'nightly'", '--limit', '20']);
});

test('the README: a front door of at most about 250 lines, the two commands in its first screen, its pictures and guides present', () => {
  const readme = read('README.md');
  const lines = readme.split('\n');
  assert.ok(lines.length <= 260, `README.md is ${lines.length} lines`);
  const firstScreen = lines.slice(0, 40).join('\n');
  assert.match(firstScreen, /^npm ci\b/m, 'npm ci in the first screen');
  assert.match(firstScreen, /^npm start\b/m, 'npm start in the first screen');
  assert.match(firstScreen, /!\[[^\]]*\]\(docs\/pictures\/report\.png\)/, "the page's picture in the first screen");
  for (const m of readme.matchAll(/\]\(((?:docs\/)[^)#\s]+)/g)) assert.ok(fs.existsSync(path.join(root, m[1])), `README links ${m[1]}, which exists`);
  assert.match(readme, /docs\/pictures\/campaign-watch\.png/);
  // The exit-code table: exactly the codes of client/exit-codes.ts, in order.
  const table = [...readme.matchAll(/^\| (\d+) \| /gm)].map((m) => Number(m[1]));
  assert.deepEqual(table, Object.values(EXIT).sort((a, b) => a - b));
});

test('the guides link to files that exist', () => {
  for (const f of docs.filter((d) => d.startsWith('docs/'))) {
    for (const m of read(f).matchAll(/\]\(([^)#\s:]+\.(?:md|png|json))(?:#[^)]*)?\)/g)) {
      assert.ok(fs.existsSync(path.join(root, 'docs', m[1])), `${f} links ${m[1]}, which exists`);
    }
  }
});

// test-mode: unit
// The terminal page `npm run docs:pictures` photographs (lib/docs/terminal-page.ts): the transcript
// shown as printed (HTML escaped, colour codes gone), a long one cut in the middle with the count of
// lines left out, the command and its exit code as a shell shows them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shownLines, terminalPageHtml } from '../../lib/docs/terminal-page';

test('a short transcript is shown whole, without colour codes or trailing blank lines', () => {
  assert.deepEqual(shownLines(['\x1b[32m[start]\x1b[0m · elapsed 2s  ', '[done]', '', '']), ['[start] · elapsed 2s', '[done]']);
});

test('a long transcript keeps its head and tail and says how many lines were left out', () => {
  const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`);
  const shown = shownLines(lines, 20);
  assert.equal(shown.length, 20);
  assert.deepEqual(shown.slice(0, 5), ['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
  assert.equal(shown[5], '… 81 more lines like these …');
  assert.equal(shown[19], 'line 100');
  assert.equal(5 + 81 + 14, 100, 'head + cut + tail is every line');
});

test('the page: the command after a prompt, the text escaped, the exit code as echo $? shows it', () => {
  const html = terminalPageHtml({ command: 'npx rig campaign watch r-1', lines: ['p99 <= 50 ms & <b>'], exitCode: 99 });
  assert.match(html, /<span class="prompt">\$<\/span> npx rig campaign watch r-1\n/);
  assert.ok(html.includes('p99 &lt;= 50 ms &amp; &lt;b&gt;'));
  assert.match(html, /echo \$\?\n99<\/pre>/);
  assert.doesNotMatch(terminalPageHtml({ command: 'x', lines: [], exitCode: null }), /echo/);
});

// A terminal transcript as a self-contained HTML page, for `npm run docs:pictures` to photograph in
// Chromium (the README's picture of `rig campaign watch`). Pure: text in, HTML out. A long transcript
// keeps its head and its tail, with a line saying how many were left out, so the picture stays a
// screen's height and still shows how the campaign began and how it ended.

/** Escape colour codes a terminal would interpret: the picture shows the text. */
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

export interface TerminalPage {
  /** The command as typed, shown after the prompt. */
  command: string;
  /** What it printed, stdout and stderr in the order they came. */
  lines: string[];
  /** Its exit code, shown as the shell would (`echo $?`). */
  exitCode: number | null;
  /** At most this many transcript lines (head and tail kept); default 40. */
  maxLines?: number;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The transcript's lines as shown: colour codes removed, trailing blank lines dropped, the middle cut when too long. */
export function shownLines(lines: string[], maxLines = 40): string[] {
  const clean = lines.map((l) => l.replace(ANSI, '').replace(/\s+$/, ''));
  while (clean.length > 0 && clean[clean.length - 1] === '') clean.pop();
  if (clean.length <= maxLines) return clean;
  const head = Math.max(1, Math.floor(maxLines / 4));
  const tail = maxLines - head - 1;
  const cut = clean.length - head - tail;
  return [...clean.slice(0, head), `… ${cut} more lines like these …`, ...clean.slice(clean.length - tail)];
}

export function terminalPageHtml(t: TerminalPage): string {
  const body = shownLines(t.lines, t.maxLines)
    .map((l) => (/^… \d+ more lines like these …$/.test(l) ? `<span class="cut">${escapeHtml(l)}</span>` : escapeHtml(l)))
    .join('\n');
  const exit = t.exitCode === null ? '' : `\n<span class="prompt">$</span> echo $?\n${t.exitCode}`;
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(t.command)}</title>
<style>
  body { margin: 0; background: #1e1e1e; }
  .bar { background: #3c3c3c; color: #ccc; font: 13px sans-serif; padding: 6px 12px; }
  pre { margin: 0; padding: 12px 14px; color: #e6e6e6; font: 13px/1.35 "DejaVu Sans Mono", monospace; white-space: pre-wrap; overflow-wrap: anywhere; }
  .prompt { color: #7fd962; }
  .cut { color: #8a8a8a; font-style: italic; }
</style></head>
<body><div class="bar">terminal</div><pre><span class="prompt">$</span> ${escapeHtml(t.command)}
${body}${exit}</pre></body></html>
`;
}

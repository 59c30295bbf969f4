// campaign.log: one line per step start and end, per repeat verdict and per warning, appended as the
// campaign runs so that `tail -f` (or `rig campaign logs --follow`) shows it live.
//
// A line is `<ISO time> <kind> <text>`: kind padded to one width so the columns line up, text on one
// line (newlines in a message become " / ", since a line is the unit a follower reads). Each line is
// ONE append(2) of a short buffer on an O_APPEND descriptor, so lines from concurrent activities do
// not interleave within a line.
import fs from 'node:fs';
import path from 'node:path';
import type { RepeatSummary, StepOutcome } from '../protocol/campaign-result';

export const LOG_KINDS = ['step-start', 'step-end', 'verdict', 'warning', 'info'] as const;
export type LogKind = (typeof LOG_KINDS)[number];

export interface LogLine {
  at: string;
  kind: LogKind;
  text: string;
}

const KIND_WIDTH = Math.max(...LOG_KINDS.map((k) => k.length));

export function formatLogLine(l: LogLine): string {
  if (!LOG_KINDS.includes(l.kind)) throw new Error(`log kind '${l.kind}' is not one of ${LOG_KINDS.join(', ')}`);
  if (Number.isNaN(Date.parse(l.at))) throw new Error(`log time '${l.at}' is not an ISO-8601 time`);
  const text = l.text.replace(/\r?\n/g, ' / ');
  return `${l.at} ${l.kind.padEnd(KIND_WIDTH)} ${text}\n`;
}

/** Parses one line (without its newline); null for a line that is not in the format. */
export function parseLogLine(line: string): LogLine | null {
  const m = /^(\S+) (\S+)\s+(.*)$/.exec(line);
  if (!m || Number.isNaN(Date.parse(m[1])) || !LOG_KINDS.includes(m[2] as LogKind)) return null;
  return { at: m[1], kind: m[2] as LogKind, text: m[3] };
}

export function appendLogLine(file: string, l: LogLine): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, formatLogLine(l), { flag: 'a' });
}

/** "sustained batched r2-a1 PASS p50 3.1 ms, p99 8.2 ms" or "... FAIL: dropped: ...; drift: ...". */
export function verdictText(s: RepeatSummary): string {
  const ms = (x: number | null) => (x === null ? '—' : `${x} ms`);
  const head = `${s.kind} ${s.configuration} r${s.index}-a${s.attempt}`;
  const figures = `p50 ${ms(s.p50Ms)}, p99 ${ms(s.p99Ms)}, ${Math.round(s.deliveredRate)} ev/s`;
  if (s.cutShort) return `${head} CUT SHORT (${figures}): interrupted, not counted`;
  if (s.passed) return `${head} PASS ${figures}`;
  return `${head} FAIL ${figures}: ${s.reasons.join('; ')}`;
}

export function stepStartText(step: string): string {
  return step;
}

export function stepEndText(o: Pick<StepOutcome, 'step' | 'status' | 'summary'>): string {
  return `${o.step} ${o.status}${o.summary ? `: ${o.summary}` : ''}`;
}

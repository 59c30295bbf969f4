// Reading a campaign spec from a file or a built-in profile, with errors that name the file and field.
import fs from 'node:fs';
import path from 'node:path';
import { traceFileProblem } from '../lib/loadgen/trace-file';
import { stateDir } from '../lib/tools/paths';
import { historyProblem } from '../lib/protocol/history-budget';
import { seedDiskProblem, unjudgeableProblem, watchdogProblem } from '../lib/protocol/plan';
import { parseCampaignSpec, PROFILES, SpecError, type CampaignSpec } from '../lib/protocol/spec';

/** A spec that cannot be read or is refused: a usage error (exit 2), printed as it is, naming the file and field. */
export class SpecInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpecInputError';
  }
}

/**
 * The spec, parsed and checked against its own plan (a watchdog that covers it, a history under the
 * server's warning: lib/protocol/history-budget.ts, a seed that fits the RDS volume, repeats long
 * enough to be judged unless `allowUnjudgeable`), or an error naming the field. `baseline` (the
 * `--baseline ID` flag) pins the campaign the page compares with, over the file's; `host` (`--host H`)
 * pins the host it measures on.
 */
export function loadSpec(source: { file?: string; profile?: string; baseline?: string; host?: string; allowUnjudgeable?: boolean; extra?: string[] }): CampaignSpec {
  if (source.extra?.length) throw new SpecInputError(`one spec at a time: ${source.file} is the spec, and ${source.extra.map((e) => `'${e}'`).join(', ')} would be ignored; give one file (run the others as campaigns of their own)`);
  const parsed = parseSpec(source);
  const flags = { ...(source.baseline !== undefined ? { baseline: source.baseline } : {}), ...(source.host !== undefined ? { host: source.host } : {}) };
  const spec = Object.keys(flags).length ? parseFlagged({ ...parsed, ...flags }) : parsed;
  const where = source.file ?? `profile ${source.profile}`;
  // A plan whose history would pass the server's warning is refused here, before anything is started.
  const problem = watchdogProblem(spec) ?? historyProblem(spec);
  if (problem) throw new SpecInputError(`${where}: ${problem}`);
  const disk = seedDiskProblem(spec, spec.target === 'local' ? localFreeBytes() : undefined);
  if (disk) throw new SpecInputError(`${where}: ${disk.path.join('.')}: ${disk.message}`);
  const unjudgeable = source.allowUnjudgeable ? null : unjudgeableProblem(spec);
  if (unjudgeable) throw new SpecInputError(`${where}: ${unjudgeable.path.join('.')}: ${unjudgeable.message}`);
  checkTraces(spec, source.file ? path.dirname(path.resolve(source.file)) : process.cwd(), where);
  return spec;
}

/**
 * A trace workload's file is read here, before anything runs (refused naming the configuration and
 * what is wrong with the file), and its path made absolute: the worker that sends the load reads the
 * same file, whatever its working folder.
 */
function checkTraces(spec: CampaignSpec, specDir: string, where: string): void {
  spec.sustained?.configurations.forEach((c, i) => {
    const a = c.workload?.arrivals;
    if (a?.shape !== 'trace') return;
    const problem = traceFileProblem(c.workload, specDir);
    if (problem) throw new SpecInputError(`${where}: sustained.configurations[${i}].workload.arrivals.file: ${problem}`);
    a.file = path.resolve(specDir, a.file);
  });
}

/**
 * The free space where a local rig on this machine would put its cluster (RIG_PG_DATA_ROOT, else the
 * state folder; /var/tmp when root's clusters go there is the same disk on most hosts): the local
 * target runs on the host of the worker that claims it, which is this one for rig rehearse and for a
 * worker started beside the CLI.
 */
export function localFreeBytes(dir = process.env.RIG_PG_DATA_ROOT ?? stateDir()): { bytes: number; where: string } {
  let at = path.resolve(dir);
  while (!fs.existsSync(at)) at = path.dirname(at);
  const s = fs.statfsSync(at);
  return { bytes: s.bavail * s.bsize, where: at };
}

function parseSpec(source: { file?: string; profile?: string }): CampaignSpec {
  if (source.profile) {
    const p = PROFILES[source.profile as keyof typeof PROFILES];
    if (!p) throw new SpecInputError(`unknown profile "${source.profile}" (allowed: ${Object.keys(PROFILES).join(', ')})`);
    return parseCampaignSpec(p);
  }
  if (!source.file) throw new SpecInputError('give a spec file (e.g. examples/rehearsal.json) or --profile rehearsal|full');
  const json = readSpecJson(source.file);
  try {
    return parseCampaignSpec(json);
  } catch (err) {
    if (err instanceof SpecError) throw new SpecInputError(`${source.file}: ${err.message}`);
    throw err;
  }
}

/** A spec file's JSON: a missing path, a directory or bad JSON is named with its line, column and fix. A UTF-8 BOM is accepted. */
export function readSpecJson(file: string): unknown {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new SpecInputError(`spec ${file}: no such file: give the path of a spec file (e.g. examples/rehearsal.json), or --profile rehearsal|full`);
  }
  if (stat.isDirectory()) throw new SpecInputError(`spec ${file}: is a directory: give the path of a spec file in it (e.g. ${file.replace(/\/$/, '')}/rehearsal.json)`);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new SpecInputError(`cannot read spec ${file}: ${(err as Error).message}: check the file's permissions`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new SpecInputError(`${file} is not valid JSON: ${jsonErrorAt(text, (err as Error).message)}`);
  }
}

/** JSON.parse's message with its character position given as a line and a column (1-based), and the line itself. */
export function jsonErrorAt(text: string, message: string): string {
  const m = /\s*(?:in JSON )?at position (\d+)(?: \(line \d+ column \d+\))?/.exec(message);
  const pos = m ? Number(m[1]) : /Unexpected end of JSON input/.test(message) ? text.length : undefined;
  const what = (m ? message.slice(0, m.index) + message.slice(m.index + m[0].length) : message).trim();
  if (pos === undefined) return `${what}: check the file is one JSON object`;
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  const shown = (text.split('\n')[line - 1] ?? '').replace(/\r$/, '');
  return `${what} at line ${line}, column ${column}: ${JSON.stringify(shown.length > 120 ? `${shown.slice(0, 117)}...` : shown)} (a missing or extra comma, an unquoted name or a comment are the usual causes; JSON allows none)`;
}

function parseFlagged(input: unknown): CampaignSpec {
  try {
    return parseCampaignSpec(input);
  } catch (err) {
    if (err instanceof SpecError) throw new SpecInputError(`--baseline/--host: ${err.message}`);
    throw err;
  }
}

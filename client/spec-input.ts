// Reading a campaign spec from a file or a built-in profile, with errors that name the file and field.
import fs from 'node:fs';
import { watchdogProblem } from '../lib/protocol/plan';
import { parseCampaignSpec, PROFILES, SpecError, type CampaignSpec } from '../lib/protocol/spec';

/**
 * The spec, parsed and checked against its own plan (a watchdog that covers it), or an error naming the
 * field. `baseline` (the `--baseline ID` flag) pins the campaign the page compares with, over the file's.
 */
export function loadSpec(source: { file?: string; profile?: string; baseline?: string }): CampaignSpec {
  const parsed = parseSpec(source);
  const spec = source.baseline === undefined ? parsed : parseFlagged({ ...parsed, baseline: source.baseline });
  const problem = watchdogProblem(spec);
  if (problem) throw new Error(`${source.file ?? `profile ${source.profile}`}: ${problem}`);
  return spec;
}

function parseSpec(source: { file?: string; profile?: string }): CampaignSpec {
  if (source.profile) {
    const p = PROFILES[source.profile as keyof typeof PROFILES];
    if (!p) throw new Error(`unknown profile "${source.profile}" (allowed: ${Object.keys(PROFILES).join(', ')})`);
    return parseCampaignSpec(p);
  }
  if (!source.file) throw new Error('give a spec file (e.g. examples/rehearsal.json) or --profile rehearsal|full');
  let text: string;
  try {
    text = fs.readFileSync(source.file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read spec ${source.file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${source.file} is not valid JSON: ${(err as Error).message}`);
  }
  try {
    return parseCampaignSpec(json);
  } catch (err) {
    if (err instanceof SpecError) throw new Error(`${source.file}: ${err.message}`);
    throw err;
  }
}

function parseFlagged(input: unknown): CampaignSpec {
  try {
    return parseCampaignSpec(input);
  } catch (err) {
    if (err instanceof SpecError) throw new Error(`--baseline: ${err.message}`);
    throw err;
  }
}

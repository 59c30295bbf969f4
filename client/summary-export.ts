// `--summary-export FILE` (rig rehearse, rig campaign start --wait): the campaign's end as one JSON
// file a script reads instead of parsing the terminal, as k6's --summary-export does. Written
// atomically once the campaign has closed; the path is checked before anything starts, so a typo in
// it is a usage error, never a finished campaign whose summary is lost. Each configuration carries
// the repeats that ran and its state, so a never-run configuration reads "not run", not 0/3.
import fs from 'node:fs';
import path from 'node:path';
import type { CampaignResult } from '../lib/protocol/campaign-result';
import { configurationEnds, type ConfigurationEnd } from '../lib/protocol/configuration-state';
import { writeAtomic } from '../lib/evidence/atomic';
import { UsageError } from './parse-flags';

/** The file's shape: what a script needs to act on the run. */
export interface CampaignSummary {
  campaignId: string;
  name: string;
  target: string;
  status: CampaignResult['status'];
  /** What the command exits with (client/exit-codes.ts). */
  exitCode: number;
  error?: string;
  /** Each configuration: passed of total, the repeats that ran, and its state ('not run', 'not judged', 'held', 'not held'). */
  configurations: Array<Pick<ConfigurationEnd, 'name' | 'eventsPerSecond' | 'batch' | 'passed' | 'total' | 'ran' | 'held' | 'state'>>;
  rig: CampaignResult['rig'];
  resultsDir: string;
  reportPath?: string;
}

export function campaignSummary(result: CampaignResult, exitCode: number): CampaignSummary {
  return {
    campaignId: result.campaignId,
    name: result.name,
    target: result.target,
    status: result.status,
    exitCode,
    ...(result.error ? { error: result.error } : {}),
    configurations: configurationEnds(result).map((c) => ({ name: c.name, eventsPerSecond: c.eventsPerSecond, batch: c.batch, passed: c.passed, total: c.total, ran: c.ran, held: c.held, state: c.state })),
    rig: result.rig,
    resultsDir: result.resultsDir,
    ...(result.reportPath ? { reportPath: result.reportPath } : {}),
  };
}

/** Refuses, before anything runs, a FILE whose folder is missing or is itself a folder. */
export function assertWritable(file: string): void {
  const dir = path.dirname(path.resolve(file));
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`--summary-export ${file}: the folder ${dir} does not exist; make it, or give another path`);
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) throw new UsageError(`--summary-export ${file}: is a folder; give a file name (e.g. ${path.join(file, 'summary.json')})`);
}

export function writeSummary(file: string, result: CampaignResult, exitCode: number): void {
  writeAtomic(file, `${JSON.stringify(campaignSummary(result, exitCode), null, 2)}\n`);
  console.error(`summary: ${file}`);
}

// Recorded-path replay: each test that runs one of the campaign's main paths (held, refusal, abort,
// terminate, ladder, variants, aws) saves the history it just made and replays it at once against
// today's workflow code, in the same file (scripts/run-tests.cjs runs every file in its own process,
// so a replay step over a shared folder would race the files that write it). So the current code's
// own paths are replayed in CI, not only the accumulated fixtures (test/campaign/replay.test.ts): a
// change that makes a workflow issue other commands than it recorded fails the test that ran it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { rigWorkflowBundle } from '../../worker/workflow-bundle-cache';
import { toolPath } from '../../lib/tools/binaries';

const root = path.resolve(__dirname, '..', '..');


/** Replays one history (as the `temporal` CLI prints it) against today's workflows; throws on a nondeterminism error. */
export async function replayHistoryJson(json: unknown, workflowId: string): Promise<void> {
  // The workers' own bundle (cached by its sources): the code replayed is the code that ran.
  await Worker.runReplayHistory({ workflowBundle: await rigWorkflowBundle() }, json, workflowId);
}

/**
 * Replays every history in a fixtures folder (`<workflowId>.json` each) against today's workflows:
 * each history's replay error (undefined when it replays), by workflow id, for every file. Refuses
 * a folder with fewer than `atLeast` histories (a folder emptied by mistake replays nothing).
 */
export async function replayFolder(dir: string, atLeast: number): Promise<Map<string, Error | undefined>> {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  if (files.length < atLeast) throw new Error(`${files.length} histories to replay in ${dir}, expected at least ${atLeast}`);
  const histories = files.map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as unknown }));
  const out = new Map<string, Error | undefined>();
  for await (const r of Worker.runReplayHistories({ workflowBundle: await rigWorkflowBundle() }, histories)) out.set(r.workflowId, r.error);
  if (out.size !== histories.length) throw new Error(`replayed ${out.size} of ${histories.length} histories in ${dir}`);
  return out;
}

/**
 * Saves a closed workflow's history as the `temporal` CLI prints it, under test-output/histories/, and
 * replays it against the code at once (the header). test/fixtures/histories/ holds copies that
 * replay.test.ts keeps replaying, named by workflow id (replay needs the same id): copy a fresh one
 * there when the workflow changes on purpose.
 */
export async function saveHistory(address: string, workflowId: string, name = workflowId, runId?: string): Promise<string> {
  const out = path.join(root, 'test-output', 'histories', `${name}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const run = runId ? ['--run-id', runId] : []; // one run of a chain (default: the latest)
  const json = execFileSync(toolPath('temporal'), ['workflow', 'show', '--workflow-id', workflowId, ...run, '--address', address, '--output', 'json'], { maxBuffer: 64 * 1024 * 1024 });
  fs.writeFileSync(out, json);
  try {
    await replayHistoryJson(JSON.parse(json.toString('utf8')), workflowId);
  } catch (err) {
    throw new Error(`the fresh history of ${workflowId} (${out}) does not replay against the code that made it: ${(err as Error).message}`);
  }
  return out;
}

// test-mode: unit
// --summary-export FILE (rig rehearse, rig campaign start --wait): the campaign's end as JSON for a
// script, written atomically; a path whose folder is missing, or a folder, is refused before anything
// starts. Each configuration says how many repeats ran and its state, so a configuration that never
// ran reads "not run" (never 0/3), one stopped halfway "not judged"; rig campaign watch -o json too.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { campaignExitCode } from '../../client/exit-codes';
import { UsageError } from '../../client/parse-flags';
import { assertWritable, campaignSummary, writeSummary } from '../../client/summary-export';
import { watchJson } from '../../client/commands/campaign';
import { resultLines } from '../../client/progress-view';
import type { CampaignResult, RepeatSummary } from '../../lib/protocol/campaign-result';

const repeat = (configuration: string, index: number, passed: boolean, kind: RepeatSummary['kind'] = 'sustained'): RepeatSummary =>
  ({ configuration, index, attempt: 1, runTag: `${configuration}-${index}`, kind, passed, reasons: [] }) as unknown as RepeatSummary;

const result = {
  campaignId: 'nightly-1',
  name: 'rehearsal',
  target: 'local',
  status: 'not-held',
  steps: [],
  repeats: [1, 2, 3].flatMap((i) => [repeat('single', i, true), repeat('batched', i, i !== 2)]),
  interrupted: [],
  configurations: [
    { name: 'single', eventsPerSecond: 200, batch: 1, passed: 3, total: 3, held: true },
    { name: 'batched', eventsPerSecond: 1000, batch: 10, passed: 2, total: 3, held: false },
  ],
  rig: 'destroyed',
  resultsDir: '/state/results/nightly-1',
  reportPath: '/state/results/nightly-1/report.html',
} satisfies CampaignResult;

test('the summary says the status, the exit code, each configuration and where the page is', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-summary-'));
  try {
    const file = path.join(dir, 'summary.json');
    const original = console.error;
    console.error = () => {};
    try {
      writeSummary(file, result, campaignExitCode(result.status));
    } finally {
      console.error = original;
    }
    const s = JSON.parse(fs.readFileSync(file, 'utf8')) as ReturnType<typeof campaignSummary>;
    assert.deepEqual(s, campaignSummary(result, 99));
    assert.equal(s.exitCode, 99);
    assert.deepEqual(s.configurations.map((c) => `${c.name} ${c.passed}/${c.total} ran ${c.ran} ${c.held} ${c.state}`), ['single 3/3 ran 3 true held', 'batched 2/3 ran 3 false not held']);
    assert.equal(s.reportPath, result.reportPath);
    assert.throws(() => assertWritable(path.join(dir, 'no-such', 's.json')), (e: unknown) => e instanceof UsageError && /the folder .*no-such does not exist/.test(e.message));
    assert.throws(() => assertWritable(dir), (e: unknown) => e instanceof UsageError && /is a folder; give a file name/.test(e.message));
    assertWritable(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a campaign stopped early: the configuration that never ran is "not run" with ran 0, the one stopped halfway "not judged", in the summary, in watch -o json and in the closing lines alike', () => {
  const stopped = {
    ...result,
    status: 'failed',
    error: 'seed: gave up',
    // single stopped after two repeats; the ceiling is not a repeat of single; batched never started.
    repeats: [repeat('single', 1, true), repeat('single', 2, true), repeat('single', 0, true, 'ceiling')],
    configurations: [
      { name: 'single', eventsPerSecond: 200, batch: 1, passed: 2, total: 3, held: false },
      { name: 'batched', eventsPerSecond: 1000, batch: 10, passed: 0, total: 3, held: false },
    ],
  } satisfies CampaignResult;
  const expected = [
    { name: 'single', passed: 2, total: 3, ran: 2, state: 'not judged' },
    { name: 'batched', passed: 0, total: 3, ran: 0, state: 'not run' },
  ];
  const pick = (cs: Array<{ name: string; passed: number; total: number; ran: number; state: string }>) => cs.map(({ name, passed, total, ran, state }) => ({ name, passed, total, ran, state }));
  const summary = campaignSummary(stopped, campaignExitCode(stopped.status));
  assert.equal(summary.exitCode, 1);
  assert.deepEqual(pick(summary.configurations), expected);
  const watched = watchJson(stopped);
  assert.deepEqual(pick(watched.configurations), expected);
  assert.deepEqual(watched.repeats, stopped.repeats, 'the rest of the result as the workflow returned it');
  const lines = resultLines(stopped);
  assert.match(lines[1], /single .*: 2 of 2 passed; only 2 of 3 repeats ran: not judged$/);
  assert.match(lines[2], /batched .*: not run \(0\/3 repeats ran\)$/);
});

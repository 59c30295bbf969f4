// test-mode: unit
// --summary-export FILE (rig rehearse, rig campaign start --wait): the campaign's end as JSON for a
// script, written atomically; a path whose folder is missing, or a folder, is refused before anything
// starts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { campaignExitCode } from '../../client/exit-codes';
import { UsageError } from '../../client/parse-flags';
import { assertWritable, campaignSummary, writeSummary } from '../../client/summary-export';
import type { CampaignResult } from '../../lib/protocol/campaign-result';

const result = {
  campaignId: 'nightly-1',
  name: 'rehearsal',
  target: 'local',
  status: 'not-held',
  steps: [],
  repeats: [],
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
    assert.deepEqual(s.configurations.map((c) => `${c.name} ${c.passed}/${c.total} ${c.held}`), ['single 3/3 true', 'batched 2/3 false']);
    assert.equal(s.reportPath, result.reportPath);
    assert.throws(() => assertWritable(path.join(dir, 'no-such', 's.json')), (e: unknown) => e instanceof UsageError && /the folder .*no-such does not exist/.test(e.message));
    assert.throws(() => assertWritable(dir), (e: unknown) => e instanceof UsageError && /is a folder; give a file name/.test(e.message));
    assertWritable(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// test-mode: unit
// The lines a campaign ends with (client/progress-view.ts resultLines): each configuration by what
// ran, so a configuration the campaign stopped before reads "not run", never "0/3 passed, NOT held".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { progressLine, resultLines } from '../../client/progress-view';
import type { CampaignResult, RepeatSummary } from '../../lib/protocol/campaign-result';

const repeat = (configuration: string, index: number, passed: boolean): RepeatSummary =>
  ({ configuration, index, attempt: 1, runTag: `t${index}`, kind: 'sustained', passed, reasons: [] }) as unknown as RepeatSummary;

function result(repeats: RepeatSummary[], status: CampaignResult['status']): CampaignResult {
  const conf = (name: string) => {
    const mine = repeats.filter((r) => r.configuration === name);
    const passed = mine.filter((r) => r.passed).length;
    return { name, eventsPerSecond: 200, batch: 1, passed, total: 3, held: mine.length === 3 && passed === 3 };
  };
  return { campaignId: 'c', status, configurations: [conf('single'), conf('batched')], repeats, interrupted: [], rig: 'torn-down' } as unknown as CampaignResult;
}

test('a configuration that never ran reads "not run"; one stopped halfway is not judged', () => {
  const lines = resultLines(result([repeat('single', 1, true), repeat('single', 2, false)], 'failed'));
  assert.equal(lines[1], '  single       200 ev/s batch 1: 1 of 2 passed; only 2 of 3 repeats ran: not judged');
  assert.equal(lines[2], '  batched      200 ev/s batch 1: not run (0/3 repeats ran)');
  assert.ok(!lines.some((l) => /0\/3 passed/.test(l)), lines.join('\n'));
});

test('configurations that ran every repeat keep their verdict', () => {
  const all = (name: string, pass: boolean) => [1, 2, 3].map((i) => repeat(name, i, pass || i !== 2));
  const lines = resultLines(result([...all('single', true), ...all('batched', false)], 'not-held'));
  assert.equal(lines[1], '  single       200 ev/s batch 1: 3/3 passed, held');
  assert.equal(lines[2], '  batched      200 ev/s batch 1: 2/3 passed, NOT held');
});

test('the database calibration\'s line, as `rig calibrate --database` ends, when the campaign ran it', () => {
  const ran = (status: string, summary: string) => ({ ...result([], 'failed'), steps: [{ step: 'calibrate-database', status, summary }] }) as unknown as CampaignResult;
  assert.ok(resultLines(ran('ok', 'database CALIBRATED 5/5')).includes('  database CALIBRATED 5/5'));
  assert.ok(resultLines(ran('ok', 'database NOT CALIBRATED 4/5: lock wait (fix: x)')).includes('  database NOT CALIBRATED 4/5: lock wait (fix: x)'));
  assert.ok(resultLines(ran('failed', 'no superuser')).includes('  database calibration failed: no superuser'));
  assert.ok(!resultLines(result([], 'failed')).some((l) => /database/.test(l)));
});

test('the progress line never calls an invalid or NOT JUDGED repeat FAIL: it was not the target\'s failure', () => {
  const base = { campaignId: 'c', step: 'sustained' as const, status: 'running' as const, startedAt: '2026-12-05T00:00:00Z', secondsLeft: 0, aborting: false };
  const last = (x: object) => progressLine({ ...base, lastVerdicts: [{ configuration: 'single', index: 3, attempt: 1, passed: false, p99Ms: 4.1, reasons: [], ...x }] });
  assert.match(last({ notJudged: ['drift not judgeable'] }), /last: single r3 NOT JUDGED \(drift not judgeable\) p99 4\.1 ms/);
  assert.match(last({ invalid: 'instrument: schedule lag p99 9 ms' }), /last: single r3 INVALID \(instrument\)/);
  assert.match(last({}), /last: single r3 FAIL p99 4\.1 ms/);
  assert.match(last({ passed: true }), /last: single r3 PASS/);
});

// test-mode: unit
// A repeat NOT JUDGED on drift is neither a pass nor the service's failure (issue 34). Its drift
// interval straddled the limit: every other check passed, and the thirds were too small to decide.
// Before this, such a repeat counted as a failed one. Its configuration then read NOT HELD, while the
// repeat's own reason said "not the service's fault". That was what the near-quiet rehearsal of
// 2026-12-05 showed: single 1/3, r2 and r3 not judgeable at p99 ~4 ms. Now the configuration reads
// NOT JUDGED (drift), and the campaign does too (exit 4) unless another configuration failed. Every
// reader says the same: the closing lines, the rehearsal's last line and the page's passed cell.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { campaignExitCode } from '../../client/exit-codes';
import { resultLines } from '../../client/progress-view';
import { rehearsalExitCode, rehearsalVerdictLine } from '../../client/rehearsal-exit';
import type { ConfigurationModel } from '../../lib/evidence/report/model-types';
import { passedLabel } from '../../lib/evidence/report/tables';
import type { CampaignResult, ConfigurationOutcome, RepeatSummary } from '../../lib/protocol/campaign-result';
import { campaignVerdict, configurationCounts, configurationEnds } from '../../lib/protocol/configuration-state';
import type { GateVerdict } from '../../lib/protocol/gates';
import { summarizeRepeat } from '../../lib/protocol/repeat-summary';
import type { RunReport } from '../../lib/protocol/run-report';
import { repeatVerdict, type ProbeVerdict } from '../../lib/protocol/verdicts';

const OFF: ProbeVerdict = { state: 'OFF', budget_ms: 500, reasons: [], endpoints: [] };
const gate = (o: Partial<GateVerdict>): GateVerdict => ({ kind: 'sustained', passed: true, reconciled: true, reasons: [], checks: [], unchecked: [], notes: [], ...o });
const report = { samples: 10_800, dropped: 0, failed: 0, p50_ms: 1.2, p99_ms: 4.1, freeze_seconds: [], windows: [], probe: { verdict: 'OFF', endpoints: {} } } as unknown as RunReport;
const id = (index: number) => ({ configuration: 'single', index, attempt: 1, runTag: `t${index}`, kind: 'sustained' as const, dir: `repeats/single/r${index}-a1`, cutShort: false });

const passed = (k: number) => summarizeRepeat(id(k), report, repeatVerdict(gate({}), OFF), { probe: false, reconciled: true });
const undecided = (k: number) => summarizeRepeat(id(k), report, repeatVerdict(gate({ unchecked: ['drift'] }), OFF), { probe: false, reconciled: true });
const failed = (k: number) =>
  summarizeRepeat(id(k), report, repeatVerdict(gate({ passed: false, reasons: ['drift: x1.9 (x1.6-x2.2) >= limit x1.5'], unchecked: [] }), OFF), { probe: false, reconciled: true });

function outcome(repeats: RepeatSummary[], total = 3): ConfigurationOutcome {
  const { ran: _ran, ...c } = configurationCounts(repeats, 'single', total);
  return { name: 'single', eventsPerSecond: 240, batch: 1, total, ...c };
}

test("a repeat whose drift interval straddles the limit carries why it has no verdict; a judged one does not", () => {
  const s = undecided(2);
  assert.equal(s.passed, false, 'not a pass');
  assert.deepEqual(s.notJudged, ['drift not judgeable']);
  assert.equal(passed(1).notJudged, undefined);
  assert.equal(failed(3).notJudged, undefined, 'a failure is a verdict');
});

test('a configuration whose repeats passed or were not judged on drift is NOT JUDGED (drift), never NOT HELD; the campaign exits 4', () => {
  const repeats = [passed(1), undecided(2), undecided(3)];
  assert.deepEqual(configurationCounts(repeats, 'single', 3), { ran: 3, passed: 1, held: false, notJudged: 'drift' });
  const c = outcome(repeats);
  assert.equal(configurationEnds({ configurations: [c], repeats })[0].state, 'not judged (drift)');
  assert.equal(campaignVerdict([c], true), 'not-judged');
  assert.equal(campaignExitCode(campaignVerdict([c], true)), 4);
  assert.equal(campaignVerdict([c], false), 'uncalibrated', 'without a calibration nothing is a verdict: that is said first');

  // A real failure beside it is the service's: NOT HELD, as before.
  const withFailure = [passed(1), undecided(2), failed(3)];
  assert.deepEqual(configurationCounts(withFailure, 'single', 3), { ran: 3, passed: 1, held: false });
  assert.equal(campaignVerdict([outcome(withFailure)], true), 'not-held');
  // ... and in another configuration too: the campaign is NOT HELD.
  const other: ConfigurationOutcome = { ...outcome([failed(1)], 1), name: 'batched' };
  assert.equal(campaignVerdict([c, other], true), 'not-held');
  // Every repeat judged and passed: held.
  assert.equal(campaignVerdict([outcome([passed(1), passed(2), passed(3)])], true), 'held');
  // An instrument's unjudged repeat names the instrument first.
  const invalidTwice = [{ ...failed(1), invalid: 'instrument: late' }, { ...failed(1), attempt: 2, invalid: 'instrument: late again' }, undecided(2), passed(3)];
  assert.equal(configurationCounts(invalidTwice, 'single', 3).notJudged, 'instrument');
});

test('the closing lines, the rehearsal\'s last line and the page name the drift, and the repeats, not the service', () => {
  const repeats = [passed(1), undecided(2), undecided(3)];
  const result = { campaignId: 'c', status: 'not-judged', steps: [], repeats, interrupted: [], configurations: [outcome(repeats)] } as unknown as CampaignResult;
  const lines = resultLines(result).join('\n');
  assert.match(lines, /single .*1 of 3 repeats passed, none failed; NOT JUDGED \(drift\): r2 and r3 passed every other gate/);
  assert.doesNotMatch(lines, /NOT held/);
  assert.match(rehearsalVerdictLine(result), /no configuration failed, but NOT JUDGED \(drift\)/);
  assert.doesNotMatch(rehearsalVerdictLine(result), /instrument/);
  assert.equal(rehearsalExitCode(result), 0, 'the rig ran end to end');
  assert.equal(rehearsalExitCode(result, true), 4, '--require-held');

  const page = { planned: 3, repeats: [{ status: 'passed', repeat: 1 }, { status: 'not-judged', repeat: 2 }, { status: 'not-judged', repeat: 3 }], summary: { label: '1/3', interrupted: 0 } } as unknown as ConfigurationModel;
  assert.equal(passedLabel(page), 'NOT JUDGED (drift): r2, r3 passed every other gate, the drift interval straddles the limit; passed 1/3');
  const withFail = { ...page, repeats: [...page.repeats.slice(0, 2), { status: 'failed', repeat: 3 }] } as unknown as ConfigurationModel;
  assert.equal(passedLabel(withFail), '1/3');
});

// test-mode: unit
// An instrument failure is the instrument's (issue 34): which failed repeats are invalid, how many
// re-runs a configuration takes, how a configuration and the campaign read when a repeat is left
// without a valid attempt, and what the CLI exits with then.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { campaignExitCode } from '../../client/exit-codes';
import type { ConfigurationOutcome, RepeatSummary } from '../../lib/protocol/campaign-result';
import { campaignVerdict, configurationCounts, configurationEnds, configurationState } from '../../lib/protocol/configuration-state';
import type { CheckName } from '../../lib/protocol/gates';
import { countedRepeats, INVALID_STEAL_PCT, invalidReason, mayRerun, stealBoundFromCalibration, stealSpread, type ValidityInput } from '../../lib/protocol/repeat-validity';
import { stealPct } from '../../lib/evidence/steal-watch';

const check = (name: CheckName, passed: boolean | null, detail = `${name} detail`) => ({ name, passed, detail });
const names: CheckName[] = ['threshold', 'delivered', 'dropped', 'failed', 'rows', 'quantity', 'samples', 'drift', 'instrument'];
/** A sustained verdict in which exactly `failing` failed. */
function verdict(failing: CheckName[], o: Partial<ValidityInput> = {}): ValidityInput {
  const passed = failing.length === 0;
  return { state: passed ? 'PASS' : 'FAIL', passed, checks: names.map((n) => check(n, !failing.includes(n), n === 'instrument' ? 'schedule lag p99 120 ms > 5 ms' : `${n} detail`)), probeState: 'OFF', afterLoad: 0, ...o };
}

test('a repeat failed on the instrument gate (with the failures a late generator explains) is invalid, naming the lag', () => {
  assert.equal(invalidReason(verdict(['instrument']), null), 'instrument: schedule lag p99 120 ms > 5 ms');
  assert.match(invalidReason(verdict(['instrument', 'threshold', 'drift', 'dropped', 'delivered']), null)!, /^instrument: schedule lag/);
});

test("a failure the instrument does not explain stays the target's: failed requests, rows, quantity, samples, the probe, after the load, cut short", () => {
  for (const other of ['failed', 'rows', 'quantity', 'samples'] as CheckName[]) assert.equal(invalidReason(verdict(['instrument', other]), { max: 50, median: 40 }), null, other);
  assert.match(invalidReason(verdict(['instrument', 'dropped', 'samples']), null)!, /^instrument:/, 'too few samples because requests were dropped: the drops\' shortfall');
  assert.equal(invalidReason(verdict(['instrument'], { probeState: 'DEGRADED' }), null), null);
  assert.equal(invalidReason(verdict(['instrument'], { afterLoad: 1 }), null), null);
  assert.equal(invalidReason(verdict(['instrument'], { state: 'CUT SHORT' }), null), null);
  assert.equal(invalidReason(verdict([]), { max: 50, median: 40 }), null, 'a pass under steal is a pass');
});

test('a failure on latency while the host CPU steal reached the bound is invalid; under it, it is a failure', () => {
  assert.equal(invalidReason(verdict(['drift']), { max: INVALID_STEAL_PCT - 0.1, median: 1 }), null);
  assert.equal(invalidReason(verdict(['drift']), null), null, 'not sampled: no excuse');
  assert.equal(
    invalidReason(verdict(['drift', 'threshold']), { max: 9.04, median: 3.5 }),
    "host CPU steal: up to 9.04 % (median 3.5 %) >= bound 5 %, the hypervisor took the load host's CPU",
  );
  assert.match(invalidReason(verdict(['threshold']), { max: 12, median: 2 }, 20) ?? 'null', /^null$/, 'the bound is the one given');
  assert.deepEqual(stealSpread([0, 3, 9, 1]), { max: 9, median: 2 });
  assert.equal(stealSpread([]), null);
});

const summary = (index: number, attempt: number, passed: boolean, invalid?: string): RepeatSummary =>
  ({ configuration: 'single', index, attempt, passed, kind: 'sustained', ...(invalid ? { invalid } : {}) }) as RepeatSummary;

test('one re-run per configuration: the first invalid repeat takes it, a second invalid one (its re-run or a later repeat) does not', () => {
  assert.equal(mayRerun([summary(1, 1, true)], 'single'), false, 'nothing invalid: nothing to re-run');
  assert.equal(mayRerun([summary(1, 1, false, 'instrument: late')], 'single'), true);
  assert.equal(mayRerun([summary(1, 1, false, 'instrument: late'), summary(1, 2, false, 'instrument: late')], 'single'), false);
  assert.equal(mayRerun([summary(1, 1, false, 'instrument: late'), summary(1, 2, true), summary(2, 1, false, 'instrument: late')], 'single'), false);
  assert.equal(mayRerun([summary(1, 1, false, 'instrument: late')], 'batched'), false, 'per configuration');
  assert.equal(countedRepeats([summary(1, 1, false, 'x'), summary(1, 2, true)]).length, 1);
});

test('a configuration counts valid repeats only; a repeat with no valid attempt makes it NOT JUDGED (instrument), unless a valid repeat failed', () => {
  // Invalid, then its re-run passed, and the other two passed: held 3/3, one invalid shown.
  const rerunPassed = [summary(1, 1, false, 'instrument: late'), summary(1, 2, true), summary(2, 1, true), summary(3, 1, true)];
  assert.deepEqual(configurationCounts(rerunPassed, 'single', 3), { ran: 3, passed: 3, held: true, invalid: 1 });
  // Invalid twice: not judged.
  const twice = [summary(1, 1, false, 'instrument: late'), summary(1, 2, false, 'instrument: late again')];
  assert.deepEqual(configurationCounts(twice, 'single', 1), { ran: 0, passed: 0, held: false, invalid: 2, notJudged: 'instrument' });
  // Invalid twice beside a real failure: the target's failure outranks: not held.
  const withFail = [...twice, summary(2, 1, false)];
  assert.deepEqual(configurationCounts(withFail, 'single', 2), { ran: 1, passed: 0, held: false, invalid: 2 });
  // Before invalid repeats existed: every summary counted, as before.
  assert.deepEqual(configurationCounts([summary(1, 1, true), summary(2, 1, false)], 'single', 2), { ran: 2, passed: 1, held: false });

  const outcome = (counts: ReturnType<typeof configurationCounts>, total: number): ConfigurationOutcome => {
    const { ran: _ran, ...c } = counts;
    return { name: 'single', eventsPerSecond: 200, batch: 1, total, ...c };
  };
  const ends = (repeats: RepeatSummary[], total: number) => configurationEnds({ configurations: [outcome(configurationCounts(repeats, 'single', total), total)], repeats })[0];
  assert.equal(ends(rerunPassed, 3).state, 'held');
  assert.equal(ends(rerunPassed, 3).ran, 3);
  assert.equal(ends(twice, 1).state, 'not judged (instrument)');
  assert.equal(ends(withFail, 2).state, 'not held');
  // Unchanged readings of results without invalid repeats.
  assert.equal(configurationState(0, 3, false), 'not run');
  assert.equal(configurationState(2, 3, false), 'not judged');
  assert.equal(configurationState(3, 3, false), 'not held');
  assert.equal(configurationState(3, 3, true), 'held');

  // The campaign: a valid failure anywhere is NOT HELD; otherwise a configuration the instrument could
  // not judge makes it NOT JUDGED (exit 4, never 99), calibrated or not.
  const held = outcome(configurationCounts(rerunPassed, 'single', 3), 3);
  const unjudged = outcome(configurationCounts(twice, 'single', 1), 1);
  const failed = outcome(configurationCounts([summary(1, 1, false)], 'single', 1), 1);
  assert.equal(campaignVerdict([held], true), 'held');
  assert.equal(campaignVerdict([held], false), 'uncalibrated');
  assert.equal(campaignVerdict([held, unjudged], true), 'not-judged');
  assert.equal(campaignVerdict([held, unjudged], false), 'not-judged');
  assert.equal(campaignVerdict([unjudged, failed], true), 'not-held');
  assert.equal(campaignVerdict([unjudged, failed], false), 'uncalibrated');
  assert.equal(campaignExitCode(campaignVerdict([held, unjudged], true)), 4);
});

test('the steal bound is set by the calibration: what the instrument was proven under, never below the constant', () => {
  assert.equal(stealBoundFromCalibration(null), INVALID_STEAL_PCT, 'no steal read (an older calibration): the constant');
  assert.equal(stealBoundFromCalibration({ max: 0.4 }), INVALID_STEAL_PCT, 'a quiet host: the constant');
  assert.equal(stealBoundFromCalibration({ max: 8.2 }), 9, 'CALIBRATED with up to 8.2 % steal: only steal beyond it is the host\'s excuse');
  // and that bound decides a failed repeat: 7 % steal is the target's after a calibration under 8.2 %
  const late: ValidityInput = { state: 'FAIL', passed: false, checks: [{ name: 'threshold', passed: false, detail: 'p99 80 ms > 50 ms' }], probeState: 'OK', afterLoad: 0 };
  assert.match(invalidReason(late, { max: 7, median: 6 }) ?? '', /host CPU steal/, 'against the constant 5 %: the host\'s');
  assert.equal(invalidReason(late, { max: 7, median: 6 }, stealBoundFromCalibration({ max: 8.2 })), null, 'against the calibration\'s 9 %: the target\'s');
});

test('steal between two /proc/stat readings is its share of the CPU time that passed', () => {
  const stat = (user: number, idle: number, steal: number) => `cpu  ${user} 0 0 ${idle} 0 0 0 ${steal} 0 0\nctxt 1\n`;
  assert.equal(stealPct(stat(100, 100, 0), stat(160, 120, 20)), 20);
  assert.equal(stealPct(stat(100, 100, 0), stat(100, 100, 0)), null, 'no time passed');
});

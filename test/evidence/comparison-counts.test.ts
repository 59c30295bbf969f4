// test-mode: unit
// A treatment's pass count beside its control's, as the page compares them: an attempt the instrument
// made invalid (re-run, not the service's failure) is not counted, as the page's own "5/5 (+1 invalid:
// the instrument's, not counted)" does not count it. The quiet-host provoked campaign of issue 45
// (sensitivity-provoked-20261207T182351Z) read "passed 5/6: lost passes" for a treatment whose 5
// repeats all passed, because its first attempt was invalid.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareRepeats } from '../../lib/protocol/compare';
import { repeatFigures } from '../../lib/evidence/report';
import type { RepeatModel } from '../../lib/evidence/report/model-types';

const repeat = (repeat: number, attempt: number, status: RepeatModel['status']) =>
  ({ id: `single r${repeat}-a${attempt}`, config: 'single', kind: 'sustained', repeat, attempt, dir: '', status, reasons: [], gate_reasons: [], report: null, checks: [], db: null, host: null }) as unknown as RepeatModel;

test('an invalid attempt is not a lost pass; a failed repeat is', () => {
  const control = [1, 2, 3, 4, 5].map((k) => repeatFigures(repeat(k, 1, 'passed')));
  const withInvalid = [repeat(1, 1, 'invalid'), repeat(1, 2, 'passed'), ...[2, 3, 4, 5].map((k) => repeat(k, 1, 'passed'))].map(repeatFigures);
  const cmp = compareRepeats(control, withInvalid);
  assert.deepEqual([cmp.control.label, cmp.variant.label, cmp.lost_passes], ['5/5', '5/5', false]);
  const withFailure = [repeat(1, 1, 'failed'), ...[2, 3, 4, 5].map((k) => repeat(k, 1, 'passed'))].map(repeatFigures);
  const lost = compareRepeats(control, withFailure);
  assert.deepEqual([lost.variant.label, lost.lost_passes], ['4/5', true]);
  // An interrupted attempt is not counted either (unchanged).
  const withInterrupted = [repeat(1, 1, 'interrupted'), ...[1, 2, 3, 4, 5].map((k) => repeat(k, k === 1 ? 2 : 1, 'passed'))].map(repeatFigures);
  assert.equal(compareRepeats(control, withInterrupted).lost_passes, false);
});

// test-mode: unit
// rig rehearse's exit code: 0 when the rig ran end to end (either verdict, printed beside it), 1 when it
// did not; --require-held makes HELD the only 0 and NOT-HELD 99 (client/exit-codes.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rehearsalExitCode, rehearsalVerdictLine } from '../../client/rehearsal-exit';
import type { CampaignStatus } from '../../lib/protocol/campaign-result';

test('HELD, NOT-HELD and NOT JUDGED (instrument) exit 0 (the rig worked; --require-held: 4 on NOT JUDGED); everything else exits 1; --require-held exits 99 on NOT-HELD', () => {
  const all: CampaignStatus[] = ['held', 'not-held', 'not-judged', 'uncalibrated', 'dirty', 'failed', 'aborted', 'cancelled'];
  assert.deepEqual(all.map((status) => rehearsalExitCode({ status })), [0, 0, 0, 1, 1, 1, 1, 1]);
  assert.deepEqual(all.map((status) => rehearsalExitCode({ status }, true)), [0, 99, 4, 1, 1, 1, 1, 1]);
  assert.match(rehearsalVerdictLine({ status: 'not-judged' }, true), /NOT JUDGED \(instrument\).*Exit 4: not a verdict on the service/);
  assert.match(rehearsalVerdictLine({ status: 'not-judged' }), /NOT JUDGED \(instrument\).*Exit 0: not a verdict on the service; rig rehearse --require-held and rig campaign start --wait exit 4 on it/);
});

test('the last line says what the exit code means, so 0 beside NOT-HELD is never read as HELD', () => {
  assert.match(rehearsalVerdictLine({ status: 'not-held' }), /the verdict is NOT-HELD .*Exit 0: the rig worked; rig rehearse --require-held and rig campaign start --wait exit 99 on NOT-HELD/);
  assert.match(rehearsalVerdictLine({ status: 'not-held' }, true), /NOT-HELD .*--require-held: exit 99/);
  assert.match(rehearsalVerdictLine({ status: 'dirty' }), /did not run end to end \(DIRTY; exit 1\)/);
  assert.match(rehearsalVerdictLine({ status: 'held' }), /HELD \(exit 0\)/);
});

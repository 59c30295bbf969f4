// test-mode: unit
// Issue 47, item 9: RIG_CLEAN_CHECK_SCOPE=state narrows the local clean check to this state folder's
// processes, so a rig of another state folder is no leftover. `npm test` needs that (its files run side
// by side, each with its own state folder) and sets RIG_TESTING=1 with it; outside the test suite the
// switch would let a campaign's "clean" rest on a narrowed scan, so the check refuses to look and says
// which variable and the fix. Nothing is scanned on the refused path: no server, no rig.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { cleanCheckLocal, defaultScope } from '../../lib/targets/local/clean-check';
import { TestSwitchRefusal } from '../../lib/tools/test-switch';

const REFUSED =
  "RIG_CLEAN_CHECK_SCOPE=state is a test-only switch (it narrows the processes this clean check counts to this state folder's, so a rig of another state folder is not a leftover), honoured only when RIG_TESTING=1 (the test suite sets it): unset RIG_CLEAN_CHECK_SCOPE";

const saved = { scope: process.env.RIG_CLEAN_CHECK_SCOPE, testing: process.env.RIG_TESTING };
afterEach(() => {
  for (const [k, v] of [['RIG_CLEAN_CHECK_SCOPE', saved.scope], ['RIG_TESTING', saved.testing]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

test('the default scope: the machine; RIG_CLEAN_CHECK_SCOPE=state under RIG_TESTING=1 narrows it to the state folder', () => {
  assert.equal(defaultScope({}), 'machine');
  assert.equal(defaultScope({ RIG_TESTING: '1' }), 'machine');
  assert.equal(defaultScope({ RIG_TESTING: '1', RIG_CLEAN_CHECK_SCOPE: 'state' }), 'state');
});

test('RIG_CLEAN_CHECK_SCOPE outside the test suite is refused, naming it and the fix', () => {
  for (const env of [{ RIG_CLEAN_CHECK_SCOPE: 'state' }, { RIG_CLEAN_CHECK_SCOPE: 'state', RIG_TESTING: '0' }]) {
    assert.throws(
      () => defaultScope(env),
      (err: Error) => err instanceof TestSwitchRefusal && err.variable === 'RIG_CLEAN_CHECK_SCOPE' && err.message === REFUSED,
    );
  }
});

test('the clean check itself, with RIG_CLEAN_CHECK_SCOPE=state and no RIG_TESTING: could not look, naming the variable (never clean)', async () => {
  process.env.RIG_CLEAN_CHECK_SCOPE = 'state';
  delete process.env.RIG_TESTING;
  assert.deepEqual(await cleanCheckLocal(), { status: 'could-not-look', reason: REFUSED, leftovers: [] });
  // A scope given by the caller (`rig check --scope state`) is the caller's choice, said on its command line: not refused.
  const given = await cleanCheckLocal({ scope: 'state' });
  assert.ok(!(given.status === 'could-not-look' && given.reason === REFUSED), JSON.stringify(given));
});

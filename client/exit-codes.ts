// What every `rig` command exits with, in one place: the commands return these and every --help
// lists them (client/command.ts appends EXIT_CODES_HELP), so a script can tell "the service did
// not hold" from "the tool failed" from "nothing answered", whatever the command.
//
// 99 for a negative verdict follows k6, which exits 99 when a threshold fails for the same reason;
// 69 for "nothing answered" is sysexits.h's EX_UNAVAILABLE ("a service is unavailable"); 130 is the
// shell's 128 + SIGINT. 3 and 4 are the instrument's two "not a PASS, not a FAIL" readings
// (rig analyze, rig measure: lib/protocol/verdicts.ts VerdictState).
import type { VerdictState } from '../lib/protocol/verdicts';
import type { CampaignStatus } from '../lib/protocol/campaign-result';

export const EXIT = {
  /** Done: HELD, PASS, clean, calibrated, the page written. */
  OK: 0,
  /** The tool or the run failed: a crash, a step that gave up, a campaign failed, dirty, cancelled or uncalibrated. */
  FAILED: 1,
  /** Usage, spec or set-up error (a bad flag, a refused spec, a folder PostgreSQL cannot reach): nothing was started. */
  USAGE: 2,
  /** rig analyze/measure: every check that ran passed, but the rows were never counted (no --reconcile/--db). */
  UNRECONCILED: 3,
  /**
   * rig analyze/measure: every check that ran passed, but there is no threshold to judge by (NOT JUDGED);
   * a campaign (and the rehearsal): no configuration failed, but one is NOT JUDGED: (instrument) a
   * repeat was invalid twice (the generator late, or the host's CPU stolen), or (drift) a repeat's
   * drift interval straddled the limit; never NOT HELD.
   */
  UNJUDGED: 4,
  /** Could not reach Temporal or the target (nothing answered, TLS refused, an endpoint down): nothing was judged. */
  UNREACHABLE: 69,
  /** Ran to its end, and the verdict is NOT-HELD (a FAIL, a regression against the baseline). */
  NOT_HELD: 99,
  /** Cut short by SIGINT/SIGTERM (what was written up to then is still valid). */
  CUT_SHORT: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The table every --help ends with. */
export const EXIT_CODES_HELP = `exit codes (the same in every rig command; docs: README "Exit codes"):
  0   done: HELD / PASS / clean
  1   failed: the tool or the run failed (a crash, a step that gave up; a campaign failed, dirty,
      cancelled or uncalibrated)
  2   usage, spec or set-up error: nothing was started (the field, flag or folder is named, with
      the fix)
  3   UNRECONCILED (analyze, measure): the rows were never counted, so not a PASS
  4   NOT JUDGED (analyze, measure): no threshold to judge by, so not a PASS; a campaign or
      rehearsal: no configuration NOT-HELD, but one NOT JUDGED: (instrument) a repeat invalid
      twice (the generator late or the host's CPU stolen), or (drift) a drift interval that
      straddled the limit
  69  could not reach Temporal or the target: nothing was judged
  99  ran to its end, and the verdict is NOT-HELD (FAIL, a regression against the baseline)
  130 cut short by a signal`;

/** A campaign's end as an exit code (`rig campaign start --wait`, `rig campaign watch`). */
export function campaignExitCode(status: CampaignStatus): ExitCode {
  if (status === 'held') return EXIT.OK;
  if (status === 'not-held') return EXIT.NOT_HELD;
  if (status === 'not-judged') return EXIT.UNJUDGED;
  return EXIT.FAILED;
}

/** One repeat's verdict as an exit code (`rig analyze`, `rig measure`). */
export const VERDICT_EXIT_CODE: Readonly<Record<VerdictState, ExitCode>> = {
  PASS: EXIT.OK,
  FAIL: EXIT.NOT_HELD,
  UNRECONCILED: EXIT.UNRECONCILED,
  'NOT JUDGED': EXIT.UNJUDGED,
  'CUT SHORT': EXIT.CUT_SHORT,
};

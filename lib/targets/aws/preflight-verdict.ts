// A preflight check's verdict, in the shape of Jepsen's checkers: each check says whether it holds,
// in one printed line, and when it does not, the fix. preflight.ts composes them and keeps every failure.
import { isNamed } from './errors';

export interface Verdict {
  check: string;
  ok: boolean;
  /** What was found, one line (printed as `preflight <check>: ok|REFUSED <line>`). */
  line: string;
  /** When refused: what to change, named by the spec's field or the AWS command that fixes it. */
  fix?: string;
}

export const pass = (check: string, line: string): Verdict => ({ check, ok: true, line });
export const refuse = (check: string, line: string, fix: string): Verdict => ({ check, ok: false, line, fix });

/** The printed form of a verdict. */
export function verdictLine(v: Verdict): string {
  return `preflight ${v.check}: ${v.ok ? 'ok' : 'REFUSED'}, ${v.line}${v.fix ? `; fix: ${v.fix}` : ''}`;
}

/**
 * A call that could not be made is a refusal too (preflight must not pass what it could not see),
 * naming the IAM action when AWS refused it.
 */
export function couldNotLook(check: string, action: string, err: unknown): Verdict {
  const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const denied = isNamed(err, 'AccessDenied', 'AccessDeniedException', 'UnauthorizedOperation');
  return refuse(
    check,
    `could not look (${action}: ${what.slice(0, 300)})`,
    denied ? `grant ${action} to the identity that runs rig (docs/aws-iam-policy.md)` : `make ${action} answer (credentials, region, network), then start again`,
  );
}

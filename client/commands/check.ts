// `rig check --target local|aws`: is anything of a rig left? Exit 0 clean, 1 dirty (each leftover
// listed with its campaign and age), 69 could not look (with the reason). The looking is
// lib/targets/<target>/clean-check.ts; this file only formats. `--target aws --reap` deletes the
// expired rig resources (lib/targets/aws/reap.ts): exit 0 nothing expired left, 1 something expired
// could not be reaped, 69 could not look. The codes are client/exit-codes.ts's.
import { campaignStates } from '../campaign-states';
import { defineCommand } from '../command';
import { UsageError } from '../parse-flags';
import { cleanCheckAws } from '../../lib/targets/aws/clean-check';
import { reapAws, type ReapEntry, type ReapResult } from '../../lib/targets/aws/reap';
import { cleanCheckLocal } from '../../lib/targets/local/clean-check';
import type { CleanCheckResult, Leftover } from '../../lib/targets/target';
import { EXIT, type ExitCode } from '../exit-codes';

/** `rig check`: 0 clean, 1 dirty, 69 could not look (the state unreadable, the endpoint not answering). */
export function cleanCheckExitCode(r: Pick<CleanCheckResult, 'status'>): ExitCode {
  return r.status === 'clean' ? EXIT.OK : r.status === 'dirty' ? EXIT.FAILED : EXIT.UNREACHABLE;
}

/** `rig check --reap`: 0 nothing expired left, 1 something expired could not be reaped, 69 could not look. */
export function reapExitCode(r: ReapResult): ExitCode {
  return r.status === 'could-not-look' ? EXIT.UNREACHABLE : r.notReaped.length ? EXIT.FAILED : EXIT.OK;
}

export const summary = 'look for rig resources left behind (exit 0 clean, 1 dirty, 69 could not look)';

const HELP = `usage: rig check --target local [--scope machine|state] [--json]
       rig check --target aws [--region R] [--json]
       rig check --target aws --reap [--region R] [--json]

Looks for anything a local rig left: open ledger entries, rig folders, live postmasters and services
carrying the rig's marker, ports the ledgers recorded that still answer.
  exit 0  clean
  exit 1  dirty: each leftover with its campaign and age
  exit 69 COULD NOT LOOK: the reason (state folder unreadable, ledger unparsable, ...)
  --scope machine  (default) every marked rig process on this machine counts
  --scope state    only processes whose rig folder is under this state folder (RIG_STATE_DIR)

--target aws looks in one region (--region, else AWS_REGION) for EC2 instances, security groups, RDS
instances and DB parameter groups tagged rig:campaign, each with its campaign, age and cost so far;
terminated instances are not leftovers. Credentials come from the SDK's standard chain;
RIG_AWS_ENDPOINT points it at an emulator. Any failed call (no credentials, access denied, an
endpoint that does not answer) is COULD NOT LOOK, exit 69.

--reap deletes the EXPIRED rig resources (tag rig:expires earlier than now) and nothing else: never
an unexpired one, or one without the rig:campaign tag. One without a readable rig:expires counts as
expired once its campaign's workflow is closed (asked of Temporal, connected as for every command;
while it runs, or when Temporal does not answer, it is skipped). Candidates
come from the Resource Groups Tagging API, each confirmed by the service's own describe (a hit that is
gone, or whose tags there differ, is skipped and reported); DB parameter and subnet groups named
rig-* by their own tags. Removed per campaign in dependency order (nodes, DB instance, its groups,
security groups). Prints each reaped resource with its campaign, age and expiry, each skipped one
with why.
  exit 0  nothing expired is left
  exit 1  something expired could not be reaped (each with why)
  exit 69 COULD NOT LOOK: any failed call while looking; nothing was deleted`;

export function formatAge(seconds: number | undefined): string {
  if (seconds === undefined) return 'age unknown';
  if (seconds < 120) return `${seconds}s old`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m old`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h old`;
  return `${Math.round(seconds / 86400)}d old`;
}

function line(l: Leftover): string {
  return `  ${l.kind.padEnd(14)} campaign ${l.campaignId ?? '?'}  ${formatAge(l.ageSeconds).padEnd(12)} ${l.detail}`;
}

export function formatCheck(r: CleanCheckResult): string {
  if (r.status === 'clean') return `CLEAN (looked at: ${r.looked.join('; ')})`;
  if (r.status === 'dirty') return [`DIRTY: ${r.leftovers.length} leftover(s)`, ...r.leftovers.map(line)].join('\n');
  return [`COULD NOT LOOK: ${r.reason}`, ...(r.leftovers.length ? ['found before stopping:', ...r.leftovers.map(line)] : [])].join('\n');
}

function reapLine(verb: string, e: ReapEntry): string {
  return `  ${verb.padEnd(10)} ${e.kind.padEnd(20)} campaign ${e.campaignId}  ${formatAge(e.ageSeconds).padEnd(12)} expires ${e.expiresAt ?? '(none)'}  ${e.id}${e.why ? `: ${e.why}` : ''}`;
}

export function formatReap(r: ReapResult): string {
  const head =
    r.status === 'could-not-look'
      ? `COULD NOT LOOK: ${r.reason}`
      : `${r.status === 'done' ? 'REAPED' : 'REAP INCOMPLETE'}: ${r.reaped.length} reaped, ${r.notReaped.length} expired not reaped, ${r.skipped.length} skipped, ${r.unexpired} unexpired left alone (looked at: ${r.looked.join('; ')})`;
  return [head, ...r.reaped.map((e) => reapLine('reaped', e)), ...r.notReaped.map((e) => reapLine('NOT REAPED', e)), ...r.skipped.map((e) => reapLine('skipped', e))].join('\n');
}

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: { target: { type: 'string' }, scope: { type: 'string', default: 'machine' }, region: { type: 'string' }, json: { type: 'boolean' }, reap: { type: 'boolean' } },
  async run({ values }) {
    if (values.target !== 'local' && values.target !== 'aws') {
      throw new UsageError(`--target ${values.target ?? '(missing)'} is not supported; use --target local or --target aws`);
    }
    if (values.reap && values.target !== 'aws') throw new UsageError('--reap is for --target aws (a local rig has no expiry tag: rig step teardown --campaign ID removes it)');
    if (values.reap) {
      // A resource whose expiry stamp never landed goes once its campaign is closed: Temporal says.
      const states = campaignStates();
      const r = await reapAws({ region: values.region, onProgress: (m) => console.error(m), campaignState: (id) => states.of(id) }).finally(() => states.close());
      if (values.json) console.log(JSON.stringify(r, null, 2));
      else (reapExitCode(r) === 0 ? console.log : console.error)(formatReap(r));
      return reapExitCode(r);
    }
    if (values.target === 'aws') return report(await cleanCheckAws({ region: values.region }), Boolean(values.json));
    if (values.scope !== 'machine' && values.scope !== 'state') {
      throw new UsageError(`--scope must be machine or state, not ${values.scope}`);
    }
    return report(await cleanCheckLocal({ scope: values.scope }), Boolean(values.json));
  },
});

function report(result: CleanCheckResult, json: boolean): number {
  if (json) console.log(JSON.stringify(result, null, 2));
  else (result.status === 'clean' ? console.log : console.error)(formatCheck(result));
  return cleanCheckExitCode(result);
}

// `rig check --target local|aws`: is anything of a rig left? Exit 0 clean, 1 dirty (each leftover
// listed with its campaign and age), 2 could not look (with the reason). The looking is
// lib/targets/<target>/clean-check.ts; this file only formats.
import { defineCommand } from '../command';
import { UsageError } from '../parse-flags';
import { cleanCheckAws } from '../../lib/targets/aws/clean-check';
import { cleanCheckLocal } from '../../lib/targets/local/clean-check';
import { cleanCheckExitCode, type CleanCheckResult, type Leftover } from '../../lib/targets/target';

export const summary = 'look for rig resources left behind (exit 0 clean, 1 dirty, 2 could not look)';

const HELP = `usage: rig check --target local [--scope machine|state] [--json]
       rig check --target aws [--region R] [--json]

Looks for anything a local rig left: open ledger entries, rig folders, live postmasters and services
carrying the rig's marker, ports the ledgers recorded that still answer.
  exit 0  clean
  exit 1  dirty: each leftover with its campaign and age
  exit 2  COULD NOT LOOK: the reason (state folder unreadable, ledger unparsable, ...)
  --scope machine  (default) every marked rig process on this machine counts
  --scope state    only processes whose rig folder is under this state folder (RIG_STATE_DIR)

--target aws looks in one region (--region, else AWS_REGION) for EC2 instances, security groups, RDS
instances and DB parameter groups tagged rig:campaign, each with its campaign, age and cost so far;
terminated instances are not leftovers. Credentials come from the SDK's standard chain;
RIG_AWS_ENDPOINT points it at an emulator. Any failed call (no credentials, access denied, an
endpoint that does not answer) is COULD NOT LOOK, exit 2.`;

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

export const { run } = defineCommand({
  summary,
  help: HELP,
  options: { target: { type: 'string' }, scope: { type: 'string', default: 'machine' }, region: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values }) {
    if (values.target !== 'local' && values.target !== 'aws') {
      throw new UsageError(`--target ${values.target ?? '(missing)'} is not supported; use --target local or --target aws`);
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

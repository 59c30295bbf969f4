// rig campaign start|list|watch|cancel|abort|logs|report
import { defineCommand, requiredPositional } from '../command';
import { UsageError } from '../parse-flags';
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { campaignIdOf } from '../../lib/protocol/campaign-id';
import { followLog } from '../../lib/evidence/follow';
import { resultsDir } from '../../lib/tools/paths';
import { abortUpdate, extendUpdate } from '../../workflows/messages';
import { watchCampaign } from '../campaign-watch';
import { connectClient, warnMissingSearchAttributes } from '../connect';
import { resultLines } from '../progress-view';
import { loadSpec } from '../spec-input';
import { sampleWarnings, watchdogLine } from '../../lib/protocol/plan';
import { dryRunLines, dryRunPlan, dryRunPreflight } from '../dry-run';
import { assertLocalMachineCanRun } from '../local-preflight';
import { assertAwsOfflineChecks } from '../aws-offline-preflight';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { configurationEnds, type ConfigurationEnd } from '../../lib/protocol/configuration-state';
import { assertWritable, writeSummary } from '../summary-export';
import { campaignExitCode, EXIT } from '../exit-codes';

export const summary = 'start|list|watch|cancel|abort|extend|logs|report: campaigns on Temporal';

/** Each action's usage and what it does: `rig campaign ACTION --help` prints its own. */
const ACTIONS: Record<string, string> = {
  start: `rig campaign start SPEC.json|--profile rehearsal|full [--id ID] [--wait [--summary-export FILE]]
                   [--dry-run [--json] [--preflight]] [--baseline ID] [--allow-unjudgeable]
    validates the spec before anything runs (each bad field named, exit 2); --wait follows the
    campaign to its end: exit 0 HELD, 99 NOT-HELD, 1 anything else (failed, dirty, cancelled,
    uncalibrated). An id already used is refused (exit 2).
    --baseline ID: the page compares this campaign with campaign ID (the spec's "baseline").
    --allow-unjudgeable: run a spec whose repeats are too short for the gate's sample minimum
    (refused otherwise, exit 2: every such repeat fails "samples", so it can never be HELD).
    --summary-export FILE (with --wait): the campaign's end as JSON (status, exit code, each
    configuration's passes, the report's path), as k6 --summary-export.
    --dry-run prints the plan and exits 0: the steps with their times (calibration included) and
    the total, the configurations with their gates, the variants and their order, the build
    measured, what would be made (names, zone, database parameters, $/hour) and the watchdog's
    deadline; it creates nothing and needs no Temporal server nor AWS. --json: the same as JSON.
    --dry-run --preflight (target aws) also asks the account, read-only, what provisioning would be
    refused (engine version, class and types in the zone, vCPU quota, RDS's service-linked role,
    default VPC): a verdict per check, exit 0 all passed, 1 any refused, each with its fix.`,
  list: `rig campaign list [--all] [-o json]
    campaigns with their execution status (RUN), step and RigStatus; --all includes closed ones;
    -o json: one JSON array (id, target, step, status, run, started), like temporal's -o json`,
  watch: `rig campaign watch ID [-o json]
    -o json: the progress on stderr, the campaign's result as JSON on stdout.
    follows the campaign's progress until it closes: exit 0 HELD, 99 NOT-HELD, 1 anything else`,
  cancel: `rig campaign cancel ID
    stop now: the current repeat is interrupted (and recorded as such), teardown runs`,
  abort: `rig campaign abort ID
    finish the current repeat, then tear down and report; prints when the repeat ends`,
  extend: `rig campaign extend ID --minutes N
    move the watchdog's deadline N minutes later (a kept rig, a long series); prints the new
    deadline, or why there is none (disarmed, already firing)`,
  logs: `rig campaign logs ID [--follow]
    the campaign's log from its evidence folder`,
  report: `rig campaign report ID
    the campaign's results page (same as rig report ID)`,
};

const HELP = `usage:
${Object.values(ACTIONS)
  .map((u) => `  ${u.split('\n')[0]}`)
  .join('\n')}

rig campaign ACTION --help says more about one. Needs a worker (rig worker) on task queue 'rig'.`;

export const TASK_QUEUE = 'rig';

/**
 * The --id given, refused when it is not usable as it is (its evidence folder, its rig would carry
 * another name): said with the id it would have become, never changed silently.
 */
export function givenCampaignId(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  const safe = campaignIdOf(id);
  if (safe !== id) throw new UsageError(`--id '${id}': an id is 1-80 letters, digits, ".", "_" and "-", starting with a letter or digit (it names the evidence folder and the rig); give --id ${safe}`);
  return id;
}

export function defaultCampaignId(name: string, now = new Date()): string {
  return `${name}-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`;
}

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  actionHelp: Object.fromEntries(Object.entries(ACTIONS).map(([k, u]) => [k, `usage: ${u}`])),
  options: {
    id: { type: 'string' },
    profile: { type: 'string' },
    wait: { type: 'boolean' },
    follow: { type: 'boolean', short: 'f' },
    all: { type: 'boolean' },
    minutes: { type: 'string' },
    'dry-run': { type: 'boolean' },
    preflight: { type: 'boolean' },
    baseline: { type: 'string' },
    json: { type: 'boolean' },
    output: { type: 'string', short: 'o' },
    'allow-unjudgeable': { type: 'boolean' },
    'summary-export': { type: 'string' },
  },
  positionals: true,
  run: ({ values, positionals }) => campaign(values, positionals),
});

async function campaign(
  values: {
    id?: string;
    profile?: string;
    wait?: boolean;
    follow?: boolean;
    all?: boolean;
    minutes?: string;
    'dry-run'?: boolean;
    preflight?: boolean;
    baseline?: string;
    json?: boolean;
    output?: string;
    'allow-unjudgeable'?: boolean;
    'summary-export'?: string;
  },
  positionals: string[],
): Promise<number> {
  const action = requiredPositional(positionals, 0, 'action', Object.keys(ACTIONS));
  const arg = positionals[1];
  if (values.output !== undefined && values.output !== 'json' && values.output !== 'text') throw new UsageError(`-o ${values.output}: give -o json or -o text`);
  const asJson = values.output === 'json';
  if (asJson && action !== 'list' && action !== 'watch') throw new UsageError(`-o json is for list and watch (start --dry-run takes --json)`);
  if (action === 'logs') return logs(arg, Boolean(values.follow));
  if (action === 'report') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const report = require('./report') as { run(argv: string[]): Promise<number> };
    return report.run(arg ? [arg] : []);
  }
  if (action === 'start') {
    const spec = loadSpec({ file: arg, profile: values.profile, baseline: values.baseline, allowUnjudgeable: values['allow-unjudgeable'], extra: positionals.slice(2) });
    if (values.preflight && !values['dry-run']) throw new UsageError('--preflight goes with --dry-run (a started aws campaign runs the preflight when it provisions)');
    if (values.json && !values['dry-run']) throw new UsageError('--json goes with --dry-run (the plan as JSON); a started campaign: --summary-export FILE with --wait');
    const givenId = givenCampaignId(values.id);
    const exportTo = values['summary-export'];
    if (exportTo !== undefined && !values.wait) throw new UsageError('--summary-export FILE goes with --wait (the summary is written when the campaign ends)');
    if (exportTo !== undefined) assertWritable(exportTo);
    if (values['dry-run']) {
      assertAwsOfflineChecks(spec);
      const id = campaignIdOf(givenId ?? defaultCampaignId(spec.name));
      if (values.json) console.log(JSON.stringify(dryRunPlan(id, spec, new Date(), values.preflight === true), null, 2));
      else dryRunLines(id, spec, new Date(), values.preflight === true).forEach((l) => console.log(l));
      return values.preflight ? dryRunPreflight(spec, values.json ? (l) => console.error(l) : undefined) : EXIT.OK;
    }
    const id = givenId ?? defaultCampaignId(spec.name);
    // The same refusals rig rehearse makes (a cluster folder PostgreSQL's user cannot reach, a seed
    // larger than the disk), before Temporal is asked: a campaign that would fail at provisioning is
    // never started.
    assertLocalMachineCanRun(spec, id);
    const rc = await connectClient();
    try {
      await warnMissingSearchAttributes(rc);
      try {
        // An id names one campaign's evidence, rig and ledger: never reused, refused before anything runs.
        await rc.client.workflow.start('benchCampaign', { taskQueue: TASK_QUEUE, workflowId: id, args: [spec], workflowIdReusePolicy: 'REJECT_DUPLICATE' });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        const d = await rc.client.workflow.getHandle(id).describe().catch(() => undefined);
        const status = d ? `${d.status.name.toLowerCase()}, started ${d.startTime.toISOString()}` : 'already used';
        console.error(`rig campaign start: the id ${id} is taken (${status}); give another --id (rig campaign list shows the ones in use)`);
        return EXIT.USAGE;
      }
      console.log(`started campaign ${id} on ${rc.env.address} (watch: rig campaign watch ${id})`);
      console.log(watchdogLine(spec));
      for (const w of sampleWarnings(spec)) console.error(w);
      if (!values.wait) return EXIT.OK;
      const result = await watchCampaign(rc.client, id);
      resultLines(result).forEach((l) => console.log(l));
      const code = campaignExitCode(result.status);
      if (exportTo !== undefined) writeSummary(exportTo, result, code);
      return code;
    } finally {
      await rc.close();
    }
  }
  // Every argument is checked before the cluster is reached: a usage error never waits on a connection.
  if (action !== 'list' && !arg) throw new UsageError(`${action} needs a campaign id: ${ACTIONS[action].split('\n')[0]} (rig campaign list shows them)`);
  const minutes = Number(values.minutes);
  if (action === 'extend' && (!values.minutes || !Number.isFinite(minutes) || minutes <= 0)) {
    throw new UsageError('extend: --minutes N is required, a number above 0 (e.g. --minutes 120)');
  }
  const rc = await connectClient();
  try {
    switch (action) {
      case 'list':
        return await list(rc.client, Boolean(values.all), asJson);
      case 'watch': {
        const result = await watchCampaign(rc.client, arg, asJson ? process.stderr : process.stdout);
        // The result as the workflow returned it, each configuration with what ran and its state.
        if (asJson) console.log(JSON.stringify(watchJson(result), null, 2));
        else resultLines(result).forEach((l) => console.log(l));
        return campaignExitCode(result.status);
      }
      case 'cancel':
        await rc.client.workflow.getHandle(arg).cancel();
        console.log(`cancellation requested for ${arg}: the current step stops, teardown runs`);
        return 0;
      case 'abort':
        try {
          console.log(`${arg}: ${await rc.client.workflow.getHandle(arg).executeUpdate(abortUpdate, { args: ['rig campaign abort'] })}`);
          return 0;
        } catch (err) {
          if (!(err instanceof WorkflowUpdateFailedError)) throw err;
          console.error(`rig campaign abort: ${arg}: ${err.cause?.message ?? err.message}`);
          return 1;
        }
      case 'extend': {
        try {
          const wd = await rc.client.workflow.getHandle(`${arg}.watchdog`).executeUpdate(extendUpdate, { args: [minutes] });
          console.log(`${arg}.watchdog: deadline now ${wd.deadline} (${wd.state})`);
          return 0;
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) {
            console.error(`rig campaign extend: no watchdog ${arg}.watchdog on ${rc.env.address} (is ${arg} a campaign id? rig campaign list)`);
            return 1;
          }
          if (!(err instanceof WorkflowUpdateFailedError)) throw err;
          console.error(`rig campaign extend: ${arg}.watchdog: ${err.cause?.message ?? err.message}`);
          return 1;
        }
      }
      default:
        throw new UsageError(`unknown action '${action}'`);
    }
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      console.error(`rig campaign: no campaign '${arg}' on ${rc.env.address} (rig campaign list shows them)`);
      return 1;
    }
    throw err;
  } finally {
    await rc.close();
  }
}

/** `rig campaign watch -o json`: the campaign's result, each configuration with `ran` and `state` (lib/protocol/configuration-state.ts). */
export function watchJson(result: CampaignResult): CampaignResult & { configurations: ConfigurationEnd[] } {
  return { ...result, configurations: configurationEnds(result) };
}

async function list(client: import('@temporalio/client').Client, all: boolean, asJson = false): Promise<number> {
  // STATUS is the campaign's own (RigStatus: held, not-held, dirty, teardown-failing while a teardown retries, teardown-failed, ...); RUN is the
  // workflow's execution status, so a terminated campaign is never read as running.
  const rows: string[][] = [['ID', 'TARGET', 'STEP', 'STATUS', 'RUN', 'STARTED']];
  const query = `WorkflowType = 'benchCampaign'${all ? '' : ` AND StartTime > '${new Date(Date.now() - 30 * 86400_000).toISOString()}'`}`;
  for await (const wf of client.workflow.list({ query })) {
    const sa = wf.searchAttributes ?? {};
    const first = (k: string) => (Array.isArray(sa[k]) ? String((sa[k] as unknown[])[0] ?? '') : '');
    const run = wf.status.name.toLowerCase();
    rows.push([wf.workflowId, first('RigTarget') || '-', first('RigStep') || '-', first('RigStatus') || run, run, wf.startTime.toISOString()]);
  }
  if (asJson) {
    const keys = ['id', 'target', 'step', 'status', 'run', 'started'] as const;
    console.log(JSON.stringify(rows.slice(1).map((r) => Object.fromEntries(keys.map((k, i) => [k, r[i] === '-' ? null : r[i]]))), null, 2));
    return EXIT.OK;
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
  if (rows.length === 1) console.log('(no campaigns in the last 30 days; --all for older)');
  return 0;
}

async function logs(id: string | undefined, follow: boolean): Promise<number> {
  if (!id) throw new UsageError('logs needs a campaign id: rig campaign logs ID [--follow]');
  const dir = path.join(resultsDir(), campaignIdOf(id));
  if (!follow && !fs.existsSync(path.join(dir, 'campaign.log'))) {
    console.error(`no log at ${dir}/campaign.log (is RIG_RESULTS the folder the worker writes to?)`);
    return 1;
  }
  // Follow until the campaign has written its result (or Ctrl-C).
  const stop = new AbortController();
  const done = setInterval(() => {
    if (fs.existsSync(path.join(dir, 'result.json'))) setTimeout(() => stop.abort(), 1000);
  }, 500);
  process.once('SIGINT', () => stop.abort());
  try {
    await followLog(dir, (line) => console.log(line), stop.signal, { follow });
  } finally {
    clearInterval(done);
  }
  return 0;
}

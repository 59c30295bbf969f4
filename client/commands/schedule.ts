// rig schedule create|list|delete|trigger: weekly regression runs through Temporal Schedules. Each
// scheduled run is a benchCampaign with the same spec, whose report step compares it with the newest
// earlier held run of the schedule (activities/baseline-choice.ts) and sets RigRegressed.
import { defineCommand, requiredPositional } from '../command';
import { UsageError } from '../parse-flags';
import { ScheduleNotFoundError, ScheduleOverlapPolicy, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { CampaignSpec } from '../../lib/protocol/spec';
import { connectClient, warnMissingSearchAttributes } from '../connect';
import { loadSpec } from '../spec-input';
import { TASK_QUEUE } from './campaign';

export const summary = 'create|list|delete|trigger: run a campaign on a schedule (weekly regression)';

const HELP = `usage:
  rig schedule create ID (SPEC.json | --profile P) (--cron "0 3 * * 1" | --every 7d) [--paused] [--baseline ID] [--allow-unjudgeable] [--host H] [--pause-on-failure]
  rig schedule list [-o json]
  rig schedule trigger ID      start one run now (exit 1, saying so, when a run still going makes the
                               schedule skip it)
  rig schedule delete ID

Each run is a campaign with id <ID>-<scheduled time>. Overlapping runs are skipped (a campaign owns
its rig); a run missed while Temporal was down is caught up within a day. A run times out at twice
its watchdog (its watchdog then tears the rig down), so a stuck run cannot skip every later one.
list shows each schedule's recent runs with their status and their verdict against their baseline,
and how many runs were skipped.

  --host H             every run measures on host H (the spec's "host": its first step is taken from
                       rig-host-H, so no other host's worker claims it)
  --pause-on-failure   a run that fails (a refusal, a step that gave up, a run that timed out) pauses
                       the schedule until \`temporal schedule toggle --schedule-id ID --unpause\`; a run
                       that did not hold is a result, not a failure, and does not pause it

Each run compares itself with the newest earlier run of the same schedule that held, ran on the same
host (its evidence is beside this one) and ran the same spec (its hash); the page's "Compared with the
baseline" names it and the runs passed over. Or with the one --baseline (the spec's "baseline") names.
A run that regressed is found with RigRegressed = 'yes'.`;

/** `rig schedule ACTION --help`: that action's usage line and the notes. */
const SCHEDULE_ACTIONS = ['create', 'list', 'trigger', 'delete'] as const;
const SCHEDULE_HELP: Record<string, string> = Object.fromEntries(
  SCHEDULE_ACTIONS.map((a) => [a, `usage: ${HELP.split('\n').find((l) => l.startsWith(`  rig schedule ${a}`))!.trim()}\n\n${HELP.split('\n').slice(6).join('\n')}`]),
);

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  actionHelp: SCHEDULE_HELP,
  options: {
    profile: { type: 'string' },
    cron: { type: 'string' },
    every: { type: 'string' },
    paused: { type: 'boolean' },
    baseline: { type: 'string' },
    output: { type: 'string', short: 'o' },
    'allow-unjudgeable': { type: 'boolean' },
    host: { type: 'string' },
    'pause-on-failure': { type: 'boolean' },
  },
  positionals: true,
  async run({ values, positionals }) {
    const action = requiredPositional(positionals, 0, 'action', SCHEDULE_ACTIONS);
    if (values.output !== undefined && values.output !== 'json' && values.output !== 'text') throw new UsageError(`-o ${values.output}: give -o json or -o text`);
    const asJson = values.output === 'json';
    if (asJson && action !== 'list') throw new UsageError('-o json is for list');
    const [, id, file] = positionals;
    if (action !== 'list' && !id) throw new UsageError(`${action} needs a schedule id: rig schedule ${action} ID`);
    // Validate everything before touching the cluster.
    const spec = action === 'create' ? loadSpec({ file, profile: values.profile, baseline: values.baseline, host: values.host, allowUnjudgeable: values['allow-unjudgeable'], extra: positionals.slice(3) }) : undefined;
    if (action === 'create' && Boolean(values.cron) === Boolean(values.every)) {
      throw new UsageError('create needs exactly one of --cron "MIN HOUR DOM MON DOW" or --every DURATION (e.g. 7d)');
    }
    const rc = await connectClient();
    try {
      const schedules = rc.client.schedule;
      switch (action) {
        case 'create': {
          await warnMissingSearchAttributes(rc);
          await schedules.create({
            scheduleId: id,
            spec: values.cron ? { cronExpressions: [values.cron] } : { intervals: [{ every: values.every as `${number}d` }] },
            action: {
              type: 'startWorkflow',
              workflowType: 'benchCampaign',
              taskQueue: TASK_QUEUE,
              workflowId: id,
              args: [spec],
              // With overlap SKIP a run that never ends skips every later one: a backstop, well past the plan.
              workflowRunTimeout: `${runTimeoutMinutes(spec!)} minutes`,
            },
            policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day', pauseOnFailure: Boolean(values['pause-on-failure']) },
            state: { paused: Boolean(values.paused), note: `rig schedule create ${id}` },
          });
          const desc = await schedules.getHandle(id).describe();
          const next = desc.info.nextActionTimes[0];
          const pinned = spec!.host ? `; every run on host ${spec!.host}` : '';
          const pauses = values['pause-on-failure'] ? '; a failed run pauses it' : '';
          console.log(`schedule ${id} created${next ? `; next run ${next.toISOString()}` : ''}; each run times out after ${runTimeoutMinutes(spec!)} min${pinned}${pauses}`);
          return 0;
        }
        case 'list': {
          const all: ScheduleRow[] = [];
          for await (const s of schedules.list()) {
            const next = s.info.nextActionTimes[0];
            const d = await schedules.getHandle(s.scheduleId).describe();
            const runs = await Promise.all(d.info.recentActions.map((a) => runStatus(rc.client, a.action.workflow.workflowId)));
            const row: ScheduleRow = { id: s.scheduleId, state: s.state.paused ? 'paused' : 'active', next: next ? next.toISOString() : null, skippedOverlap: d.info.numActionsSkippedOverlap, missedCatchup: d.info.numActionsMissedCatchupWindow, runs };
            if (asJson) {
              all.push(row);
              continue;
            }
            const skipped = `skipped ${row.skippedOverlap} (a run still going), missed ${row.missedCatchup}`;
            console.log(`${row.id}  ${row.state}  next ${row.next ?? '-'}  ${skipped}`);
            for (const r of runs) console.log(`  ${runLine(r)}`);
          }
          if (asJson) console.log(JSON.stringify(all, null, 2));
          return 0;
        }
        case 'trigger':
          return await trigger(rc.client, id);
        case 'delete':
          await schedules.getHandle(id).delete();
          console.log(`schedule ${id} deleted (campaigns it started are kept)`);
          return 0;
        default:
          throw new UsageError(`unknown action '${action}'`);
      }
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) {
        console.error(`rig schedule: no schedule '${id}' on ${rc.env.address}`);
        return 1;
      }
      throw err;
    } finally {
      await rc.close();
    }
  },
});

/**
 * Triggers one run and says what the schedule did with it. The server queues a manual trigger like a
 * scheduled action and applies the overlap policy to it (service/worker/scheduler/buffer.go,
 * ProcessBuffer): under SKIP, with a run still going, it is dropped and counted in
 * numActionsSkippedOverlap. So: the counts before, the trigger, then the schedule's description until
 * either a new action started (its campaign id) or the skip count rose (dropped: exit 1).
 */
async function trigger(client: Client, id: string, waitMs = Number(process.env.RIG_SCHEDULE_TRIGGER_WAIT_MS ?? 15_000)): Promise<number> {
  const handle = client.schedule.getHandle(id);
  const before = await handle.describe();
  const taken = before.info.numActionsTaken;
  const skipped = before.info.numActionsSkippedOverlap;
  await handle.trigger(ScheduleOverlapPolicy.SKIP);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const d = await handle.describe();
    if (d.info.numActionsTaken > taken) {
      const started = d.info.recentActions.at(-1)?.action.workflow.workflowId;
      console.log(`schedule ${id} triggered: started campaign ${started ?? '(id not listed yet)'}`);
      return 0;
    }
    if (d.info.numActionsSkippedOverlap > skipped) {
      const going = d.info.runningActions.map((a) => a.workflow.workflowId).join(', ') || 'a run still going';
      console.error(`rig schedule: schedule ${id} was triggered, but its overlap policy (SKIP) dropped the run: ${going} is still running; trigger it again once that run has ended`);
      return 1;
    }
    if (Date.now() >= deadline) {
      console.log(`schedule ${id} triggered; the schedule has not acted on it within ${waitMs / 1000} s (rig schedule list shows its runs)`);
      return 0;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A scheduled run's backstop: twice its watchdog (itself at least the plan plus its margin). */
export function runTimeoutMinutes(spec: CampaignSpec): number {
  return 2 * spec.watchdogMinutes;
}

interface RunRow {
  id: string;
  /** The campaign's own status (RigStatus), null when it has none yet. */
  status: string | null;
  /** The workflow's execution status; null when the server no longer has it (retention). */
  run: string | null;
  started: string | null;
  /** The page's verdict against its baseline, once the report step compared it with one. */
  regressed: boolean | null;
}

interface ScheduleRow {
  id: string;
  state: 'paused' | 'active';
  next: string | null;
  skippedOverlap: number;
  missedCatchup: number;
  runs: RunRow[];
}

/** One recent run: its id, the campaign's own status (RigStatus) and the execution status. */
async function runStatus(client: Client, workflowId: string): Promise<RunRow> {
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    const first = (v: unknown) => (Array.isArray(v) && v.length ? String(v[0]) : undefined);
    const regressed = first(d.searchAttributes?.RigRegressed);
    return { id: workflowId, status: first(d.searchAttributes?.RigStatus) ?? null, run: d.status.name.toLowerCase(), started: d.startTime.toISOString(), regressed: regressed === 'yes' ? true : regressed === 'no' ? false : null };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { id: workflowId, status: null, run: null, started: null, regressed: null };
    throw err;
  }
}

function runLine(r: RunRow): string {
  if (r.run === null) return `${r.id}  (gone from the server: retention)`;
  const verdict = r.regressed === true ? '  REGRESSED against its baseline' : r.regressed === false ? '  no regression against its baseline' : '';
  return `${r.id}  ${r.status ?? '-'}  ${r.run}  started ${r.started}${verdict}`;
}

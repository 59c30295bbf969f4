// Which campaign the report compares this one with (issue 13, weekly runs that find their baseline):
// - the spec's `baseline` pins one by hand (a campaign id, or a workflow id, which is mapped to it);
// - otherwise a run started by a Temporal Schedule looks through visibility for the newest earlier run
//   of the same schedule whose campaign held (TemporalScheduledById, which Temporal sets on every run a
//   schedule starts, and the rig's own RigStatus), and says so when there is none. A schedule whose
//   spec does not calibrate has runs that are at best 'uncalibrated' (every gate held, the instrument
//   unchecked): there, that is the status looked for, like with like, and the page says so.
// A campaign neither pinned nor scheduled is compared with nothing (null). The choice is written into
// the evidence (baseline.json) before the folder is sealed, so `rig report` later makes the same one.
import type { Client } from '@temporalio/client';
import type { BaselineChoice } from '../lib/evidence/records';
import { campaignIdOf } from '../lib/protocol/campaign-id';
import { activityWorkflowId, workerClient } from './context';

/** A keyword search attribute's first value, from a describe() or list() answer. */
function keyword(attrs: Record<string, unknown> | undefined, name: string): string | undefined {
  const v = attrs?.[name];
  return Array.isArray(v) && v.length ? String(v[0]) : undefined;
}

/** Visibility query strings quote with single quotes; ids never carry one, but an odd one is refused. */
function quoted(s: string): string {
  if (s.includes("'")) throw new Error(`cannot search for an id with a quote in it: ${s}`);
  return `'${s}'`;
}

/** The best status a run of this spec can have: what a baseline must have reached. */
export type HeldStatus = 'held' | 'uncalibrated';

export async function chooseBaseline(pinned: string | undefined, held: HeldStatus = 'held'): Promise<BaselineChoice | null> {
  if (pinned) return { how: 'pinned', baseline_id: campaignIdOf(pinned), why: `pinned by the spec's baseline: ${pinned}` };
  const client = workerClient();
  const own = activityWorkflowId();
  if (!client || !own) return null; // in-process (`rig step`): no workflow, no schedule
  return findScheduledBaseline(client, own, held);
}

/** The newest earlier held run of the schedule that started `workflowId`, or why there is none; null when no schedule started it. */
export async function findScheduledBaseline(client: Client, workflowId: string, held: HeldStatus = 'held'): Promise<BaselineChoice | null> {
  const self = await client.workflow.getHandle(workflowId).describe();
  const scheduleId = keyword(self.searchAttributes as Record<string, unknown>, 'TemporalScheduledById');
  if (!scheduleId) return null;
  const query = `WorkflowType = 'benchCampaign' AND TemporalScheduledById = ${quoted(scheduleId)} AND RigStatus = '${held}' AND ExecutionStatus = 'Completed'`;
  let best: { workflowId: string; startTime: Date } | undefined;
  for await (const wf of client.workflow.list({ query })) {
    if (wf.workflowId === workflowId || wf.startTime >= self.startTime) continue;
    if (!best || wf.startTime > best.startTime) best = { workflowId: wf.workflowId, startTime: wf.startTime };
  }
  const status = held === 'held' ? 'held' : `held uncalibrated (its spec does not calibrate)`;
  if (!best) {
    return { how: 'schedule', schedule_id: scheduleId, baseline_id: null, why: `no earlier run of schedule ${scheduleId} ${status}: nothing to compare with yet` };
  }
  return {
    how: 'schedule',
    schedule_id: scheduleId,
    baseline_id: campaignIdOf(best.workflowId),
    baseline_workflow_id: best.workflowId,
    why: `the newest earlier run of schedule ${scheduleId} that ${status} (started ${best.startTime.toISOString()})`,
  };
}

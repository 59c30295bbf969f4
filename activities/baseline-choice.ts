// Which campaign the report compares this one with (issue 13, weekly runs that find their baseline):
// - the spec's `baseline` pins one by hand (a campaign id, or a workflow id, which is mapped to it);
// - otherwise a run started by a Temporal Schedule looks through visibility for the newest earlier run
//   of the same schedule whose campaign held (TemporalScheduledById, which Temporal sets on every run a
//   schedule starts, and the rig's own RigStatus), and says so when there is none. A schedule whose
//   spec does not calibrate has runs that are at best 'uncalibrated' (every gate held, the instrument
//   unchecked): there, that is the status looked for, like with like, and the page says so.
// A scheduled run's baseline must also have run here (its evidence folder beside this one: the page is
// built from both folders, and a run another host claimed has its evidence on that host's disk) and
// the same spec (lib/evidence/spec-hash.ts): runs passed over for either are counted in the choice's why.
// A campaign neither pinned nor scheduled is compared with nothing (null). The choice is written into
// the evidence (baseline.json) before the folder is sealed, so `rig report` later makes the same one.
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { SPEC_FILE } from '../lib/evidence/layout';
import { specHash } from '../lib/evidence/spec-hash';
import type { BaselineChoice } from '../lib/evidence/records';
import { campaignIdOf } from '../lib/protocol/campaign-id';
import { activityWorkflowId, heartbeat, workerClient } from './context';
import { throughFailover } from './temporal-retry';

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

/** Where a candidate must be to be a baseline: this host's results folder, with this spec's hash. */
export interface BaselineHere {
  resultsDir: string;
  specHash: string;
}

/** The hash of the spec in a campaign folder's spec.json, or undefined when the folder is not there. */
export function folderSpecHash(dir: string): string | undefined {
  try {
    return specHash(JSON.parse(fs.readFileSync(path.join(dir, SPEC_FILE), 'utf8')) as Record<string, unknown>);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export interface Candidate {
  workflowId: string;
  startTime: Date;
}

/**
 * The newest candidate that ran here with the same spec (any, without `here`), and what was passed
 * over on the way ('' for nothing): a run without a folder in here.resultsDir ran on another host.
 */
export function newestHere(candidates: readonly Candidate[], here: BaselineHere | undefined): { best?: Candidate; passedOver: string } {
  const newestFirst = [...candidates].sort((a, b) => b.startTime.getTime() - a.startTime.getTime());
  let elsewhere = 0;
  let otherSpec = 0;
  const best = newestFirst.find((c) => {
    if (!here) return true;
    const hash = folderSpecHash(path.join(here.resultsDir, campaignIdOf(c.workflowId)));
    if (hash === undefined) elsewhere++;
    else if (hash !== here.specHash) otherSpec++;
    return hash === here.specHash;
  });
  const passedOver = [elsewhere ? `${elsewhere} that ran on another host (no evidence folder here)` : '', otherSpec ? `${otherSpec} with another spec` : ''].filter(Boolean).join(' and ');
  return { ...(best ? { best } : {}), passedOver };
}

export async function chooseBaseline(pinned: string | undefined, held: HeldStatus = 'held', here?: BaselineHere): Promise<BaselineChoice | null> {
  if (pinned) return { how: 'pinned', baseline_id: campaignIdOf(pinned), why: `pinned by the spec's baseline: ${pinned}` };
  const client = workerClient();
  const own = activityWorkflowId();
  if (!client || !own) return null; // in-process (`rig step`): no workflow, no schedule
  // Through a failover (activities/temporal-retry.ts): a cluster restarting is not a reason to compare with nothing.
  return throughFailover('the baseline search', () => findScheduledBaseline(client, own, held, here), { onRetry: (line) => heartbeat(line) });
}

/** The newest earlier held run of the schedule that started `workflowId`, or why there is none; null when no schedule started it. */
export async function findScheduledBaseline(client: Client, workflowId: string, held: HeldStatus = 'held', here?: BaselineHere): Promise<BaselineChoice | null> {
  const self = await client.workflow.getHandle(workflowId).describe();
  const scheduleId = keyword(self.searchAttributes as Record<string, unknown>, 'TemporalScheduledById');
  if (!scheduleId) return null;
  const query = `WorkflowType = 'benchCampaign' AND TemporalScheduledById = ${quoted(scheduleId)} AND RigStatus = '${held}' AND ExecutionStatus = 'Completed'`;
  const earlier: Array<{ workflowId: string; startTime: Date }> = [];
  for await (const wf of client.workflow.list({ query })) {
    if (wf.workflowId === workflowId || wf.startTime >= self.startTime) continue;
    earlier.push({ workflowId: wf.workflowId, startTime: wf.startTime });
  }
  const { best, passedOver } = newestHere(earlier, here);
  const status = held === 'held' ? 'held' : `held uncalibrated (its spec does not calibrate)`;
  if (!best) {
    const why = passedOver
      ? `no earlier run of schedule ${scheduleId} ${status} on this host with this spec (passed over: ${passedOver}): nothing to compare with yet`
      : `no earlier run of schedule ${scheduleId} ${status}: nothing to compare with yet`;
    return { how: 'schedule', schedule_id: scheduleId, baseline_id: null, why };
  }
  return {
    how: 'schedule',
    schedule_id: scheduleId,
    baseline_id: campaignIdOf(best.workflowId),
    baseline_workflow_id: best.workflowId,
    why: `the newest earlier run of schedule ${scheduleId} that ${status} (started ${best.startTime.toISOString()})${passedOver ? `; passed over: ${passedOver}` : ''}`,
  };
}
